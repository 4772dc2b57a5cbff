// A benchmark as text: one row per concurrency level with bench_serving's figures, and whether the client kept up.
import { table } from '../format/table.ts';
import type { Dist, LevelMetrics } from './metrics.ts';
import type { BenchRow } from './store.ts';

const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '-');
const trio = (d: Dist) => `${f1(d.mean)} / ${f1(d.median)} / ${f1(d.p99)}`;

/** The client is the bottleneck when it is busy most of a core, or its event loop falls behind by more than this. */
const CLIENT_CPU_LIMIT_PCT = 80;
const CLIENT_LOOP_LIMIT_MS = 50;

export function clientVerdict(levels: LevelMetrics[]): string {
  const worst = levels.reduce(
    (w, l) => ({ cpu: Math.max(w.cpu, l.client.cpuPct), loop: Math.max(w.loop, l.client.loopDelayP99Ms) }),
    { cpu: 0, loop: 0 },
  );
  const busy = worst.cpu > CLIENT_CPU_LIMIT_PCT || worst.loop > CLIENT_LOOP_LIMIT_MS;
  return `load client: at most ${worst.cpu.toFixed(0)}% of one core, event-loop delay p99 ${worst.loop.toFixed(1)} ms${busy ? ' -- WARNING: the client may have limited these figures' : ' (not the bottleneck)'}`;
}

export function benchText(row: BenchRow, chartPath: string | null): string {
  const p = row.params;
  const lines = [
    `bench: attempt #${row.attemptId} (${row.profile}) on ${row.host}, input ${p.inputLen} / output ${p.outputLen} tokens, streamed /generate [bench run #${row.id}]`,
    table(
      [
        'conc',
        'ok',
        'req/s',
        'out tok/s',
        'total tok/s',
        'peak out',
        'TTFT ms mean/p50/p99',
        'TPOT ms mean/p50/p99',
        'ITL ms mean/p50/p99',
        'E2E ms mean/p50/p99',
      ],
      row.levels.map((l) => [
        String(l.concurrency),
        `${l.completed}/${l.requests}`,
        l.requestThroughput.toFixed(2),
        f1(l.outputThroughput),
        f1(l.totalThroughput),
        f1(l.peakOutputThroughput),
        trio(l.ttftMs),
        trio(l.tpotMs),
        trio(l.itlMs),
        trio(l.e2eMs),
      ]),
    )
      .split('\n')
      .map((x) => `  ${x}`)
      .join('\n'),
  ];
  for (const l of row.levels) {
    if (l.failed === 0) continue;
    const gone = l.completed === 0 ? `; the server stopped answering: see its log with logs --host ${row.host}` : '';
    lines.push(`  concurrency ${l.concurrency}: ${l.failed} failed (${l.firstError})${gone}`);
  }
  lines.push(`  ${clientVerdict(row.levels)}`);
  if (chartPath) lines.push(`  chart: ${chartPath}`);
  return lines.join('\n');
}

export function benchHistoryText(rows: BenchRow[]): string {
  if (rows.length === 0) return 'no benchmarks yet: run one with bench --host H';
  return table(
    ['#', 'when (UTC)', 'host', 'profile', 'attempt', 'in/out', 'concurrency: output tok/s'],
    rows.map((r) => [
      String(r.id),
      new Date(r.at).toISOString().slice(0, 16).replace('T', ' '),
      r.host,
      r.profile,
      r.attemptId === null ? '-' : `#${r.attemptId}`,
      `${r.params.inputLen}/${r.params.outputLen}`,
      r.levels.map((l) => `${l.concurrency}: ${f1(l.outputThroughput)}`).join(', '),
    ]),
  );
}
