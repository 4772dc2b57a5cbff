// The tuning search on a known surface: coordinate steps that climb while throughput improves beyond the noise and
// the SLO holds, a crash as a boundary never crossed again, and far fewer trials than the grid of the same knobs.
import { describe, expect, it } from 'vitest';
import { configKey, grid, type KnobValues, searchState, type TrialResult } from '../../src/autopilot/search.ts';

/** Runs the search to its end against `f`, counting the configurations it asks for. */
function drive(base: KnobValues, knobs: Parameters<typeof searchState>[1], f: (v: KnobValues) => TrialResult) {
  const results = new Map<string, TrialResult>([[configKey(base), f(base)]]);
  for (let i = 0; i < 200; i++) {
    const st = searchState(base, knobs, results);
    if (!st.next) return { ...st, trials: results.size };
    results.set(configKey(st.next), f(st.next));
  }
  throw new Error('the search did not end');
}

describe('tuning search', () => {
  const surface = (v: KnobValues): TrialResult => {
    const m = Number(v.mem_fraction_static);
    const c = Number(v.chunked_prefill_size);
    if (m * 95 + (2.5 * c) / 8192 > 92) return { crashed: true, meetsSlo: false, throughput: 0 };
    return { crashed: false, meetsSlo: c >= 1024, throughput: 1000 * (1 - Math.max(0, 0.93 - m)) * (1 - c / 40_000) };
  };

  it('finds the best SLO-meeting configuration, treats an OOM as a boundary, and spends fewer trials than a grid', () => {
    const base = { mem_fraction_static: 0.88, chunked_prefill_size: 8192 };
    const knobs = ['mem_fraction_static', 'chunked_prefill_size'] as const;
    const r = drive(base, knobs, surface);
    expect(r.best).toEqual({ mem_fraction_static: 0.93, chunked_prefill_size: 1024 });
    expect(r.boundaries).toContain('mem_fraction_static >= 0.95');
    // Below 1024 misses the SLO: never the best, however fast.
    expect(surface({ mem_fraction_static: 0.93, chunked_prefill_size: 512 }).throughput).toBeGreaterThan(
      r.bestThroughput!,
    );
    expect(r.trials).toBeLessThan(grid(base, knobs).length / 2);
  });

  it('is a function of the results: the same results ask for the same next trial (a resumed run goes on)', () => {
    const base = { mem_fraction_static: 0.88, chunked_prefill_size: 8192 };
    const results = new Map([[configKey(base), surface(base)]]);
    const a = searchState(base, ['mem_fraction_static'], results);
    const b = searchState(base, ['mem_fraction_static'], new Map(results));
    expect(a.next).toEqual({ mem_fraction_static: 0.91, chunked_prefill_size: 8192 });
    expect(b.next).toEqual(a.next);
  });
});
