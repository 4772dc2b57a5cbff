// How a launch ends when its backend names the ending (a scheduler's time limit, preemption, node failure, a submit
// refused): recorded in the ledger and told once. Apart from ./outcome.ts, which decides between the log and such an
// ending, so that reconcile (src/lifecycle/reconcile-direct.ts) records one without importing the backends.
import type { Attempt } from '../../ledger/attempts.ts';
import type { Diagnosis } from '../../logs/diagnosis.ts';
import type { Ending } from '../backend.ts';
import { type Engine, publish } from '../engine.ts';
import type { LaunchEvent, LaunchResult } from './types.ts';

/** Closes an attempt with an ending its backend named (Slurm's TIMEOUT, PREEMPTED, a submit refused...). */
export function recordEnding(
  engine: Pick<Engine, 'attempts' | 'clock' | 'notifier' | 'log'>,
  attempt: Attempt,
  ending: Ending,
  emit: (e: LaunchEvent) => void,
  diagnosis?: Diagnosis,
): LaunchResult {
  const closed = engine.attempts.finish(attempt.id, { ...ending, at: engine.clock.now() });
  // Not a crash of the server: the scheduler ended it. The log's evidence (if any) stays with it.
  const d: Diagnosis = {
    category: 'none',
    phase: diagnosis?.phase ?? 'scheduler',
    evidence: diagnosis?.evidence ?? [],
    rank: null,
    dedupKey: `${ending.outcome}:${attempt.id}`,
    confidence: 1,
    summary: ending.detail,
    reason: `the scheduler's own record of the job: ${ending.outcome}`,
  };
  const a = engine.attempts.get(attempt.id)!;
  if (closed) {
    engine.attempts.event(attempt.id, engine.clock.now(), 'ended', { outcome: ending.outcome, detail: ending.detail });
    publish(engine, emit, {
      kind: 'failed',
      attempt: a,
      outcome: ending.outcome,
      diagnosis: d,
      exitCode: ending.exitCode,
    });
  }
  return { outcome: 'ended', commandLine: attempt.commandLine, attempt: a, diagnosis: d };
}
