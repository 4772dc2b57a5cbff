// A smoke result as text: verdict first, the comparison with the last passing run, then one line per answer and
// what the log said. The same text goes to the terminal, a Slack reply, or the scheduled job's channel.
import { table } from '../format/table.ts';
import type { SmokeRow } from '../ledger/smoke.ts';
import { serverMetricsText } from '../lifecycle/sglang-metrics.ts';
import type { SmokeResult } from './run.ts';

const ms = (v: number | null | undefined) => (v === null || v === undefined ? '-' : `${Math.round(v)} ms`);
const tps = (v: number | null | undefined) => (v === null || v === undefined ? '-' : `${v.toFixed(1)} tok/s`);
const signed = (p: number) => `${p >= 0 ? '+' : ''}${p.toFixed(0)}%`;
const iso = (t: number) => new Date(t).toISOString().slice(0, 16).replace('T', ' ');

export function smokeText(r: SmokeResult): string {
  const row = r.row;
  const a = r.attempt;
  const where = a ? `attempt #${a.id} (${row.profile}) on ${row.host}` : `${row.profile} on ${row.host}`;
  const lines = [
    `smoke ${row.verdict.toUpperCase()}: ${where}, ${row.passed}/${row.total} answers right${r.mode === 'launch' ? ', fresh launch' : ''} [smoke run #${row.id}]`,
  ];
  const c = r.comparison;
  const vs = (x: { then: number; pct: number } | null, f: (v: number) => string) =>
    x
      ? ` (${c && c.baselines[0]!.runIds.length > 1 ? 'median of recent passes' : 'last pass'} ${f(x.then)}, ${signed(x.pct)})`
      : '';
  lines.push(
    `  time to first token ${ms(row.ttftMs)}${vs(c?.ttftMs ?? null, ms)}, decode ${tps(row.tokS)}${vs(c?.tokS ?? null, tps)}`,
  );
  if (c && (row.verdict === 'pass' || row.verdict === 'regression')) {
    lines.push(
      c.regressions.length
        ? c.baselines.length > 1
          ? `  REGRESSION: ${c.regressions.join('; ')} (threshold ${c.thresholdPct}%)`
          : `  REGRESSION against ${c.against.join(' and ')}: ${c.regressions.join(', ')} (threshold ${c.thresholdPct}%)`
        : `  compared with ${c.baselines.map((b) => b.label).join(' and ')}: within ${c.thresholdPct}%`,
    );
  } else if (row.verdict === 'pass') {
    lines.push('  no earlier passing run to compare with: this one is the baseline');
  }
  if (r.prompts.length) {
    lines.push(
      table(
        ['', 'prompt', 'endpoint', 'TTFT', 'decode', 'answer / problem'],
        r.prompts.map((p) => [
          p.ok ? 'ok' : 'FAIL',
          p.name,
          p.endpoint,
          ms(p.ttftMs),
          // A few tokens' pace is mostly network jitter: shown only for longer answers.
          p.tokens >= 16 ? tps(p.decodeTokS) : '-',
          p.ok
            ? JSON.stringify(p.answer.slice(0, 60))
            : `${p.problems.join('; ')}${p.answer ? ` (got ${JSON.stringify(p.answer.slice(0, 40))})` : ''}`,
        ]),
      )
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n'),
    );
  }
  lines.push(`  health after: ${r.health.status ?? `no answer (${r.health.error})`}`);
  if (r.serverMetrics) lines.push(`  server /metrics: ${serverMetricsText(r.serverMetrics)}`);
  const d = r.log?.diagnosis;
  if (r.log?.crashed && d) {
    lines.push(`  CRASH ${d.category} during ${d.phase}: ${d.summary}`);
    for (const e of d.evidence.slice(0, 4)) lines.push(`    ${String(e.line).padStart(6)}: ${e.text.slice(0, 200)}`);
  } else if (r.log) {
    lines.push(`  log: no crash in the ${r.log.bytes} bytes written during the smoke`);
    // A failure record alone (crashedBeforeExit): shown, not counted against the server; that it served on is said
    // only when its health check answered 200 after.
    if (d && d.category !== 'none') {
      const e = d.evidence[0];
      const what = e ? `${e.line}: ${e.text.slice(0, 200)}` : d.summary;
      lines.push(
        r.health.status === 200
          ? `  log: a failure record the server served on: ${what}`
          : `  log: a failure record, the server's health check not answered 200 after it: ${what}`,
      );
    }
  }
  for (const n of r.notes) lines.push(`  ${n}`);
  return lines.join('\n');
}

export function historyText(rows: SmokeRow[]): string {
  if (rows.length === 0) return 'no smoke runs yet: run one with smoke --host H';
  return table(
    ['#', 'when (UTC)', 'host', 'profile', 'attempt', 'by', 'verdict', 'right', 'TTFT', 'decode', 'vs #', 'summary'],
    rows.map((r) => [
      String(r.id),
      iso(r.at),
      r.host,
      r.profile,
      r.attemptId === null ? '-' : `#${r.attemptId}`,
      r.actor,
      r.verdict,
      `${r.passed}/${r.total}`,
      ms(r.ttftMs),
      tps(r.tokS),
      r.baselineId === null ? '-' : String(r.baselineId),
      r.summary.slice(0, 80),
    ]),
  );
}
