// How a followed launch ends when it does not get ready: a hang or a ready timeout (the server still runs and keeps
// its GPUs: the attempt stays live), a first request answered with an error status (up, reported, left running), an
// exit or crash (the host's record and the log decide, the classifier names it), or an ending the backend names
// (a scheduler's time limit). Each is recorded in the ledger and told once.
import type { Attempt } from '../../ledger/attempts.ts';
import type { Diagnosis } from '../../logs/diagnosis.ts';
import type { Ending } from '../backend.ts';
import { backendFor } from '../backends.ts';
import { type Engine, publish } from '../engine.ts';
import type { Progress } from '../progress.ts';
import { stopRequested } from '../stop.ts';
import { judgeEnd, recordEnding } from './ending.ts';
import type { LaunchEvent, LaunchResult } from './types.ts';

/** The server still runs (someone may want a py-spy dump): report, keep the attempt live, leave stopping to people. */
export function recordHang(
  engine: Engine,
  attempt: Attempt,
  d: Diagnosis,
  emit: (e: LaunchEvent) => void,
): LaunchResult {
  engine.attempts.update(attempt.id, { classification: d });
  engine.attempts.event(attempt.id, engine.clock.now(), 'hang', { summary: d.summary });
  const a = engine.attempts.get(attempt.id)!;
  publish(engine, emit, { kind: 'failed', attempt: a, outcome: 'hang', diagnosis: d, exitCode: null });
  return { outcome: 'hang', commandLine: attempt.commandLine, attempt: a, diagnosis: d };
}

/** The server is up and keeps its GPUs (a wrong key is fixed by stopping it and launching again): live, reported. */
export function recordRequestFailed(
  engine: Engine,
  attempt: Attempt,
  refused: string,
  emit: (e: LaunchEvent) => void,
): LaunchResult {
  const d: Diagnosis = {
    category: 'first_request_failed',
    phase: 'first_request',
    summary: `the server is up, but its first request (POST /generate) was answered ${refused}`,
    evidence: [],
    rank: null,
    dedupKey: `first_request/${refused.split(':')[0]}`,
    confidence: 1,
  };
  engine.attempts.update(attempt.id, { classification: d, lastMilestone: `first request: ${refused}` });
  const a = engine.attempts.get(attempt.id)!;
  publish(engine, emit, { kind: 'failed', attempt: a, outcome: 'request_failed', diagnosis: d, exitCode: null });
  return { outcome: 'request_failed', commandLine: attempt.commandLine, attempt: a, diagnosis: d };
}

/**
 * Like a hang, the server still runs and still holds its GPUs: the attempt stays live (its lease with it) until
 * someone stops it or it ends; closing it here would free GPUs that are still in use.
 */
export function recordTimeout(
  engine: Engine,
  attempt: Attempt,
  d: Diagnosis,
  timeoutMs: number,
  stage: Progress['stage'],
): LaunchResult {
  engine.attempts.event(attempt.id, engine.clock.now(), 'ready_timeout', { seconds: timeoutMs / 1000, stage });
  return {
    outcome: 'timeout',
    commandLine: attempt.commandLine,
    attempt: engine.attempts.get(attempt.id),
    diagnosis: d,
  };
}

/**
 * A stop asked for (here or by another bot process) ended it: the stop's record, whoever writes first, and no alert
 * (the stop tells its own end). null when no stop was asked for.
 */
export function closedByStop(
  engine: Pick<Engine, 'attempts' | 'clock'>,
  attempt: Attempt,
  exitCode: number | null,
  diagnosis?: Diagnosis,
): LaunchResult | null {
  if (!stopRequested(engine, attempt.id)) return null;
  engine.attempts.finish(attempt.id, {
    status: 'stopped',
    outcome: 'stopped',
    detail: 'stopped on request',
    exitCode,
    at: engine.clock.now(),
  });
  return {
    outcome: 'exited',
    commandLine: attempt.commandLine,
    attempt: engine.attempts.get(attempt.id)!,
    ...(diagnosis ? { diagnosis } : {}),
  };
}

/**
 * Waits for the stop asked for to close the attempt itself (its record says how, once its backend confirmed), for as
 * long as a stop takes at most (its grace period, then 30 s for a scheduler to confirm); a stopper that died by then
 * leaves it to closedByStop.
 */
export async function stopperClosed(engine: Pick<Engine, 'attempts' | 'clock' | 'loaded'>, id: number): Promise<void> {
  const end = Date.now() + engine.loaded.config.timeouts.stop_grace_s * 1000 + 30_000;
  while (engine.attempts.get(id)?.active && Date.now() < end) await engine.clock.sleep(100);
}

export async function recordExit(
  engine: Engine,
  attempt: Attempt,
  fromLog: Diagnosis,
  emit: (e: LaunchEvent) => void,
): Promise<LaunchResult> {
  const backend = backendFor(engine, attempt.host);
  let exitCode: number | null = null;
  let ending: Ending | undefined;
  try {
    const st = await backend.state(engine, attempt);
    if (st.state !== 'none') exitCode = st.exitCode;
    ending = st.ending;
  } catch {
    // unreachable now: the outcome still stands from the log
  }
  // The head is gone: workers of a multi-node server would wait for it forever.
  if (attempt.nodeHosts.length > 1) {
    await backend
      .stop(engine, attempt, [0])
      .catch((e: Error) =>
        engine.log.error({ err: e.message, attempt: attempt.id }, 'could not stop the worker nodes'),
      );
  }
  const stopped = closedByStop(engine, attempt, exitCode, fromLog);
  if (stopped) return stopped;
  // The same rule as an attempt that ended unwatched (reconcile): judgeEnd.
  const j = judgeEnd(fromLog, exitCode, ending, 'exited');
  if (j.by === 'ending') return recordEnding(engine, attempt, j.ending, emit, fromLog);
  const diagnosis = j.diagnosis ?? fromLog;
  const crashed = j.status === 'crashed';
  const outcome = j.outcome;
  const closed = engine.attempts.finish(attempt.id, {
    status: j.status,
    outcome,
    detail: diagnosis.summary,
    exitCode,
    at: engine.clock.now(),
  });
  engine.attempts.update(attempt.id, { classification: diagnosis });
  const a = engine.attempts.get(attempt.id)!;
  // A stop that raced us already closed the attempt as stopped: report what the ledger says.
  if (closed) publish(engine, emit, { kind: 'failed', attempt: a, outcome, diagnosis, exitCode });
  return { outcome: crashed ? 'crashed' : 'exited', commandLine: attempt.commandLine, attempt: a, diagnosis };
}
