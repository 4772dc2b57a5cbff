// Keeps watching a running server after launch, in a long-lived bot, so a crash at the first real request (the
// seeds' NaN) or hours later is still seen, classified and recorded.
import type { Attempt } from '../ledger/attempts.ts';
import type { DiagnoserFactory } from '../logs/diagnosis.ts';
import { backendFor } from './backends.ts';
import type { Engine } from './engine.ts';
import { markFollower } from './follower.ts';
import { follow } from './launch/follow.ts';
import { recordExit } from './launch/outcome.ts';
import type { LaunchEvent } from './launch/types.ts';
import { failNodes, watchNodes } from './node-watch.ts';
import { requeuedAgain } from './requeue.ts';
import { watchAttempt } from './watch.ts';
import { closingOf, watchingOf } from './watching.ts';

export { stopMonitors } from './watching.ts';

export function monitorAttempt(
  engine: Engine,
  attempt: Attempt,
  emit: (e: LaunchEvent) => void,
  diagnoser: DiagnoserFactory,
): void {
  const watching = watchingOf(engine);
  // A bot closing starts no monitor (a launch that got ready just then): the next bot watches it.
  if (watching.has(attempt.id) || closingOf(engine).aborted) return;
  const abort = new AbortController();
  markFollower(engine, attempt.id);
  // Every node of a multi-node server: it dies with any of them.
  const nodes = watchNodes(engine, attempt, diagnoser, abort);
  const { diag, early } = nodes;
  const done = watchAttempt(
    engine,
    attempt,
    {
      onLine: (l) => {
        diag.push(l.text, l.lineNo);
        early.check();
        return undefined;
      },
    },
    abort.signal,
  )
    .then(async (end) => {
      // Requeued by its scheduler (not a bot closing, which aborts the watch): the job's next run is followed from
      // the queue, as a launch follows it, and watched again once it is ready.
      const gone = end === 'server-exited' || (end === 'aborted' && nodes.workerFailed());
      const requeued = backendFor(engine, attempt.host).requeued;
      if (
        gone &&
        requeued &&
        (await requeuedAgain(
          engine,
          attempt,
          () => requeued(engine, attempt),
          emit,
          diag.crashed() ? diag.result() : null,
        ))
      ) {
        await nodes.settle(false);
        void follow(engine, engine.attempts.get(attempt.id)!, true, emit, diagnoser)
          .then((r) => {
            if (r.outcome === 'ready' && r.attempt) monitorAttempt(engine, r.attempt, emit, diagnoser);
          })
          .catch((e: Error) => engine.log.error({ err: e.message, attempt: attempt.id }, 'requeued follow failed'));
        return;
      }
      const nodeFailure = await nodes.settle(end === 'server-exited');
      // (a worker that lost its peer because the head went: the head's end is told, as in follow.ts)
      const head = diag.result();
      const explained = nodeFailure ? await nodes.explain(head, nodeFailure) : null;
      if (nodeFailure && !explained) await failNodes(engine, attempt, nodeFailure, emit);
      else if (end === 'server-exited' || nodeFailure) await recordExit(engine, attempt, head, emit);
    })
    .catch((e: Error) => engine.log.error({ err: e.message, attempt: attempt.id }, 'monitor failed'))
    .finally(() => {
      early.cancel();
      watching.delete(attempt.id);
    });
  watching.set(attempt.id, { abort, done });
}
