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

// Per engine: raised once when its bot closes, and the followers still running (a launch's, a resumed one's, a
// requeued job's next run's), each writing to the ledger until it settles.
const followers = new WeakMap<object, { closing: AbortController; running: Set<Promise<unknown>> }>();
const followersOf = (engine: object) => {
  let f = followers.get(engine);
  if (!f) {
    f = { closing: new AbortController(), running: new Set() };
    followers.set(engine, f);
  }
  return f;
};

/**
 * Aborted when this engine's bot closes: a follower (or a wait in a scheduler's queue) ends there without judging the
 * attempt, which stays as the ledger has it for the next bot to resume.
 */
export const closingOf = (engine: object): AbortSignal => followersOf(engine).closing.signal;

/** Raises closingOf: a closing bot does this first, so a follower inside an autopilot run or a bisection ends too. */
export const beginClosing = (engine: object): void => followersOf(engine).closing.abort();

/** Counts a follower in until it settles: a closing bot waits for it before it closes the ledger. */
export function asFollower<T>(engine: object, p: Promise<T>): Promise<T> {
  const { running } = followersOf(engine);
  running.add(p);
  const done = () => running.delete(p);
  p.then(done, done);
  return p;
}

/**
 * Stops this engine's monitors and followers and resolves once each has finished (its offset saved): a closing bot
 * awaits this before it closes the ledger. The servers keep running; the next bot resumes following them.
 */
export async function stopMonitors(engine: Pick<Engine, 'log'>): Promise<void> {
  const watching = watchingOf(engine);
  const all = [...watching.values()];
  const f = followersOf(engine);
  beginClosing(engine);
  for (const w of all) w.abort.abort();
  // Bounded: a host that stopped answering must not keep the bot from exiting.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => {
    timer = setTimeout(() => r('late'), 10_000);
  });
  const r = await Promise.race([Promise.allSettled([...all.map((w) => w.done), ...f.running]), late]);
  clearTimeout(timer);
  if (r === 'late')
    engine.log.warn(
      { attempts: [...watching.keys()], followers: f.running.size },
      'monitors and followers did not stop within 10 s',
    );
  watching.clear();
}
