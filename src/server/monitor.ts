// Keeps watching a running server after launch, in a long-lived bot, so a crash at the first real request (the
// seeds' NaN) or hours later is still seen, classified and recorded.
import type { Attempt } from '../ledger/attempts.ts';
import type { DiagnoserFactory } from './diagnosis.ts';
import type { Engine } from './engine.ts';
import { markFollower } from './follower.ts';
import { type LaunchEvent, recordExit } from './launch.ts';
import { failNodes, watchNodes } from './node-watch.ts';
import { watchAttempt } from './watch.ts';

// Per engine (several bots can live in one process, each with its own ledger): each watched attempt's abort and the
// promise that settles once its follower has made its last ledger write.
const registry = new WeakMap<Engine, Map<number, { abort: AbortController; done: Promise<void> }>>();
const watchingOf = (engine: Engine) => {
  let m = registry.get(engine);
  if (!m) {
    m = new Map();
    registry.set(engine, m);
  }
  return m;
};

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

/**
 * Stops this engine's monitors and resolves once each has finished (its offset saved): a closing bot awaits this
 * before it closes the ledger. The servers keep running; the next bot resumes following them.
 */
export async function stopMonitors(engine: Engine): Promise<void> {
  const watching = watchingOf(engine);
  const all = [...watching.values()];
  for (const w of all) w.abort.abort();
  // Bounded: a host that stopped answering must not keep the bot from exiting.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => {
    timer = setTimeout(() => r('late'), 10_000);
  });
  const r = await Promise.race([Promise.allSettled(all.map((w) => w.done)), late]);
  clearTimeout(timer);
  if (r === 'late') engine.log.warn({ attempts: [...watching.keys()] }, 'monitors did not stop within 10 s');
  watching.clear();
}
