// Part src/charts: owns SVG charts rendered to PNG.
// May import: ledger.
//
// Hand-built SVG for the bot's charts: a panel of lines over an x axis (concurrency, or one point per night), a
// legend, gridlines with readable tick labels, and optional marks (a regression). Text is escaped; every number is
// rounded so the document stays small.
import { FONT_FAMILY } from './render.ts';

export const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd'];
const INK = '#222222';
const GRID = '#e1e1e1';
const AXIS = '#787878';

export interface Series {
  label: string;
  values: Array<number | null>;
}

export interface Panel {
  title: string;
  series: Series[];
  /** Log scale on y (latencies that differ by orders of magnitude). */
  log?: boolean;
  xLabel: string;
  /** Indexes of points to mark (drawn as a red ring with `markLabel` in the legend). */
  marks?: number[];
  markLabel?: string;
  /** Horizontal reference lines (an objective such as an SLO), dashed across the panel with their label. */
  refLines?: RefLine[];
}

export interface RefLine {
  label: string;
  value: number;
}

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

const r1 = (v: number) => Math.round(v * 10) / 10;

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function textAt(
  x: number,
  y: number,
  s: string,
  opts: { size?: number; anchor?: string; color?: string; bold?: boolean } = {},
): string {
  return `<text x="${r1(x)}" y="${r1(y)}" font-size="${opts.size ?? 12}" text-anchor="${opts.anchor ?? 'start'}" fill="${opts.color ?? INK}"${opts.bold ? ' font-weight="bold"' : ''}>${esc(s)}</text>`;
}

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

export function short(v: number): string {
  if (v >= 10_000) return `${Math.round(v / 1000)}k`;
  if (v >= 1000) return `${(v / 1000).toFixed(1).replace(/\.0$/, '')}k`;
  if (v >= 10) return String(Math.round(v));
  if (v >= 1 || v === 0) return v.toFixed(1).replace(/\.0$/, '');
  return v.toPrecision(1);
}

/**
 * One panel. `xs` are the x positions in data units (`xScale` maps them, e.g. log2 of concurrency), `xTicks` the
 * label under each point.
 */
export function panel(b: Box, xs: number[], xTicks: string[], p: Panel): string {
  const out: string[] = [textAt(b.x + b.w / 2, b.y + 14, p.title, { size: 15, anchor: 'middle', bold: true })];
  // Legend under the title.
  let lx = b.x + 56;
  p.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    out.push(`<rect x="${r1(lx)}" y="${b.y + 26}" width="12" height="12" fill="${color}"/>`);
    out.push(textAt(lx + 16, b.y + 37, s.label, { size: 12 }));
    lx += 16 + s.label.length * 7 + 18;
  });
  if (p.marks?.length && p.markLabel) {
    out.push(`<circle cx="${r1(lx + 6)}" cy="${b.y + 32}" r="6" fill="none" stroke="#d62728" stroke-width="2.5"/>`);
    out.push(textAt(lx + 16, b.y + 37, p.markLabel, { size: 12, color: '#d62728' }));
  }
  const left = b.x + 56;
  const top = b.y + 52;
  const right = b.x + b.w - 12;
  const bottom = b.y + b.h - 44;
  // The scale takes in the reference lines too, so an objective above every figure is still drawn.
  const all = [
    ...p.series.flatMap((s) => s.values.filter((v): v is number => v !== null && Number.isFinite(v) && v > 0)),
    ...(p.refLines ?? []).map((r) => r.value).filter((v) => Number.isFinite(v) && v > 0),
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
    out.push(`<line x1="${r1(left)}" y1="${r1(ty)}" x2="${r1(right)}" y2="${r1(ty)}" stroke="${GRID}"/>`);
    out.push(textAt(left - 6, ty + 4, short(t), { size: 11, anchor: 'end', color: AXIS }));
  }
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const xOf = (v: number) =>
    x1 === x0 ? (left + right) / 2 : left + 12 + ((v - x0) / (x1 - x0)) * (right - left - 24);
  // At most ~12 x labels, so dates do not overlap.
  const every = Math.max(1, Math.ceil(xs.length / 12));
  xs.forEach((v, k) => {
    out.push(`<line x1="${r1(xOf(v))}" y1="${r1(top)}" x2="${r1(xOf(v))}" y2="${r1(bottom)}" stroke="${GRID}"/>`);
    if (k % every === 0)
      out.push(textAt(xOf(v), bottom + 16, xTicks[k] ?? '', { size: 11, anchor: 'middle', color: AXIS }));
  });
  out.push(`<line x1="${r1(left)}" y1="${r1(top)}" x2="${r1(left)}" y2="${r1(bottom)}" stroke="${AXIS}"/>`);
  out.push(`<line x1="${r1(left)}" y1="${r1(bottom)}" x2="${r1(right)}" y2="${r1(bottom)}" stroke="${AXIS}"/>`);
  out.push(textAt((left + right) / 2, bottom + 34, p.xLabel, { size: 12, anchor: 'middle' }));
  for (const r of p.refLines ?? []) {
    if (!(Number.isFinite(r.value) && r.value > 0)) continue;
    const ry = yOf(r.value);
    out.push(
      `<line x1="${r1(left)}" y1="${r1(ry)}" x2="${r1(right)}" y2="${r1(ry)}" stroke="${INK}" stroke-width="1.5" stroke-dasharray="6 6"/>`,
    );
    out.push(textAt(right - 4, ry - 5, r.label, { size: 11, anchor: 'end' }));
  }
  p.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const pts = s.values.map((v, k) => (v === null || !Number.isFinite(v) || !(v > 0) ? null : [xOf(xs[k]!), yOf(v)]));
    // A gap (no figure that night) breaks the line.
    let d = '';
    let pen = false;
    for (const pt of pts) {
      if (!pt) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${r1(pt[0]!)} ${r1(pt[1]!)}`;
      pen = true;
    }
    if (d) out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2.5"/>`);
    for (const pt of pts) if (pt) out.push(`<circle cx="${r1(pt[0]!)}" cy="${r1(pt[1]!)}" r="3.5" fill="${color}"/>`);
    for (const k of p.marks ?? []) {
      const pt = pts[k];
      if (pt)
        out.push(
          `<circle cx="${r1(pt[0]!)}" cy="${r1(pt[1]!)}" r="8" fill="none" stroke="#d62728" stroke-width="2.5"/>`,
        );
    }
  });
  return out.join('\n');
}

/** A whole chart: a title line and panels side by side. */
export function chartSvg(size: { width: number; height: number }, title: string, panels: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${size.width}" height="${size.height}" viewBox="0 0 ${size.width} ${size.height}" font-family="${FONT_FAMILY}">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    textAt(size.width / 2, 24, title.slice(0, 110), { size: 16, anchor: 'middle', bold: true }),
    ...panels,
    '</svg>',
  ].join('\n');
}
