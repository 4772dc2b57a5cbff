// How a launch ends when its backend names the ending (a scheduler's time limit, preemption, node failure, a submit
// refused): recorded in the ledger and told once. Apart from ./outcome.ts, which decides between the log and such an
// ending, so that reconcile (src/lifecycle/reconcile-direct.ts) records one without importing the backends.
import type { Attempt } from '../../ledger/attempts.ts';
import { exitedClassification, type Phase, STOP_STATUSES } from '../../logs/classify/index.ts';
import { type Diagnosis, showsCrash, stoppedFromOutside, survived } from '../../logs/diagnosis.ts';
import { type Ending, endingOver } from '../backend.ts';
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

/** How an ended attempt is closed: by its backend's ending, or by its exit and what its log names. */
export type EndJudged =
  | { by: 'ending'; ending: Ending }
  | { by: 'exit'; status: 'crashed' | 'exited' | 'lost'; outcome: string; diagnosis: Diagnosis | null };

/**
 * Decides how an ended attempt closes from its backend's ending (only one the backend names: Slurm's TIMEOUT, a
 * node failure; a plain FAILED or COMPLETED names none), its exit code and its log's diagnosis (null: no log read).
 * One rule for a followed attempt (outcome.ts recordExit) and one that ended unwatched (reconcile-direct.ts
 * closeUnwatched), so the two cannot disagree. `unknownExit`: the status of an end with no exit code and no crash
 * (a follower saw the server end: exited; reconcile saw nothing: lost).
 */
export function judgeEnd(
  fromLog: Diagnosis | null,
  exitCode: number | null,
  ending: Ending | undefined,
  unknownExit: 'exited' | 'lost',
): EndJudged {
  // A crash the log names wins; else the backend's ending says what happened. A node failure outranks the log: the
  // other nodes' servers crash because it took their peer, and that crash is its consequence, not the cause.
  // A failure record alone names no crash the scheduler's ending does not explain better.
  // An ending bound to one log crash (a worker's srun death, onlyOverLog) stands over that crash only.
  const over = endingOver(ending, fromLog?.category ?? null);
  if (over && (fromLog === null || fromLog.category === 'none' || fromLog.survivable || over.outranksLog))
    return { by: 'ending', ending: over };
  // Stopped by someone other than the bot (a stop the bot asked for is closedByStop's): the log says the signal
  // reached it and no crash came before, and it ended by SIGKILL (SGLang kills its own tree, itself last: 137),
  // SIGTERM (143), SIGINT (130: a Ctrl-C, Python's KeyboardInterrupt) or 0. An abort (134) or a segfault (139)
  // while it drained is a crash.
  if (fromLog && stoppedFromOutside(fromLog) && (exitCode === null || exitCode === 0 || STOP_STATUSES.has(exitCode))) {
    const diagnosis = {
      ...fromLog,
      summary: `stopped from outside the bot: the server logged a stop signal at line ${fromLog.stopped.line} (${fromLog.stopped.text.trim().slice(0, 160)})${exitCode ? `, then ended with status ${exitCode}` : ''}`,
    };
    return { by: 'exit', status: 'exited', outcome: 'exited', diagnosis };
  }
  const failed = exitCode !== null && exitCode !== 0;
  let diagnosis: Diagnosis | null;
  if (fromLog === null || fromLog.category === 'none') {
    // Exited non-zero with nothing in the log: a crash of unknown cause, never `none`.
    diagnosis = failed
      ? exitedClassification((fromLog?.phase ?? 'unknown') as Phase, { code: exitCode, signal: null }, null)
      : fromLog;
  } else {
    // A failure record alone from a server that exited 0 was survived (showsCrash): the log names no crash.
    diagnosis = showsCrash(fromLog, exitCode) ? fromLog : survived(fromLog);
  }
  const named = diagnosis !== null && diagnosis.category !== 'none';
  if (named || failed) return { by: 'exit', status: 'crashed', outcome: diagnosis!.category, diagnosis };
  const status = exitCode === 0 ? 'exited' : unknownExit;
  return { by: 'exit', status, outcome: status, diagnosis };
}
