// The nightly smoke history: time to first token and decode tokens/s per run (oldest left), regressions ringed in
// red, failed runs as gaps. Posted with the nightly report.
import type { SmokeRow } from '../ledger/smoke.ts';
import { svgToPng } from './render.ts';
import { chartSvg, panel } from './svg.ts';

export const HISTORY_CHART_SIZE = { width: 1000, height: 420 };

const day = (t: number) => new Date(t).toISOString().slice(5, 10);

/** `rows` newest first, as the smoke store lists them. */
export function smokeHistorySvg(rows: SmokeRow[], title: string): string {
  const runs = [...rows].reverse();
  const xs = runs.map((_, i) => i);
  const ticks = runs.map((r) => day(r.at));
  const marks = runs.flatMap((r, i) => (r.verdict === 'regression' ? [i] : []));
  const half = HISTORY_CHART_SIZE.width / 2;
  const box = (x: number) => ({ x, y: 40, w: half - 20, h: HISTORY_CHART_SIZE.height - 50 });
  const x = 'night (UTC date of the run)';
  return chartSvg(HISTORY_CHART_SIZE, title, [
    panel(box(10), xs, ticks, {
      title: 'Time to first token (ms)',
      xLabel: x,
      series: [{ label: 'TTFT', values: runs.map((r) => r.ttftMs) }],
      marks,
      markLabel: 'regression',
    }),
    panel(box(half + 10), xs, ticks, {
      title: 'Decode speed (tokens/s)',
      xLabel: x,
      series: [{ label: 'tokens/s', values: runs.map((r) => r.tokS) }],
      marks,
      markLabel: 'regression',
    }),
  ]);
}

export function renderSmokeHistoryChart(rows: SmokeRow[], title: string): Promise<Buffer> {
  return svgToPng(smokeHistorySvg(rows, title));
}
