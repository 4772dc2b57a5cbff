// Counts concurrent channels on one SSH connection: OpenSSH allows 10 sessions per connection (MaxSessions), and
// we keep headroom below that.
export class Semaphore {
  private waiting: Array<() => void> = [];
  private used = 0;

  constructor(private readonly limit: number) {}

  async acquire(): Promise<() => void> {
    if (this.used >= this.limit) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.used += 1;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.used -= 1;
    };
  }

  get inUse(): number {
    return this.used;
  }
}
