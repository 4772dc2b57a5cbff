// The "Configurations Tried" table: one row per attempt, with only the flags that differ between the attempts
// shown (what the team wrote by hand in the seeds).
import { duration, when } from '../format/table.ts';
import { type Attempt, attemptWhere } from '../ledger/attempts.ts';

export interface AttemptRow {
  id: number;
  profile: string;
  differing: Record<string, string>;
  host: string;
  actor: string;
  startedAt: string;
  duration: string;
  outcome: string;
  category: string | null;
}

export function differingFlags(attempts: Attempt[]): string[] {
  const keys = new Set<string>();
  for (const a of attempts) for (const k of Object.keys(a.flags)) keys.add(k);
  return [...keys].filter((k) => new Set(attempts.map((a) => a.flags[k] ?? '-')).size > 1).sort();
}

export function attemptRows(attempts: Attempt[], now: number): AttemptRow[] {
  const keys = differingFlags(attempts);
  return attempts.map((a) => {
    const cls = a.classification as { category?: string; phase?: string } | null;
    const outcome = a.active
      ? a.status
      : a.outcome === 'stopped' || a.outcome === 'exited'
        ? a.outcome
        : `${a.outcome ?? a.status}${cls?.phase && cls.phase !== 'unknown' ? ` (${cls.phase})` : ''}`;
    return {
      id: a.id,
      profile: a.profile,
      differing: Object.fromEntries(keys.map((k) => [k, a.flags[k] ?? '-'])),
      host: attemptWhere(a),
      actor: a.actor,
      startedAt: when(a.startedAt),
      duration: duration((a.endedAt ?? now) - a.startedAt),
      outcome,
      category: cls?.category ?? null,
    };
  });
}
