// A server whose job its scheduler put back in the queue to run again (Slurm's --requeue, after a preemption or a node
// failure, when the profile asked for it): not an ending. The attempt says so, and why, and waits in the queue again;
// its follower then follows the job's next run as it followed the first (queued, running on, loading, ready).
import type { Attempt } from '../ledger/attempts.ts';
import { backendFor } from './backends.ts';
import type { Engine } from './engine.ts';
import type { LaunchEvent } from './launch/types.ts';
import { initialProgress } from './progress.ts';

/**
 * After the server's log ended: whether the backend has put the attempt's job back in its queue. When it has, the
 * attempt is queued again in the ledger and each requeue is told once (its `requeued` event, the message, the
 * thread), however many followers ask.
 */
export async function requeuedAgain(
  engine: Engine,
  attempt: Attempt,
  emit: (e: LaunchEvent) => void,
): Promise<boolean> {
  const backend = backendFor(engine, attempt.host);
  // A process group is never requeued: no question for a direct host.
  if (backend.kind === 'direct') return false;
  let st: Awaited<ReturnType<typeof backend.state>>;
  try {
    st = await backend.state(engine, attempt);
  } catch {
    return false; // the backend cannot be asked now: the usual ending path asks again and decides
  }
  if (st.state !== 'queued' || !st.requeue) return false;
  const now = engine.attempts.get(attempt.id);
  if (!now?.active) return false;
  const told = engine.attempts.events(attempt.id).filter((e) => e.kind === 'requeued').length;
  engine.attempts.update(attempt.id, { status: 'queued' });
  if (st.requeue.count > told) {
    const text = st.requeue.text;
    engine.attempts.update(attempt.id, { lastMilestone: text });
    engine.attempts.event(attempt.id, engine.clock.now(), 'requeued', { count: st.requeue.count, text });
    engine.log.info({ attempt: attempt.id, count: st.requeue.count }, text);
    emit({ kind: 'milestone', text, progress: initialProgress() });
    engine.notifier?.progress(engine.attempts.get(attempt.id)!, text, `requeued:${st.requeue.count}`);
  }
  return true;
}
