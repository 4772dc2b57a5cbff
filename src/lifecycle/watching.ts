// The attempts a long-lived bot keeps watching (src/lifecycle/monitor.ts), apart from the watching code itself so that
// closing the app does not load the log follower into a one-shot command that never used it.
import type { Engine } from './engine.ts';

// Per engine (several bots can live in one process, each with its own ledger): each watched attempt's abort and the
// promise that settles once its follower has made its last ledger write.
const registry = new WeakMap<object, Map<number, { abort: AbortController; done: Promise<void> }>>();
export const watchingOf = (engine: object) => {
  let m = registry.get(engine);
  if (!m) {
    m = new Map();
    registry.set(engine, m);
  }
  return m;
};

/**
 * Stops this engine's monitors and resolves once each has finished (its offset saved): a closing bot awaits this
 * before it closes the ledger. The servers keep running; the next bot resumes following them.
 */
export async function stopMonitors(engine: Pick<Engine, 'log'>): Promise<void> {
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
