// Part src/bench-load: owns load benchmarks (bench_serving's figures), their history and their chart.
// May import: charts, errors.ts, format, hosts, ledger, lifecycle, smoke.
//
// A load benchmark of the server running on a host: a warm-up request, then a sweep over concurrency levels, each
// measured like sglang.bench_serving; kept in the ledger with the attempt it ran on, and drawn as a PNG chart.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.ts';
import type { Attempt } from '../ledger/attempts.ts';
import type { ApiKeyContext } from '../lifecycle/api-key.ts';
import { serverAuth } from '../lifecycle/api-key.ts';
import { type Engine, hostOf } from '../lifecycle/engine.ts';
import { readServerMetrics, type ServerMetrics } from '../lifecycle/sglang-metrics.ts';
import { renderBenchChart } from './chart.ts';
import { runLevel } from './client.ts';
import { type LevelMetrics, levelMetrics } from './metrics.ts';
import { type BenchParams, type BenchRow, createBenchStore } from './store.ts';

export interface BenchRequest extends BenchParams {
  hostName: string;
  actor: string;
  origin: string;
  timeoutMs?: number;
}

export interface BenchResult {
  row: BenchRow;
  attempt: Attempt;
  png: Buffer;
  chartPath: string;
  /** The server's own /metrics after the sweep (SGLang --enable-metrics), or why not. */
  serverMetrics: ServerMetrics | { error: string };
}

/** Requests for level `i`: as asked (one number for all, or one per level), else two full waves, at least 8. */
export const requestsFor = (concurrency: number, asked: number[] | null, i: number) =>
  asked ? (asked[i] ?? asked[0]!) : Math.max(8, 2 * concurrency);

/** What a benchmark touches: the attempt on the host, its server's key, the clock, the data dir and the bench table. */
export type BenchContext = ApiKeyContext & Pick<Engine, 'attempts' | 'clock' | 'ledger'>;

export async function runBench(
  engine: BenchContext,
  req: BenchRequest,
  say: (t: string) => void,
): Promise<BenchResult> {
  const attempt = engine.attempts.activeOn(req.hostName);
  if (!attempt)
    throw new UserError(
      `nothing runs on ${req.hostName}`,
      `launch a profile first: launch PROFILE --host ${req.hostName}`,
    );
  if (attempt.status !== 'ready')
    throw new UserError(
      `attempt #${attempt.id} on ${req.hostName} is still ${attempt.status}`,
      'wait until it is ready',
    );
  // A multi-node server is served by its head, whichever of its hosts was named.
  const { host } = hostOf(engine, attempt.host);
  const started = engine.clock.now();
  const wall = Date.now();
  // Warm-up, not measured: one short request per slot of the widest level, all at once. The first burst of
  // concurrent requests pays for lazy set-up on both ends (connection paths, JIT, allocators) that would otherwise
  // inflate the first measured level's TTFT (bench_serving warms up with one request; a burst covers that too).
  const widest = Math.max(...req.concurrencies);
  // Every level (and the warm-up) gets its own prompts: a prompt seen before would hit the server's prefix cache and
  // make later levels look faster than they are.
  const seed = (started % 1_000_003) + 1;
  const auth = await serverAuth(engine, attempt);
  const warm = await runLevel(host, attempt.port, {
    headers: auth,
    seed,
    concurrency: widest,
    requests: widest,
    inputLen: req.inputLen,
    outputLen: Math.min(8, req.outputLen),
    timeoutMs: req.timeoutMs,
  });
  const bad = warm.records.find((r) => !r.ok);
  if (bad)
    throw new UserError(
      `a warm-up request to attempt #${attempt.id} failed: ${bad.error ?? 'no answer'}`,
      `check the server with: probe --host ${req.hostName}`,
    );
  const levels: LevelMetrics[] = [];
  for (const [i, c] of req.concurrencies.entries()) {
    const run = await runLevel(host, attempt.port, {
      headers: auth,
      seed: seed + 7919 * (i + 1),
      concurrency: c,
      requests: requestsFor(c, req.requests, i),
      inputLen: req.inputLen,
      outputLen: req.outputLen,
      timeoutMs: req.timeoutMs,
    });
    const m = levelMetrics(run);
    levels.push(m);
    say(
      `  concurrency ${c}: ${m.completed}/${m.requests} ok, ${m.outputThroughput.toFixed(1)} output tok/s, TTFT p50 ${m.ttftMs.median.toFixed(1)} ms, ITL mean ${m.itlMs.mean.toFixed(1)} ms`,
    );
    if (m.completed === 0) break; // the server is gone: the next levels would only time out
  }
  const title = `${attempt.profile} on ${req.hostName}, attempt #${attempt.id}, in ${req.inputLen} / out ${req.outputLen}, ${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const png = await renderBenchChart(levels, title);
  const dir = join(engine.loaded.dataDir, 'charts');
  mkdirSync(dir, { recursive: true });
  const chartPath = join(
    dir,
    `bench-attempt${attempt.id}-${new Date(started).toISOString().replace(/[:.]/g, '-')}.png`,
  );
  writeFileSync(chartPath, png);
  const row = createBenchStore(engine.ledger).add({
    at: started,
    host: req.hostName,
    profile: attempt.profile,
    attemptId: attempt.id,
    actor: req.actor,
    origin: req.origin,
    params: {
      concurrencies: req.concurrencies,
      inputLen: req.inputLen,
      outputLen: req.outputLen,
      requests: req.requests,
    },
    levels,
    chartPath,
    durationMs: Date.now() - wall,
  });
  const serverMetrics = await readServerMetrics(host, attempt.port);
  return { row, attempt, png, chartPath, serverMetrics };
}
