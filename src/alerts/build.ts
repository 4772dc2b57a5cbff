// A crash alert's content: the class and root lines, what changed since the last good (or previous) attempt, what
// was already tried for this class, the catalog's usual next steps, and the team's own findings about it.
import type { Excerpt, View } from '../chat/types.ts';
import { type Attempt, type AttemptStore, attemptWhere } from '../ledger/attempts.ts';
import { survivedBefore } from '../lifecycle/survived.ts';
import type { Diagnosis } from '../logs/diagnosis.ts';

export interface AlertSources {
  attempts: AttemptStore;
  /** The team's knowledge bases (findings part); absent when none is configured. */
  excerptsFor?: (d: Diagnosis, flags: Record<string, string>) => Excerpt[] | Promise<Excerpt[]>;
  /** The signature catalog's advice for a class. */
  nextSteps?: (d: Diagnosis) => string[];
  /** Known upstream reports that look like this crash (src/corpus/similar.ts). */
  knownUpstream?: (d: Diagnosis) => Array<{ ref: string; url: string; title: string; state: string }>;
}

/** The model an attempt served (its profile's model_path), or '' when the ledger row does not say. */
export function modelOf(a: Pick<Attempt, 'profileJson'>): string {
  try {
    const p = JSON.parse(a.profileJson) as { model_path?: unknown };
    return typeof p.model_path === 'string' ? p.model_path : '';
  } catch {
    return '';
  }
}

/**
 * What to compare a crash with: the last good attempt of the same model on this host (flags of another model say
 * nothing about this one). Without one, there is no comparison, and the alert says so.
 */
function baseline(attempts: AttemptStore, a: Attempt): { other: Attempt | null; label: string } {
  const model = modelOf(a);
  const earlier = attempts.list({ host: a.host, limit: 500 }).filter((x) => x.id < a.id && modelOf(x) === model);
  const good = [...earlier].reverse().find((x) => x.readyAt !== null && x.status !== 'crashed');
  if (good) return { other: good, label: `last good attempt #${good.id} (${good.profile})` };
  return { other: null, label: `no earlier good attempt of ${model || a.profile} on ${a.host} to compare with` };
}

export async function buildAlert(
  src: AlertSources,
  a: Attempt,
  d: Diagnosis,
  count: number,
  /** A repeat: the attempt that first had this crash (its alert is the one updated). */
  first?: number,
): Promise<Extract<View, { type: 'alert' }>> {
  const base = baseline(src.attempts, a);
  const other = base.other;
  const flagChanges = other
    ? [...new Set([...Object.keys(a.flags), ...Object.keys(other.flags)])]
        .filter((k) => (a.flags[k] ?? '-') !== (other.flags[k] ?? '-'))
        .sort()
        .map((k) => ({ flag: k, from: other.flags[k] ?? '-', to: a.flags[k] ?? '-' }))
    : [];
  const alreadyTried = src.attempts
    .list({ limit: 500 })
    .filter((x) => x.id !== a.id && (x.classification as Diagnosis | null)?.category === d.category)
    .map((x) => ({ attemptId: x.id, profile: x.profile, outcome: x.outcome ?? x.status }));
  // A crash of a server that served on past earlier errors: the engineer links them (the earlier ones paged nobody).
  // Not the error it died of, though it served on past that one once (a failure record's rule, early-alert.ts).
  const survived = src.attempts.survivedExcept(a.id, d.dedupKey);
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
    comparedWith: other ? base.label : null,
    ...(other ? {} : { noComparison: base.label }),
    ...(survived ? { survivedBefore: survivedBefore(survived) } : {}),
    ...(first !== undefined && first !== a.id ? { firstAttemptId: first } : {}),
    excerpts,
    alreadyTried,
    count,
    nextSteps: src.nextSteps?.(d) ?? [],
    known: src.knownUpstream?.(d) ?? [],
  };
}
