// Concurrent identical reads share one call (fifty people probing at once cost one nvidia-smi; a burst of clicks
// costs one Slack group lookup; searches at once share one check of a findings file), and with `ttlMs` a result
// stays fresh that long. A failure is not kept: the next call asks again.
import { type Clock, systemClock } from './clock.ts';

export interface SingleFlight<T> {
  (key: string, read: () => Promise<T>): Promise<T>;
  /** The read under way for `key`, if one is. */
  pending(key: string): Promise<T> | undefined;
  /** Drops what is kept for `key` (a result that should not be reused after all): the next call reads again. */
  forget(key: string): void;
}

export function singleFlight<T>(opts: { ttlMs?: number; clock?: Clock } = {}): SingleFlight<T> {
  const ttlMs = opts.ttlMs ?? 0;
  const clock = opts.clock ?? systemClock;
  const entries = new Map<string, { at: number; value?: T; pending?: Promise<T> }>();
  const flight = (key: string, read: () => Promise<T>): Promise<T> => {
    const e = entries.get(key);
    if (e?.pending) return e.pending;
    if (e && e.value !== undefined && clock.now() - e.at < ttlMs) return Promise.resolve(e.value);
    const pending = read().then(
      (value) => {
        entries.set(key, { at: clock.now(), value });
        return value;
      },
      (err) => {
        entries.delete(key);
        throw err;
      },
    );
    entries.set(key, { at: clock.now(), pending });
    return pending;
  };
  return Object.assign(flight, {
    pending: (key: string) => entries.get(key)?.pending,
    forget: (key: string) => {
      entries.delete(key);
    },
  });
}
