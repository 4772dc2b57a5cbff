// A server whose job its scheduler put back in the queue to run again (Slurm's --requeue, after a preemption or a node
// failure, when the profile asked for it): not an ending. The attempt says so, and why, and waits in the queue again;
// its follower then follows the job's next run as it followed the first (queued, running on, loading, ready).
import type { Attempt } from '../ledger/attempts.ts';
import type { Diagnosis } from '../logs/diagnosis.ts';
import type { Requeue } from './backend.ts';
import type { Engine } from './engine.ts';
import type { LaunchEvent } from './launch/types.ts';
import { initialProgress } from './progress.ts';

/**
 * After the server's log ended: whether its backend has put the attempt's job back in its queue (`ask`: the backend's
 * own answer). When it has, the attempt is queued again in the ledger and each requeue is told once (its `requeued`
 * event, the message, the thread), however many followers ask. `crash` is what the run's log showed: a run that
 * crashed and was requeued (Slurm's RequeueExit, RequeueExitHold) keeps its diagnosis as a `run_crashed` event.
 */
export async function requeuedAgain(
  engine: Pick<Engine, 'attempts' | 'clock' | 'log' | 'notifier'>,
  attempt: Attempt,
  ask: () => Promise<Requeue | null>,
  emit: (e: LaunchEvent) => void,
  crash?: Diagnosis | null,
): Promise<boolean> {
  let back: Requeue | null;
  try {
    back = await ask();
  } catch {
    return false; // the backend cannot be asked now: the usual ending path asks again and decides
  }
  if (!back || !engine.attempts.get(attempt.id)?.active) return false;
  const told = toldRestarts(engine, attempt.id);
  engine.attempts.update(attempt.id, { status: 'queued' });
  if (back.count > told) {
    engine.attempts.update(attempt.id, { lastMilestone: back.text });
    if (crash && crash.category !== 'none') {
      engine.attempts.event(attempt.id, engine.clock.now(), 'run_crashed', { count: back.count, diagnosis: crash });
    }
    engine.attempts.event(attempt.id, engine.clock.now(), 'requeued', {
      count: back.count,
      text: back.text,
      held: back.held ?? false,
      runStart: back.runStart ?? [],
    });
    engine.log.info({ attempt: attempt.id, count: back.count, crash: crash?.category }, back.text);
    emit({ kind: 'milestone', text: back.text, progress: initialProgress() });
    engine.notifier?.progress(engine.attempts.get(attempt.id)!, back.text, `requeued:${back.count}`);
  }
  return true;
}

/**
 * Where the job's current run begins in a node's log (the byte its requeue recorded, 0 before any): its follow starts
 * there at the earliest and reads no context from before it, so the previous run's crash never starts its diagnosis.
 */
export function runStartOf(engine: Pick<Engine, 'attempts'>, attemptId: number, rank: number): number {
  const last = engine.attempts
    .events(attemptId)
    .filter((e) => e.kind === 'requeued')
    .at(-1)?.data as { runStart?: unknown } | undefined;
  const at = Array.isArray(last?.runStart) ? Number(last.runStart[rank]) : 0;
  return Number.isFinite(at) && at > 0 ? at : 0;
}

/**
 * The largest restart already told, not how many events say so: a follower that missed a requeue (Restarts 0 -> 2)
 * tells it once with count 2, and another follower (the monitor, another bot process) must not tell it again.
 */
export function toldRestarts(engine: Pick<Engine, 'attempts'>, attemptId: number): number {
  return Math.max(
    0,
    ...engine.attempts
      .events(attemptId)
      .filter((e) => e.kind === 'requeued')
      .map((e) => Number((e.data as { count?: unknown }).count) || 0),
  );
}
