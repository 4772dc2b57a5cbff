// bench_serving's figures from the load client's records (python/sglang/bench_serving.py: calculate_metrics and
// the summary block): throughput per request and token, and TTFT, TPOT, ITL and end-to-end latency as mean,
// median and tails. TPOT is per request, excluding the first token: (latency - ttft) / (output_len - 1).
import type { LevelRun } from './client.ts';

export interface Dist {
  mean: number;
  median: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
}

export interface LevelMetrics {
  concurrency: number;
  requests: number;
  completed: number;
  failed: number;
  firstError?: string;
  durationS: number;
  totalInputTokens: number;
  totalOutputTokens: number;
  requestThroughput: number;
  inputThroughput: number;
  outputThroughput: number;
  totalThroughput: number;
  peakOutputThroughput: number;
  /**
   * Output tokens per second by the server's own clock: its e2e_latency of each request, the closed loop's slots kept
   * busy back to back (Little's law: throughput = requests in flight / latency, here concurrency x output tokens / the
   * sum of latencies). What the client and the SSH tunnel add is not in it, so two configurations of a server
   * compare by the server alone, however busy the bot's machine was. null when a request did not report it; absent
   * in the rows of an older bot (the ledger keeps its levels as they were measured).
   */
  serverOutputThroughput?: number | null;
  peakConcurrentRequests: number;
  /** Mean requests in flight: the sum of latencies over the duration. */
  concurrencyAchieved: number;
  e2eMs: Dist;
  ttftMs: Dist;
  tpotMs: Dist;
  itlMs: Dist;
  client: LevelRun['client'];
}

/** Nearest-rank percentile of sorted values, linear between ranks like numpy's default. */
function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function dist(values: number[]): Dist {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.length ? s.reduce((a, b) => a + b, 0) / s.length : Number.NaN;
  return {
    mean,
    median: pct(s, 50),
    p90: pct(s, 90),
    p95: pct(s, 95),
    p99: pct(s, 99),
    max: s[s.length - 1] ?? Number.NaN,
  };
}

export function levelMetrics(run: LevelRun): LevelMetrics {
  const ok = run.records.filter((r) => r.ok);
  const failed = run.records.filter((r) => !r.ok);
  const durationS = run.durationMs / 1000;
  const input = ok.reduce((s, r) => s + r.inputTokens, 0);
  const output = ok.reduce((s, r) => s + r.outputTokens, 0);
  // Peak output throughput: the most tokens that arrived in any one-second window (bench_serving buckets by second).
  const buckets = new Map<number, number>();
  for (const r of ok)
    for (const [at, n] of r.chunks) buckets.set(Math.floor(at / 1000), (buckets.get(Math.floor(at / 1000)) ?? 0) + n);
  const peakOutput = durationS >= 1 ? Math.max(0, ...buckets.values()) : output / Math.max(durationS, 1e-9);
  const events = run.records.flatMap((r) => [
    [r.start, 1],
    [r.end, -1],
  ]) as Array<[number, number]>;
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let inFlight = 0;
  let peak = 0;
  for (const [, d] of events) {
    inFlight += d;
    peak = Math.max(peak, inFlight);
  }
  const e2e = ok.map((r) => r.end - r.start);
  const serverMs = ok.reduce((s, r) => s + (r.serverE2eMs ?? Number.NaN), 0);
  const slots = Math.min(run.params.concurrency, run.params.requests);
  return {
    concurrency: run.params.concurrency,
    requests: run.params.requests,
    completed: ok.length,
    failed: failed.length,
    firstError: failed[0]?.error,
    durationS,
    totalInputTokens: input,
    totalOutputTokens: output,
    requestThroughput: ok.length / durationS,
    inputThroughput: input / durationS,
    outputThroughput: output / durationS,
    totalThroughput: (input + output) / durationS,
    peakOutputThroughput: peakOutput,
    serverOutputThroughput:
      ok.length > 0 && Number.isFinite(serverMs) && serverMs > 0 ? (output * slots) / (serverMs / 1000) : null,
    peakConcurrentRequests: peak,
    concurrencyAchieved: e2e.reduce((a, b) => a + b, 0) / run.durationMs,
    e2eMs: dist(e2e),
    ttftMs: dist(ok.filter((r) => r.ttftMs !== null).map((r) => r.ttftMs!)),
    tpotMs: dist(ok.filter((r) => r.outputTokens > 1).map((r) => (r.end - r.start - r.ttftMs!) / (r.outputTokens - 1))),
    itlMs: dist(ok.flatMap((r) => r.itlMs)),
    client: run.client,
  };
}
