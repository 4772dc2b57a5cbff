// Decodes a PNG (pngjs) and counts what a person would see: pixels near a colour, dark (text) pixels.
import { PNG } from 'pngjs';

export interface Decoded {
  width: number;
  height: number;
  near(rgb: [number, number, number], tolerance?: number): number;
  dark(): number;
  /** Distinct colours (a blank or one-colour image has 1 or 2). */
  colours(): number;
}

export function decodePng(buf: Buffer): Decoded {
  const png = PNG.sync.read(buf);
  const d = png.data;
  const count = (f: (r: number, g: number, b: number) => boolean) => {
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (f(d[i]!, d[i + 1]!, d[i + 2]!)) n++;
    return n;
  };
  return {
    width: png.width,
    height: png.height,
    near: ([R, G, B], t = 24) =>
      count((r, g, b) => Math.abs(r - R) <= t && Math.abs(g - G) <= t && Math.abs(b - B) <= t),
    dark: () => count((r, g, b) => r < 80 && g < 80 && b < 80),
    colours: () => {
      const s = new Set<number>();
      for (let i = 0; i < d.length; i += 4) s.add((d[i]! << 16) | (d[i + 1]! << 8) | d[i + 2]!);
      return s.size;
    },
  };
}
