// Keeps watching a running server after launch, in a long-lived bot, so a crash at the first real request (the
// seeds' NaN) or hours later is still seen, classified and recorded.
import type { Attempt } from '../ledger/attempts.ts';
import type { DiagnoserFactory } from '../logs/diagnosis.ts';
import type { Engine } from './engine.ts';
import { markFollower } from './follower.ts';
import { recordExit } from './launch/outcome.ts';
import type { LaunchEvent } from './launch/types.ts';
import { failNodes, watchNodes } from './node-watch.ts';
import { watchAttempt } from './watch.ts';
import { watchingOf } from './watching.ts';

export { stopMonitors } from './watching.ts';

export function monitorAttempt(
  engine: Engine,
  attempt: Attempt,
  emit: (e: LaunchEvent) => void,
  diagnoser: DiagnoserFactory,
): void {
  const watching = watchingOf(engine);
  if (watching.has(attempt.id)) return;
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
      const nodeFailure = await nodes.settle(end === 'server-exited');
      if (nodeFailure) await failNodes(engine, attempt, nodeFailure, emit);
      else if (end === 'server-exited') await recordExit(engine, attempt, diag.result(), emit);
    })
    .catch((e: Error) => engine.log.error({ err: e.message, attempt: attempt.id }, 'monitor failed'))
    .finally(() => {
      early.cancel();
      watching.delete(attempt.id);
    });
  watching.set(attempt.id, { abort, done });
}
