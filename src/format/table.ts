// Plain-text tables for the terminal (and code blocks in chat).
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (c ?? '').padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
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
