// Counts concurrent channels on one SSH connection: OpenSSH allows 10 sessions per connection (MaxSessions), and
// we keep headroom below that.
export class Semaphore {
  private waiting: Array<() => void> = [];
  private used = 0;

  constructor(readonly limit: number) {}

  /**
   * Resolves with a release function once a slot is free. With `timeoutMs`, gives up after that long and resolves
   * with undefined (the caller's own timeout must cover its wait for a slot, not start after it).
   */
  async acquire(timeoutMs?: number): Promise<(() => void) | undefined> {
    if (this.used >= this.limit) {
      const got = await new Promise<boolean>((resolve) => {
        const wake = () => {
          if (timer) clearTimeout(timer);
          resolve(true);
        };
        const timer =
          timeoutMs === undefined
            ? undefined
            : setTimeout(() => {
                this.waiting = this.waiting.filter((w) => w !== wake);
                resolve(false);
              }, timeoutMs);
        this.waiting.push(wake);
      });
      if (!got) return undefined;
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
