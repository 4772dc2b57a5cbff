// Slack user group membership (usergroups.users.list), cached so a burst of commands and clicks costs one lookup
// per group, and a Slack hiccup falls back to the last answer rather than locking everyone out.
import type { Clock } from '../clock.ts';

export interface GroupSource {
  /** The user IDs in one user group. */
  list(groupId: string): Promise<string[]>;
}

export interface GroupDirectory {
  members(groupId: string): Promise<ReadonlySet<string>>;
}

export function createGroupDirectory(source: GroupSource, opts: { ttlMs: number; clock: Clock }): GroupDirectory {
  const cache = new Map<string, { at: number; users: ReadonlySet<string> }>();
  const inFlight = new Map<string, Promise<ReadonlySet<string>>>();
  return {
    members(groupId) {
      const hit = cache.get(groupId);
      if (hit && opts.clock.now() - hit.at < opts.ttlMs) return Promise.resolve(hit.users);
      let p = inFlight.get(groupId);
      if (!p) {
        p = source
          .list(groupId)
          .then((users) => {
            const set = new Set(users);
            cache.set(groupId, { at: opts.clock.now(), users: set });
            return set as ReadonlySet<string>;
          })
          .catch((e: unknown) => {
            // Stale is better than nothing while Slack is unwell; no answer at all refuses (the caller denies).
            if (hit) return hit.users;
            throw e;
          })
          .finally(() => inFlight.delete(groupId));
        inFlight.set(groupId, p);
      }
      return p;
    },
  };
}
