// The benchmark chart: output token throughput (left) and latency (right, log scale: TTFT and ITL differ by orders
// of magnitude) against concurrency (log2 axis), one marker per measured level, as a PNG.
import type { LevelMetrics } from '../metrics.ts';
import { encodePng } from './png.ts';
import { type Canvas, canvas, disc, line, type Rgb, rect, text, textWidth } from './raster.ts';

const WHITE: Rgb = [255, 255, 255];
const INK: Rgb = [34, 34, 34];
const GRID: Rgb = [225, 225, 225];
const AXIS: Rgb = [120, 120, 120];
const COLORS: Rgb[] = [
  [31, 119, 180],
  [214, 39, 40],
  [44, 160, 44],
  [255, 127, 14],
  [148, 103, 189],
];

interface Series {
  label: string;
  values: Array<number | null>;
}

interface Panel {
  title: string;
  series: Series[];
  log: boolean;
  /** Horizontal reference lines (an objective), drawn across the panel with their label. */
  refLines?: Array<{ label: string; value: number }>;
}

export interface ChartOptions {
  /** The x axis is something other than concurrency (a trial number): its label, evenly spaced. */
  xLabel?: string;
  /** Objectives to draw on the latency panel, in ms. */
  latencyLines?: Array<{ label: string; value: number }>;
}

export const CHART_SIZE = { width: 1000, height: 460 };

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function short(v: number): string {
  if (v >= 10_000) return `${Math.round(v / 1000)}K`;
  if (v >= 1000) return `${(v / 1000).toFixed(1).replace(/\.0$/, '')}K`;
  if (v >= 10) return String(Math.round(v));
  return v.toFixed(1).replace(/\.0$/, '');
}

function drawPanel(
  c: Canvas,
  x: number,
  y: number,
  w: number,
  h: number,
  xs: number[],
  p: Panel,
  xLabel?: string,
): void {
  text(c, x + w / 2, y, p.title, INK, 2, 'center');
  // Legend under the title.
  let lx = x + 50;
  p.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    rect(c, lx, y + 24, 10, 10, color);
    text(c, lx + 14, y + 26, s.label, INK, 1);
    lx += 14 + textWidth(s.label) + 18;
  });
  const left = x + 50;
  const top = y + 46;
  const right = x + w - 10;
  const bottom = y + h - 40;
  const all = [
    ...p.series.flatMap((s) => s.values.filter((v): v is number => v !== null && v > 0)),
    ...(p.refLines ?? []).map((r) => r.value).filter((v) => v > 0),
  ];
  const maxV = all.length ? Math.max(...all) : 1;
  const minV = all.length ? Math.min(...all) : 1;
  let yOf: (v: number) => number;
  let ticks: number[];
  if (p.log) {
    const lo = 10 ** Math.floor(Math.log10(minV));
    const hi = 10 ** Math.ceil(Math.log10(maxV * 1.0001));
    const span = Math.log10(hi) - Math.log10(lo) || 1;
    yOf = (v) => bottom - ((Math.log10(v) - Math.log10(lo)) / span) * (bottom - top);
    ticks = [];
    for (let t = lo; t <= hi * 1.0001; t *= 10) ticks.push(t);
  } else {
    const hi = niceMax(maxV * 1.05);
    yOf = (v) => bottom - (v / hi) * (bottom - top);
    ticks = [0, 1, 2, 3, 4, 5].map((k) => (hi * k) / 5);
  }
  for (const t of ticks) {
    const ty = yOf(t);
    line(c, left, ty, right, ty, GRID);
    text(c, left - 6, ty - 3, short(t), AXIS, 1, 'right');
  }
  // x: log2 of concurrency, so 1, 4, 16, 64 are evenly spaced (another x, such as a trial number, is linear).
  const scale = xLabel ? (v: number) => v : Math.log2;
  const lx0 = scale(Math.min(...xs));
  const lx1 = scale(Math.max(...xs));
  const xOf = (v: number) =>
    lx1 === lx0 ? (left + right) / 2 : left + 10 + ((scale(v) - lx0) / (lx1 - lx0)) * (right - left - 20);
  for (const v of xs) {
    line(c, xOf(v), top, xOf(v), bottom, GRID);
    text(c, xOf(v), bottom + 8, String(v), AXIS, 1, 'center');
  }
  line(c, left, top, left, bottom, AXIS);
  line(c, left, bottom, right, bottom, AXIS);
  text(c, (left + right) / 2, bottom + 22, xLabel ?? 'CONCURRENCY', INK, 1, 'center');
  for (const r of p.refLines ?? []) {
    const ry = yOf(r.value);
    for (let dx = left; dx < right; dx += 12) line(c, dx, ry, Math.min(dx + 6, right), ry, INK, 2);
    text(c, right - 4, ry - 12, r.label, INK, 1, 'right');
  }
  p.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    let prev: [number, number] | null = null;
    s.values.forEach((v, k) => {
      if (v === null || !(v > 0)) {
        prev = null;
        return;
      }
      const pt: [number, number] = [xOf(xs[k]!), yOf(v)];
      if (prev) line(c, prev[0], prev[1], pt[0], pt[1], color, 3);
      disc(c, pt[0], pt[1], 4, color);
      prev = pt;
    });
  });
}

const val = (v: number) => (Number.isFinite(v) ? v : null);

/** Renders the sweep; `title` names what was measured (profile, host, attempt, lengths). */
export function renderBenchChart(levels: LevelMetrics[], title: string, opts: ChartOptions = {}): Buffer {
  const { width, height } = CHART_SIZE;
  const c = canvas(width, height, WHITE);
  text(c, width / 2, 12, title.slice(0, 80), INK, 2, 'center');
  const xs = levels.map((l) => l.concurrency);
  const half = width / 2;
  drawPanel(
    c,
    10,
    44,
    half - 20,
    height - 54,
    xs,
    {
      title: 'THROUGHPUT (TOK/S)',
      log: false,
      series: [
        { label: 'OUTPUT', values: levels.map((l) => val(l.outputThroughput)) },
        { label: 'TOTAL (IN+OUT)', values: levels.map((l) => val(l.totalThroughput)) },
      ],
    },
    opts.xLabel,
  );
  drawPanel(
    c,
    half + 10,
    44,
    half - 20,
    height - 54,
    xs,
    {
      title: 'LATENCY (MS, LOG)',
      log: true,
      series: [
        { label: 'TTFT P50', values: levels.map((l) => val(l.ttftMs.median)) },
        { label: 'TTFT P99', values: levels.map((l) => val(l.ttftMs.p99)) },
        { label: 'ITL MEAN', values: levels.map((l) => val(l.itlMs.mean)) },
        { label: 'E2E P50', values: levels.map((l) => val(l.e2eMs.median)) },
      ],
      refLines: opts.latencyLines,
    },
    opts.xLabel,
  );
  return encodePng(width, height, c.px);
}
