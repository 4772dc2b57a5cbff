// Slack user group membership (usergroups.users.list), cached so a burst of commands and clicks costs one lookup
// per group, and a Slack hiccup falls back to the last answer rather than locking everyone out.
import type { Clock } from '../clock.ts';
import { singleFlight } from '../single-flight.ts';

export interface GroupSource {
  /** The user IDs in one user group. */
  list(groupId: string): Promise<string[]>;
}

export interface GroupDirectory {
  members(groupId: string): Promise<ReadonlySet<string>>;
}

export function createGroupDirectory(source: GroupSource, opts: { ttlMs: number; clock: Clock }): GroupDirectory {
  const flight = singleFlight<ReadonlySet<string>>(opts);
  const last = new Map<string, ReadonlySet<string>>();
  return {
    members(groupId) {
      return flight(groupId, async () => new Set(await source.list(groupId))).then(
        (users) => {
          last.set(groupId, users);
          return users;
        },
        (e: unknown) => {
          // Stale is better than nothing while Slack is unwell; no answer at all refuses (the caller denies).
          const hit = last.get(groupId);
          if (hit) return hit;
          throw e;
        },
      );
    },
  };
}
