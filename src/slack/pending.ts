// Confirmations waiting for a click ("replace the running server?"). A button carries only the opaque id; what it
// confirms stays here, for as long as the command's response_url lives (30 minutes), and can be used once.
import { randomBytes } from 'node:crypto';
import type { Identity } from '../runtime/define.ts';

export interface Pending {
  text: string;
  identity: Identity;
  responseUrl?: string;
  host: string;
  /** The attempt the confirmation named; if another one runs by the time of the click, we ask again. */
  replaces: number;
}

export interface PendingStore {
  add(p: Pending): string;
  /** The confirmation, once; undefined when unknown, used or expired. */
  take(id: string): Pending | undefined;
}

export function createPendingStore(opts: { ttlMs?: number; now?: () => number } = {}): PendingStore {
  const ttl = opts.ttlMs ?? 30 * 60_000;
  const now = opts.now ?? Date.now;
  const items = new Map<string, { at: number; p: Pending }>();
  const sweep = () => {
    for (const [k, v] of items) if (now() - v.at > ttl) items.delete(k);
  };
  return {
    add(p) {
      sweep();
      const id = randomBytes(12).toString('base64url');
      items.set(id, { at: now(), p });
      return id;
    },
    take(id) {
      sweep();
      const hit = items.get(id);
      items.delete(id);
      return hit?.p;
    },
  };
}
