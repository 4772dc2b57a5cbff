// The tuning search: coordinate steps over a ladder of values per knob, from the working configuration. For each
// knob in turn it steps one rung up (then down, if up did not help), and keeps stepping that way while throughput
// improves by more than the noise and the SLO holds; a crash or an OOM is a boundary (nothing beyond it is tried
// again); passes repeat until one improves nothing. Not a grid: each step costs one launch.
//
// The search is a pure function of the results so far: it walks its plan from the start and, at the first
// configuration it has no result for, returns it as the next trial. So a run resumed after a restart asks for
// exactly the trial it would have run next, from the trials in the ledger.

/** The knobs autopilot may turn, their profile field, and the values it steps between (ascending). */
export const KNOBS = {
  cuda_graph_max_bs: { ladder: [8, 16, 32, 64, 128, 192, 256, 384, 512] },
  mem_fraction_static: { ladder: [0.75, 0.8, 0.85, 0.88, 0.91, 0.93, 0.95, 0.97] },
  chunked_prefill_size: { ladder: [512, 1024, 2048, 4096, 8192, 16384] },
  // Unset: SGLang sizes it from the KV pool; above every rung.
  max_running_requests: { ladder: [4, 8, 16, 32, 64, 128, 256, 512] },
  schedule_policy: { values: ['fcfs', 'lpm', 'lof'] },
  schedule_conservativeness: { ladder: [0.3, 0.5, 0.7, 1.0, 1.3] },
} as const satisfies Record<string, { ladder: readonly number[] } | { values: readonly string[] }>;

export type KnobName = keyof typeof KNOBS;
export const KNOB_NAMES = Object.keys(KNOBS) as KnobName[];

/** A configuration as the knobs' values (undefined: left to SGLang). */
export type KnobValues = Partial<Record<KnobName, number | string>>;

export interface TrialResult {
  /** crashed or OOMed (a boundary), or measured. */
  crashed: boolean;
  meetsSlo: boolean;
  throughput: number;
}

/** Improvements smaller than this are the load's noise, not the knob. */
export const MIN_GAIN = 0.02;
export const MAX_PASSES = 3;

export function configKey(v: KnobValues): string {
  return JSON.stringify(KNOB_NAMES.map((k) => v[k] ?? null));
}

/** The next rung from `cur` in `dir` (+1 up, -1 down); an unset ladder knob sits above every rung when unbounded. */
function step(knob: KnobName, cur: number | string | undefined, dir: 1 | -1): number | string | undefined {
  const spec = KNOBS[knob];
  if ('values' in spec) return undefined;
  const ladder = spec.ladder as readonly number[];
  if (cur === undefined) return dir === -1 ? ladder[ladder.length - 1] : undefined;
  const c = Number(cur);
  return dir === 1 ? ladder.find((v) => v > c + 1e-9) : [...ladder].reverse().find((v) => v < c - 1e-9);
}

export interface SearchState {
  /** The next configuration to launch, or undefined when the search is over. */
  next?: KnobValues;
  /** The best configuration so far that met the SLO (the base when none did better). */
  best: KnobValues;
  bestThroughput: number | null;
  /** Where a crash stopped a direction: `mem_fraction_static >= 0.95`. */
  boundaries: string[];
}

/**
 * Walks the plan from `base` with the results known so far (by configKey); `baseResult` is the working
 * configuration's own measurement.
 */
export function searchState(
  base: KnobValues,
  knobs: readonly KnobName[],
  results: ReadonlyMap<string, TrialResult>,
): SearchState {
  const baseResult = results.get(configKey(base));
  let best = { ...base };
  let bestThroughput = baseResult?.meetsSlo ? baseResult.throughput : null;
  const boundaries = new Set<string>();
  const better = (r: TrialResult) =>
    !r.crashed && r.meetsSlo && (bestThroughput === null || r.throughput > bestThroughput * (1 + MIN_GAIN));
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    let improved = false;
    for (const knob of knobs) {
      const spec = KNOBS[knob];
      if ('values' in spec) {
        // A choice: each other value once against the best so far.
        let choice = best;
        for (const v of spec.values) {
          if ((best[knob] ?? spec.values[0]) === v) continue;
          const cand = { ...best, [knob]: v };
          const r = results.get(configKey(cand));
          if (!r) return { next: cand, best, bestThroughput, boundaries: [...boundaries] };
          if (r.crashed) boundaries.add(`${knob} = ${v}`);
          else if (better(r) && (choice === best || r.throughput > (results.get(configKey(choice))?.throughput ?? 0)))
            choice = cand;
        }
        if (choice !== best) {
          best = choice;
          bestThroughput = results.get(configKey(choice))!.throughput;
          improved = true;
        }
        continue;
      }
      for (const dir of [1, -1] as const) {
        let moved = false;
        for (;;) {
          const v = step(knob, best[knob], dir);
          if (v === undefined) break;
          const cand = { ...best, [knob]: v };
          const r = results.get(configKey(cand));
          if (!r) return { next: cand, best, bestThroughput, boundaries: [...boundaries] };
          if (r.crashed) {
            boundaries.add(`${knob} ${dir === 1 ? '>=' : '<='} ${v}`);
            break;
          }
          if (!better(r)) break;
          best = cand;
          bestThroughput = r.throughput;
          moved = true;
          improved = true;
        }
        if (moved) break; // this direction helped: the other one is the way back
      }
    }
    if (!improved) break;
  }
  return { best, bestThroughput, boundaries: [...boundaries] };
}

/** Every configuration of the knobs' values (for the benchmark's exhaustive reference, never for autopilot). */
export function grid(base: KnobValues, knobs: readonly KnobName[]): KnobValues[] {
  let out: KnobValues[] = [{ ...base }];
  for (const k of knobs) {
    const spec = KNOBS[k];
    const values: Array<number | string> = 'values' in spec ? [...spec.values] : [...spec.ladder];
    out = out.flatMap((c) => values.map((v) => ({ ...c, [k]: v })));
  }
  return out;
}
