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

/** Flow control for the source of a ChunkQueue: a readable stream's pause() and resume(). */
export interface Pausable {
  pause(): unknown;
  resume(): unknown;
}

/**
 * An async iterable fed by pushes, for streaming chunks out of event emitters. Bounded: past `highWater` queued
 * bytes the source is paused until the reader has taken them, so a log that grows faster than the classifier reads
 * it waits in the pipe or on the host instead of in the bot's memory. Over SSH a paused channel still takes in what
 * its flow-control window allows: ssh2 (1.17, lib/Channel.js) buffers up to its fixed 2 MiB window on top of its
 * 2 MiB readable high-water mark, so a stream whose reader is behind holds about 5 MiB in all, then the host waits.
 */
export class ChunkQueue implements AsyncIterable<Buffer> {
  private items: Buffer[] = [];
  private bytes = 0;
  private paused = false;
  private ended = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;
  private source: Pausable | undefined;

  constructor(private readonly highWater = 1 << 20) {}

  /**
   * Reads from `source`, pausing it while the queue is full. `own`: each chunk is copied as it arrives, for a source
   * whose chunks are views into a larger buffer of its own (ssh2's), so that a queued chunk holds its bytes and no more.
   */
  from(source: Pausable & { on(event: 'data', f: (d: Buffer) => void): unknown }, own = false): void {
    this.source = source;
    source.on('data', (d: Buffer) => this.push(own ? Buffer.from(d) : d));
  }

  /** Bytes pushed and not yet read. */
  get queued(): number {
    return this.bytes;
  }

  /** Whether the source is paused now (the queue is full). */
  get sourcePaused(): boolean {
    return this.paused;
  }

  push(b: Buffer): void {
    this.items.push(b);
    this.bytes += b.length;
    if (this.source && !this.paused && this.bytes > this.highWater) {
      this.paused = true;
      this.source.pause();
    }
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
        this.bytes -= next.length;
        if (this.paused && this.bytes <= this.highWater / 2) {
          this.paused = false;
          this.source?.resume();
        }
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
