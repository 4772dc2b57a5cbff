// The service-level objective a tuned configuration must meet at the target load: `ttft_p99<2000ms,itl_p50<40ms`.
// Each term names one of bench's latency figures (bench_serving's TTFT, ITL, TPOT, E2E) and a percentile.
import type { Dist, LevelMetrics } from '../bench-load/metrics.ts';
import type { Zod } from '../runtime/define.ts';

const FIGURES = { ttft: 'ttftMs', itl: 'itlMs', tpot: 'tpotMs', e2e: 'e2eMs' } as const;
const STATS = { mean: 'mean', p50: 'median', p90: 'p90', p95: 'p95', p99: 'p99' } as const;

export interface SloTerm {
  /** `ttft_p99` */
  metric: string;
  figure: keyof typeof FIGURES;
  stat: keyof typeof STATS;
  op: '<' | '<=';
  ms: number;
}

const TERM = /^(ttft|itl|tpot|e2e)_(mean|p50|p90|p95|p99)\s*(<=|<)\s*(\d+(?:\.\d+)?)\s*(ms|s)$/;

/** `--slo` as a zod schema, from the zod the command's definition is handed (src/runtime/define.ts). */
export function sloSchema(z: Zod) {
  return z.string().transform((text, ctx): SloTerm[] => {
    const terms: SloTerm[] = [];
    for (const part of text.split(',').map((p) => p.trim())) {
      const m = part.match(TERM);
      if (!m) {
        ctx.addIssue({
          code: 'custom',
          message: `'${part}' is not an objective: write METRIC<VALUE with METRIC one of ttft, itl, tpot, e2e and _mean, _p50, _p90, _p95 or _p99, VALUE in ms or s, e.g. ttft_p99<2000ms,itl_p50<40ms`,
        });
        return z.NEVER;
      }
      const [, figure, stat, op, value, unit] = m;
      terms.push({
        metric: `${figure}_${stat}`,
        figure: figure as SloTerm['figure'],
        stat: stat as SloTerm['stat'],
        op: op as SloTerm['op'],
        ms: Number(value) * (unit === 's' ? 1000 : 1),
      });
    }
    return terms;
  });
}

export function sloText(slo: SloTerm[]): string {
  return slo.map((t) => `${t.metric}${t.op}${t.ms}ms`).join(',');
}

export function figure(level: LevelMetrics, t: Pick<SloTerm, 'figure' | 'stat'>): number {
  const d: Dist = level[FIGURES[t.figure]];
  return d[STATS[t.stat]];
}

/** Whether the level meets every term; what it misses, as `itl_p50 52.1ms >= 40ms`. */
export function meetsSlo(level: LevelMetrics, slo: SloTerm[]): { ok: boolean; misses: string[] } {
  const misses: string[] = [];
  if (level.completed < level.requests) misses.push(`${level.requests - level.completed} requests failed`);
  for (const t of slo) {
    const v = figure(level, t);
    const ok = Number.isFinite(v) && (t.op === '<' ? v < t.ms : v <= t.ms);
    if (!ok)
      misses.push(`${t.metric} ${Number.isFinite(v) ? v.toFixed(1) : 'n/a'}ms ${t.op === '<' ? '>=' : '>'} ${t.ms}ms`);
  }
  return { ok: misses.length === 0, misses };
}
