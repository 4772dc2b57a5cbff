// The one single-flight: probe's nvidia-smi and process-state reads, the Slack group directory, the findings checks
// and check_env captures all share calls through it.
import { describe, expect, it } from 'vitest';
import { singleFlight } from '../src/single-flight.ts';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('singleFlight', () => {
  it('concurrent reads of one key share one call; other keys call their own', async () => {
    const flight = singleFlight<number>();
    const d = deferred<number>();
    let calls = 0;
    const read = () => {
      calls++;
      return d.promise;
    };
    const a = flight('k', read);
    const b = flight('k', read);
    expect(flight.pending('k')).toBeDefined();
    expect(flight.pending('other')).toBeUndefined();
    const c = flight('other', async () => 7);
    d.resolve(1);
    expect(await Promise.all([a, b, c])).toEqual([1, 1, 7]);
    expect(calls).toBe(1);
    expect(flight.pending('k')).toBeUndefined();
    // Without a ttl, a finished read is not kept.
    expect(await flight('k', async () => 2)).toBe(2);
  });

  it('keeps a result for ttlMs by the injected clock, and never keeps a failure', async () => {
    let t = 0;
    const flight = singleFlight<string>({ ttlMs: 1000, clock: { now: () => t, sleep: async () => {} } });
    expect(await flight('k', async () => 'first')).toBe('first');
    t = 999;
    expect(await flight('k', async () => 'second')).toBe('first');
    t = 1000;
    await expect(flight('k', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await flight('k', async () => 'third')).toBe('third');
    // A kept result can be dropped: the next call reads again (host flags drop the shipped-table fallback so).
    expect(await flight('k', async () => 'fourth')).toBe('third');
    flight.forget('k');
    expect(await flight('k', async () => 'fifth')).toBe('fifth');
  });
});
