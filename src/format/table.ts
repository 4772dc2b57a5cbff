// Part src/format: owns plain-text tables.
// May import: nothing.
//
// Plain-text tables for the terminal (and code blocks in chat).

/** Narrowest a column is cut to before the table is shown as one block per row instead. */
const MIN_COLUMN = 8;

/**
 * A table with a header rule. With `maxWidth` (the terminal's columns) a table wider than that has its widest columns
 * cut (cells end in `…`) down to a floor; if it still does not fit, each row is shown as a block of `header: value`
 * lines, so nothing is lost to wrapping.
 */
export function table(headers: string[], rows: string[][], maxWidth?: number): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const total = () => widths.reduce((a, w) => a + w, 0) + 2 * (widths.length - 1);
  if (maxWidth !== undefined) {
    while (total() > maxWidth) {
      let widest = 0;
      for (let i = 1; i < widths.length; i++) if (widths[i]! > widths[widest]!) widest = i;
      if (widths[widest]! <= MIN_COLUMN) return blocks(headers, rows);
      widths[widest]!--;
    }
  }
  const cell = (c: string, w: number) => clip(c, w).padEnd(w);
  const line = (cells: string[]) =>
    cells
      .map((c, i) => cell(c ?? '', widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** `s` cut to at most `max` characters, ending in `…` when it was cut. */
export function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function blocks(headers: string[], rows: string[][]): string {
  const pad = Math.max(...headers.map((h) => h.length));
  return rows.map((r) => headers.map((h, i) => `${`${h}:`.padEnd(pad + 1)} ${r[i] ?? ''}`).join('\n')).join('\n\n');
}

export function duration(ms: number | null): string {
  if (ms === null || ms < 0) return '-';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** A configured span exactly, as a person reads it: 30 s, 2 h, 1 h 30 min, 90.5 s -> 1 min 30.5 s. */
export function span(ms: number): string {
  if (ms < 0) return '-';
  const s = ms / 1000;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = Math.round((s % 60) * 1000) / 1000;
  const parts = [h ? `${h} h` : '', m ? `${m} min` : '', rest || (!h && !m) ? `${rest} s` : ''];
  return parts.filter(Boolean).join(' ');
}

export function when(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 16);
}
