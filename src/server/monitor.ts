// Keeps watching a running server after launch, in a long-lived bot, so a crash at the first real request (the
// seeds' NaN) or hours later is still seen, classified and recorded.
import type { Attempt } from '../ledger/attempts.ts';
import type { DiagnoserFactory } from './diagnosis.ts';
import { createEarlyAlert } from './early-alert.ts';
import type { Engine } from './engine.ts';
import { type LaunchEvent, recordExit } from './launch.ts';
import { failNodes, type NodeFailure, namedDiagnoser, watchWorkers } from './node-watch.ts';
import { headNode } from './nodes.ts';
import { watchAttempt } from './watch.ts';

const watching = new Map<number, AbortController>();

export function monitorAttempt(
  engine: Engine,
  attempt: Attempt,
  emit: (e: LaunchEvent) => void,
  diagnoser: DiagnoserFactory,
): void {
  if (watching.has(attempt.id)) return;
  const abort = new AbortController();
  watching.set(attempt.id, abort);
  const multi = engine.attempts.nodes(attempt.id).length > 0;
  const diag = multi ? namedDiagnoser(diagnoser(), headNode(attempt)) : diagnoser();
  // Multi-node: the verdict waits until every node has been asked (see follow in launch.ts).
  const early = multi ? { check() {}, cancel() {} } : createEarlyAlert(engine, attempt, diag);
  // A multi-node server dies with any of its nodes.
  let nodeFailure: NodeFailure | undefined;
  const workers = watchWorkers(engine, attempt, diagnoser, (f) => {
    nodeFailure = f;
    abort.abort();
  });
  void watchAttempt(
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
      if (multi && !nodeFailure && end === 'server-exited') nodeFailure = await workers.deadNode();
      await workers.stop();
      if (nodeFailure) await failNodes(engine, attempt, nodeFailure, emit);
      else if (end === 'server-exited') await recordExit(engine, attempt, diag.result(), emit);
    })
    .catch((e: Error) => engine.log.error({ err: e.message, attempt: attempt.id }, 'monitor failed'))
    .finally(() => {
      early.cancel();
      watching.delete(attempt.id);
    });
}

export function stopMonitors(): void {
  for (const a of watching.values()) a.abort();
  watching.clear();
}
