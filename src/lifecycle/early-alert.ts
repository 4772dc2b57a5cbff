// A crash is told as soon as its root line has been read, not when the server finally exits (eight TP ranks can take
// a while to die). A short settle time lets the rest of the traceback arrive first. The alert is keyed by attempt,
// so the report at exit does not post it again. A failure record alone is no crash of a server that serves on: it is
// told at the exit, if the exit says so (crashedBeforeExit, showsCrash).
//
// A server that had reached ready is asked first (stillServing): a serving SGLang logs tracebacks of failures it
// survives (a request's, a helper thread's), and words are weaker evidence than a live process answering a one-token
// generation. Alive and answering: no crash, an `error_survived` event, and the diagnosis becomes survivable (a
// failure record's rule: a crash if the server then dies or exits non-zero, told at the exit with that class). Before
// ready the alert stays as fast as before: a traceback while loading almost always ends the process.
import type { Attempt } from '../ledger/attempts.ts';
import { crashedBeforeExit, type Diagnoser, type Diagnosis } from '../logs/diagnosis.ts';
import { type Engine, publish } from './engine.ts';

/** Why the attempt's server (as the ledger has it now) still serves, or null: stillServing for one node. */
export type ServingCheck = (a: Attempt) => Promise<string | null>;

export const SETTLE_MS = 150;
/** At most one new `error_survived` event per attempt in this long (later ones update it): fewer rows, same count. */
export const SURVIVED_QUIET_MS = 10 * 60_000;

/** A diagnoser whose crashes a serving server was seen to survive are survivable (see confirmCrash). */
export interface SurvivableDiagnoser extends Diagnoser {
  survive(d: Diagnosis): void;
}

/**
 * Wraps a diagnoser so that a crash confirmed survived (by its dedup key: the same class and root) reads as a failure
 * record from then on: crashedBeforeExit is false for it, showsCrash decides at the exit. The classifier may take
 * it back once lines of a server that carries on follow (the check's own request among them): the survived crash
 * still stands then, as the exit's evidence. A different crash read later is not covered and is confirmed again.
 */
export function survivable(d: Diagnoser): SurvivableDiagnoser {
  const survived = new Set<string>();
  let last: Diagnosis | undefined;
  const mark = (r: Diagnosis): Diagnosis => ({ ...r, survivable: true });
  return {
    ...d,
    crashed: () => d.crashed() || last !== undefined,
    result: () => {
      const r = d.result();
      if (survived.has(r.dedupKey)) return mark(r);
      // a stop from outside after it (no crash before the stop signal) is how the server ended: that verdict stands
      // (judgeEnd, headExplains read it), the survived error is in the ledger's events
      if (r.category === 'none' && r.stopped) return r;
      return r.category === 'none' && last ? mark(last) : r;
    },
    survive: (r) => {
      survived.add(r.dedupKey);
      last = r;
    },
  };
}

/**
 * Counts a survived error in the ledger: a different one (by dedup key) counts one more, a repeat (the same error read
 * again, e.g. by a bot restarted on this log) nothing. A new `error_survived` event at most once per
 * SURVIVED_QUIET_MS; within that window the window's event is updated (its count, and the newest error's class and
 * root, the one before kept as `prev`), so that no later error is lost.
 */
function recordSurvived(
  engine: Pick<Engine, 'attempts'>,
  attemptId: number,
  now: number,
  e: { category: string; root: string; why: string; key: string; rank?: number },
): void {
  const events = engine.attempts.survivedEvents(attemptId);
  if (events.some((x) => x.data.keys?.includes(e.key))) return;
  const { key, ...seen } = e;
  const last = events.at(-1);
  if (!last || now - last.at >= SURVIVED_QUIET_MS) {
    engine.attempts.event(attemptId, now, 'error_survived', { ...seen, keys: [key], count: 1, lastAt: now });
    return;
  }
  const d = last.data;
  const keys = d.keys ?? [];
  engine.attempts.updateEvent(last.id, {
    ...seen,
    keys: [...keys, key],
    count: (d.count ?? 1) + 1,
    lastAt: now,
    prev: { category: d.category ?? 'unknown', root: d.root ?? '', key: keys.at(-1) ?? '', at: d.lastAt ?? last.at },
  });
}

/**
 * After the settle time: whether the crash `diag` names on node `rank` is to be told now. An attempt not (yet)
 * ready: yes, as before. A ready one: yes unless `serving` says the server serves; then the crash is marked survived
 * in `diag`, counted as survived (recordSurvived) and not told.
 */
export async function confirmCrash(
  engine: Pick<Engine, 'attempts' | 'log' | 'clock'>,
  attempt: Attempt,
  rank: number,
  diag: SurvivableDiagnoser,
  serving: ServingCheck,
): Promise<boolean> {
  const a = engine.attempts.get(attempt.id) ?? attempt;
  if (a.status !== 'ready') return true;
  const d = diag.result();
  const why = await serving(a).catch(() => null);
  if (!why) return true;
  diag.survive(d);
  const now = engine.clock.now();
  engine.log.info(
    { attempt: attempt.id, node: rank, category: d.category, why },
    'a crash-looking error on a serving server: it serves on',
  );
  recordSurvived(engine, attempt.id, now, {
    category: d.category,
    root: d.evidence[0]?.text ?? d.summary,
    why,
    key: d.dedupKey,
    ...(rank > 0 ? { rank } : {}),
  });
  return false;
}

export function createEarlyAlert(
  engine: Pick<Engine, 'attempts' | 'clock' | 'notifier' | 'log'>,
  attempt: Attempt,
  diag: SurvivableDiagnoser,
  serving: ServingCheck,
) {
  let timer: NodeJS.Timeout | undefined;
  let confirming = false;
  let cancelled = false;
  // A bot restarted after it told this crash (its traceback now read again as context) does not tell it twice.
  let fired = engine.attempts.events(attempt.id).some((e) => e.kind === 'crash_seen');
  const tell = (lineSeenAt: number) => {
    fired = true;
    const d = diag.result();
    if (d.category === 'none') return;
    engine.attempts.update(attempt.id, { classification: d });
    engine.attempts.event(attempt.id, engine.clock.now(), 'crash_seen', { category: d.category, lineSeenAt });
    const a = engine.attempts.get(attempt.id) ?? attempt;
    // Only the notifier hears this one: the command's own output reports the outcome at exit.
    publish(engine, () => {}, { kind: 'failed', attempt: a, outcome: d.category, diagnosis: d, exitCode: null });
  };
  return {
    /** Call after every line. */
    check(): void {
      if (fired || timer || confirming || cancelled || !crashedBeforeExit(diag)) return;
      // The root line was just read: the alert's latency counts from here (the settle time and the check included).
      const lineSeenAt = engine.clock.now();
      timer = setTimeout(() => {
        timer = undefined;
        // Taken back by the lines that followed (the server carried on): nothing to tell; a later crash is checked.
        if (!crashedBeforeExit(diag)) return;
        confirming = true;
        void confirmCrash(engine, attempt, 0, diag, serving)
          .then((crash) => {
            // The watch ended meanwhile and the exit was recorded: the report at exit told it, with the exit code.
            if (crash && !(cancelled && engine.attempts.get(attempt.id)?.active === false)) tell(lineSeenAt);
          })
          .catch((e: Error) => engine.log.error({ err: e.message, attempt: attempt.id }, 'crash check failed'))
          .finally(() => {
            confirming = false;
          });
      }, SETTLE_MS);
    },
    cancel(): void {
      cancelled = true;
      clearTimeout(timer);
    },
  };
}
