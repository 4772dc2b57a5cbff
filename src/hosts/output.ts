// Bounded capture of a command's output: keeps the tail, so a chatty command cannot eat the bot's memory.
export class TailBuffer {
  private chunks: Buffer[] = [];
  private bytes = 0;
  dropped = 0;

  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.max && this.chunks.length > 1) {
      const first = this.chunks.shift()!;
      this.bytes -= first.length;
      this.dropped += first.length;
    }
  }

  toString(): string {
    let buf = Buffer.concat(this.chunks);
    if (buf.length > this.max) {
      this.dropped += buf.length - this.max;
      buf = buf.subarray(buf.length - this.max);
    }
    return buf.toString('utf8');
  }
}

/** An async iterable fed by pushes, for streaming chunks out of event emitters. */
export class ChunkQueue implements AsyncIterable<Buffer> {
  private items: Buffer[] = [];
  private ended = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;

  push(b: Buffer): void {
    this.items.push(b);
    this.wake?.();
  }

  end(err?: Error): void {
    this.ended = true;
    this.error = err;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      const next = this.items.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.ended) {
        if (this.error) throw this.error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }
}
