// The autopilot runs going in this process, apart from the run code itself so that closing the app does not load
// launch, smoke and bench into a one-shot command that never started a run.
/** Runs in this process, per engine (only its identity is used): `autopilot --cancel`, the Stop button and a closing bot reach them here. */
const loops = new WeakMap<object, Map<number, { abort: AbortController; done: Promise<unknown> }>>();

export function loopsOf(engine: object) {
  let m = loops.get(engine);
  if (!m) {
    m = new Map();
    loops.set(engine, m);
  }
  return m;
}

/** A closing bot: its runs stop where they are (servers left as they are) and are resumed by the next start. */
export async function stopAutopilots(engine: object): Promise<void> {
  const m = loops.get(engine);
  if (!m) return;
  for (const l of m.values()) l.abort.abort('shutdown');
  await Promise.allSettled([...m.values()].map((l) => l.done));
}
