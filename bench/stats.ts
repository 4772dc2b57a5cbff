// Small statistics and a table printer for the benchmarks.
export function pct(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i]!;
}

export interface Row {
  metric: string;
  value: string;
  reference: string;
  ratio: string;
  target: string;
}

export function printTable(title: string, rows: Row[]): void {
  const headers: Array<keyof Row> = ['metric', 'value', 'reference', 'ratio', 'target'];
  const widths = headers.map((h) => Math.max(h.length, ...rows.map((r) => r[h].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  console.log(`\n== ${title}`);
  console.log(line(headers));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(headers.map((h) => r[h])));
}

export const ms = (v: number) => `${v.toFixed(1)} ms`;
export const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : '-');
