// A server whose job its scheduler put back in the queue to run again (Slurm's --requeue, after a preemption or a node
// failure, when the profile asked for it): not an ending. The attempt says so, and why, and waits in the queue again;
// its follower then follows the job's next run as it followed the first (queued, running on, loading, ready).
import type { Attempt } from '../ledger/attempts.ts';
import type { Diagnosis } from '../logs/diagnosis.ts';
import type { Requeue } from './backend.ts';
import { type Engine, type HostContext, hostOf } from './engine.ts';
import type { LaunchEvent } from './launch/types.ts';
import { initialProgress } from './progress.ts';
import { LOG_MARKS, script } from './scripts.ts';

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
      runMark: back.runMark ?? [],
    });
    // The saved offsets were the old run's: the next run's are saved as it is read (from its own start, whether it
    // appends to its logs or truncates them; watch.ts).
    engine.attempts.update(attempt.id, { logOffset: 0 });
    for (const n of engine.attempts.nodes(attempt.id)) engine.attempts.updateNode(attempt.id, n.rank, { logOffset: 0 });
    engine.log.info({ attempt: attempt.id, count: back.count, crash: crash?.category }, back.text);
    emit({ kind: 'milestone', text: back.text, progress: initialProgress() });
    engine.notifier?.progress(engine.attempts.get(attempt.id)!, back.text, `requeued:${back.count}`);
  }
  return true;
}

/** The latest requeue's record of where the job's next run begins in each node's log, and the log's mark there. */
function lastRequeue(engine: Pick<Engine, 'attempts'>, attemptId: number): { runStart?: unknown; runMark?: unknown } {
  return (
    (engine.attempts
      .events(attemptId)
      .filter((e) => e.kind === 'requeued')
      .at(-1)?.data as { runStart?: unknown; runMark?: unknown } | undefined) ?? {}
  );
}

/**
 * Where the job's current run begins in a node's log (the byte its requeue recorded, 0 before any): its follow starts
 * there at the earliest and reads no context from before it, so the previous run's crash never starts its diagnosis.
 */
export function runStartOf(engine: Pick<Engine, 'attempts'>, attemptId: number, rank: number): number {
  const last = lastRequeue(engine, attemptId);
  const at = Array.isArray(last.runStart) ? Number(last.runStart[rank]) : 0;
  return Number.isFinite(at) && at > 0 ? at : 0;
}

/**
 * runStartOf, checked against the log as it is now: a rerun appends to its log or truncates it as Slurm's open mode
 * says (sbatch(1)/srun(1) --open-mode, whose default is slurm.conf(5) JobFileAppend: "By default, any existing file is
 * truncated"; the bot's own sbatch asks append, which a job's SLURM_OPEN_MODE can undo for srun's node logs). The mark
 * taken at the requeue (the 64 bytes before the run's end) is still there only in an appended log; otherwise the
 * whole file is the current run, read from 0 (an old offset would skip its first lines, or point past its end).
 */
export async function currentRunStart(
  engine: Pick<Engine, 'attempts' | 'log'> & HostContext,
  node: { attemptId: number; rank: number; host: string; logPath: string },
): Promise<number> {
  const at = runStartOf(engine, node.attemptId, node.rank);
  const marks = lastRequeue(engine, node.attemptId).runMark;
  const want = at > 0 && Array.isArray(marks) ? String(marks[node.rank] ?? '') : '';
  if (!want) return at;
  const { host } = hostOf(engine, node.host);
  const r = await host.exec(script(LOG_MARKS, 'glm-log-marks', [String(at), node.logPath]));
  const now = r.stdout.trim().split(' ')[1] ?? '-';
  if (now === want) return at;
  engine.log.info(
    { attempt: node.attemptId, rank: node.rank, runStart: at },
    'the rerun truncated its log (Slurm open mode truncate): reading it from its start',
  );
  return 0;
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
