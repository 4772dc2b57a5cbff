// The benchmark chart: output token throughput (left) and latency (right, log scale: TTFT and ITL differ by orders
// of magnitude) against concurrency (log2 axis, so 1, 4, 16, 64 are evenly spaced), one marker per measured level.
// Autopilot draws the same panels over its trials (a linear x axis with its own label) with its SLO on the latency
// panel.

import { svgToPng } from '../charts/render.ts';
import { chartSvg, panel, type RefLine } from '../charts/svg.ts';
import type { LevelMetrics } from './metrics.ts';

export interface ChartOptions {
  /** The x axis is something other than concurrency (a trial number): its label; the axis is then linear. */
  xLabel?: string;
  /** Objectives to draw on the latency panel, in ms. */
  latencyLines?: RefLine[];
}

export const CHART_SIZE = { width: 1000, height: 460 };

const val = (v: number) => (Number.isFinite(v) ? v : null);

export function benchChartSvg(levels: LevelMetrics[], title: string, opts: ChartOptions = {}): string {
  const { width, height } = CHART_SIZE;
  const xLabel = opts.xLabel ?? 'concurrency';
  const xs = levels.map((l) => (opts.xLabel ? l.concurrency : Math.log2(l.concurrency)));
  const ticks = levels.map((l) => String(l.concurrency));
  const half = width / 2;
  const box = (x: number) => ({ x, y: 40, w: half - 20, h: height - 50 });
  return chartSvg(CHART_SIZE, title, [
    panel(box(10), xs, ticks, {
      title: 'Throughput (tokens/s)',
      xLabel,
      series: [
        { label: 'output', values: levels.map((l) => val(l.outputThroughput)) },
        { label: 'total (in + out)', values: levels.map((l) => val(l.totalThroughput)) },
      ],
    }),
    panel(box(half + 10), xs, ticks, {
      title: 'Latency (ms, log scale)',
      xLabel,
      log: true,
      series: [
        { label: 'TTFT p50', values: levels.map((l) => val(l.ttftMs.median)) },
        { label: 'TTFT p99', values: levels.map((l) => val(l.ttftMs.p99)) },
        { label: 'ITL mean', values: levels.map((l) => val(l.itlMs.mean)) },
        { label: 'E2E p50', values: levels.map((l) => val(l.e2eMs.median)) },
      ],
      refLines: opts.latencyLines,
    }),
  ]);
}

/** Renders the sweep; `title` names what was measured (profile, host, attempt, lengths). */
export function renderBenchChart(levels: LevelMetrics[], title: string, opts: ChartOptions = {}): Promise<Buffer> {
  return svgToPng(benchChartSvg(levels, title, opts));
}
