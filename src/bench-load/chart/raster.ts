// Just enough raster drawing for a line chart: filled rectangles, thick lines, round markers, bitmap text.
import { GLYPH_H, GLYPH_W, glyph } from './font.ts';

export type Rgb = readonly [number, number, number];

export interface Canvas {
  width: number;
  height: number;
  px: Uint8Array;
}

export function canvas(width: number, height: number, bg: Rgb): Canvas {
  const px = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) px.set(bg, i * 3);
  return { width, height, px };
}

export function plot(c: Canvas, x: number, y: number, color: Rgb): void {
  const xi = Math.round(x);
  const yi = Math.round(y);
  if (xi < 0 || yi < 0 || xi >= c.width || yi >= c.height) return;
  c.px.set(color, (yi * c.width + xi) * 3);
}

export function rect(c: Canvas, x: number, y: number, w: number, h: number, color: Rgb): void {
  for (let j = Math.round(y); j < Math.round(y + h); j++)
    for (let i = Math.round(x); i < Math.round(x + w); i++) plot(c, i, j, color);
}

export function disc(c: Canvas, x: number, y: number, r: number, color: Rgb): void {
  for (let j = -r; j <= r; j++)
    for (let i = -r; i <= r; i++) if (i * i + j * j <= r * r + r) plot(c, x + i, y + j, color);
}

/** A line `width` pixels thick: a disc stamped at every step along it. */
export function line(c: Canvas, x0: number, y0: number, x1: number, y1: number, color: Rgb, width = 1): void {
  const steps = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
  const r = Math.max(0, Math.floor((width - 1) / 2));
  for (let s = 0; s <= steps; s++) {
    const x = x0 + ((x1 - x0) * s) / steps;
    const y = y0 + ((y1 - y0) * s) / steps;
    if (r === 0) plot(c, x, y, color);
    else disc(c, x, y, r, color);
  }
}

export function textWidth(s: string, scale = 1): number {
  return s.length === 0 ? 0 : s.length * (GLYPH_W + 1) * scale - scale;
}

/** Text with its top-left at (x, y); `align` moves the anchor to the centre or right end. */
export function text(
  c: Canvas,
  x: number,
  y: number,
  s: string,
  color: Rgb,
  scale = 1,
  align: 'left' | 'center' | 'right' = 'left',
): void {
  const w = textWidth(s, scale);
  let cx = Math.round(align === 'center' ? x - w / 2 : align === 'right' ? x - w : x);
  for (const ch of s) {
    const g = glyph(ch);
    for (let j = 0; j < GLYPH_H; j++)
      for (let i = 0; i < GLYPH_W; i++) if (g[j]![i]) rect(c, cx + i * scale, y + j * scale, scale, scale, color);
    cx += (GLYPH_W + 1) * scale;
  }
}
