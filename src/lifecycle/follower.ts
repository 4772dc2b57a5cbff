// Who follows an attempt's log: the process that launched it (or re-attached to it) records itself, so another bot
// process can tell an orphaned launch (its launcher died: `glm smoke --launch ... | head -3`) from one still being
// followed. Liveness is read from /proc (state and start time: a zombie or a reused PID is not the follower).
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Engine } from './engine.ts';

function procStart(pid: number): { state: string; start: string } | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { state: f[0] ?? '?', start: f[19] ?? '' };
  } catch {
    return null;
  }
}

/** Records this process as the attempt's follower. */
export function markFollower(engine: Pick<Engine, 'attempts' | 'clock'>, attemptId: number): void {
  const me = procStart(process.pid);
  engine.attempts.event(attemptId, engine.clock.now(), 'followed_by', {
    machine: hostname(),
    pid: process.pid,
    start: me?.start ?? '',
  });
}

/**
 * 'alive' when the attempt's latest follower runs (or is this process), 'gone' when it ran on this machine and has
 * exited, 'unknown' when it ran elsewhere (or never said).
 */
export function followerState(engine: Pick<Engine, 'attempts'>, attemptId: number): 'alive' | 'gone' | 'unknown' {
  const last = engine.attempts
    .events(attemptId)
    .filter((e) => e.kind === 'followed_by')
    .at(-1)?.data as { machine?: string; pid?: number; start?: string } | undefined;
  if (!last?.pid || last.machine !== hostname()) return 'unknown';
  if (last.pid === process.pid) return 'alive';
  const p = procStart(last.pid);
  if (!p || p.state === 'Z' || p.state === 'X' || p.start !== last.start) return 'gone';
  return 'alive';
}
