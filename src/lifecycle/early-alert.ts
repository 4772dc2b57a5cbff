// A crash is told as soon as its root line has been read, not when the server finally exits (eight TP ranks can take
// a while to die). A short settle time lets the rest of the traceback arrive first. The alert is keyed by attempt,
// so the report at exit does not post it again. A failure record alone is no crash of a server that serves on: it is
// told at the exit, if the exit says so (crashedBeforeExit, showsCrash).
import type { Attempt } from '../ledger/attempts.ts';
import { crashedBeforeExit, type Diagnoser } from '../logs/diagnosis.ts';
import { type Engine, publish } from './engine.ts';

export const SETTLE_MS = 150;

export function createEarlyAlert(
  engine: Pick<Engine, 'attempts' | 'clock' | 'notifier' | 'log'>,
  attempt: Attempt,
  diag: Diagnoser,
) {
  let timer: NodeJS.Timeout | undefined;
  // A bot restarted after it told this crash (its traceback now read again as context) does not tell it twice.
  let fired = engine.attempts.events(attempt.id).some((e) => e.kind === 'crash_seen');
  return {
    /** Call after every line. */
    check(): void {
      if (fired || timer || !crashedBeforeExit(diag)) return;
      // The root line was just read: the alert's latency counts from here (the settle time included).
      const lineSeenAt = engine.clock.now();
      timer = setTimeout(() => {
        fired = true;
        const d = diag.result();
        if (d.category === 'none') return;
        engine.attempts.update(attempt.id, { classification: d });
        engine.attempts.event(attempt.id, engine.clock.now(), 'crash_seen', { category: d.category, lineSeenAt });
        const a = engine.attempts.get(attempt.id) ?? attempt;
        // Only the notifier hears this one: the command's own output reports the outcome at exit.
        publish(engine, () => {}, { kind: 'failed', attempt: a, outcome: d.category, diagnosis: d, exitCode: null });
      }, SETTLE_MS);
    },
    cancel(): void {
      clearTimeout(timer);
    },
  };
}
