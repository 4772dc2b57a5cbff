// A crash alert's content: the class and root lines, what changed since the last good (or previous) attempt, what
// was already tried for this class, the catalog's usual next steps, and the team's own findings about it.
import type { Excerpt, View } from '../chat/types.ts';
import { type Attempt, type AttemptStore, attemptWhere } from '../ledger/attempts.ts';
import type { Diagnosis } from '../server/diagnosis.ts';

export interface AlertSources {
  attempts: AttemptStore;
  /** The team's knowledge bases (findings part); absent when none is configured. */
  excerptsFor?: (d: Diagnosis, flags: Record<string, string>) => Excerpt[] | Promise<Excerpt[]>;
  /** The signature catalog's advice for a class. */
  nextSteps?: (d: Diagnosis) => string[];
  /** Known upstream reports that look like this crash (src/corpus/similar.ts). */
  knownUpstream?: (d: Diagnosis) => Array<{ ref: string; url: string; title: string; state: string }>;
}

function baseline(attempts: AttemptStore, a: Attempt): { other: Attempt; label: string } | null {
  const earlier = attempts.list({ host: a.host, limit: 200 }).filter((x) => x.id < a.id);
  const good = [...earlier].reverse().find((x) => x.readyAt !== null && x.status !== 'crashed');
  if (good) return { other: good, label: `last good attempt #${good.id} (${good.profile})` };
  const prev = earlier[earlier.length - 1];
  return prev ? { other: prev, label: `previous attempt #${prev.id} (${prev.profile})` } : null;
}

export async function buildAlert(
  src: AlertSources,
  a: Attempt,
  d: Diagnosis,
  count: number,
): Promise<Extract<View, { type: 'alert' }>> {
  const base = baseline(src.attempts, a);
  const flagChanges = base
    ? [...new Set([...Object.keys(a.flags), ...Object.keys(base.other.flags)])]
        .filter((k) => (a.flags[k] ?? '-') !== (base.other.flags[k] ?? '-'))
        .sort()
        .map((k) => ({ flag: k, from: base.other.flags[k] ?? '-', to: a.flags[k] ?? '-' }))
    : [];
  const alreadyTried = src.attempts
    .list({ limit: 500 })
    .filter((x) => x.id !== a.id && (x.classification as Diagnosis | null)?.category === d.category)
    .map((x) => ({ attemptId: x.id, profile: x.profile, outcome: x.outcome ?? x.status }));
  let excerpts: Excerpt[] = [];
  try {
    excerpts = (await src.excerptsFor?.(d, a.flags)) ?? [];
  } catch {
    excerpts = [];
  }
  return {
    type: 'alert',
    attemptId: a.id,
    profile: a.profile,
    host: attemptWhere(a),
    actor: a.actor,
    diagnosis: d,
    flagChanges,
    comparedWith: base?.label ?? null,
    excerpts,
    alreadyTried,
    count,
    nextSteps: src.nextSteps?.(d) ?? [],
    known: src.knownUpstream?.(d) ?? [],
  };
}
