// The load benchmark against the stand-in set to a known time to first token and per-token delay: the figures it
// reports must match what the stand-in was told, at concurrency 1 and 64, over the SSH tunnel. Plus the chart.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { benchChartSvg, renderBenchChart } from '../../src/bench-load/chart.ts';
import type { LevelMetrics } from '../../src/bench-load/metrics.ts';
import { decodePng } from '../helpers/png.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';
import { type SmokeBot, smokeBot } from './helpers.ts';

const shared = sshdWithBots();
let b: SmokeBot;
// Long enough that the stand-in's own admission of a 64-request burst (1-4 ms per request on a busy 2-core box,
// 100-250 ms for the last of them) stays small against it.
const TTFT = 5000;
const TPOT = 40;
// Short answers: the stand-in arms one timer per token at admission, which makes a 64-request burst slow to admit.
const OUT = 32;

beforeAll(async () => {
  b = smokeBot(shared, { env: { STANDIN_TTFT_MS: String(TTFT), STANDIN_TPOT_MS: String(TPOT) } });
  const l = await b.run(`launch small --port ${await freePort()} --no-check`);
  expect(l.exitCode, l.text).toBe(0);
});

interface BenchData {
  id: number;
  attemptId: number;
  levels: LevelMetrics[];
  files: Array<{ path: string }>;
}

const within = (measured: number, expected: number, pct = 5, note = '') =>
  expect(Math.abs(measured - expected) / expected, `${measured} vs ${expected} ${note}`).toBeLessThan(pct / 100);

describe('bench accuracy', () => {
  let data: BenchData;
  let text: string;
  beforeAll(async () => {
    const r = await b.run(`bench --concurrency 1,64 --requests 1,128 --input-len 64 --output-len ${OUT}`);
    expect(r.exitCode, r.text).toBe(0);
    data = r.data as BenchData;
    text = r.text;
  }, 90_000);

  for (const [i, c] of [1, 64].entries()) {
    it(`reports TTFT, ITL and output throughput within 5% of the stand-in's at concurrency ${c}`, () => {
      const m = data.levels[i]!;
      expect(m.concurrency).toBe(c);
      const n = c === 1 ? 1 : 2 * c; // one request alone; two waves of 64
      expect(m.completed).toBe(n);
      expect(m.totalOutputTokens).toBe(n * OUT);
      const note = `(ttft ${JSON.stringify(m.ttftMs)}, client ${JSON.stringify(m.client)})`;
      within(m.ttftMs.median, TTFT, 5, note);
      within(m.itlMs.mean, TPOT);
      within(m.tpotMs.mean, TPOT);
      // c requests at a time, each TTFT + (OUT - 1) x TPOT long.
      within(m.outputThroughput, (c * OUT * 1000) / (TTFT + (OUT - 1) * TPOT));
      within(m.e2eMs.median, TTFT + (OUT - 1) * TPOT);
      expect(m.peakConcurrentRequests).toBe(c);
      // The client kept up: far from a full core.
      expect(m.client.cpuPct).toBeLessThan(80);
    });
  }

  it('reports like bench_serving, keeps the sweep in the ledger with its attempt, and charts it as a PNG', async () => {
    expect(text).toMatch(new RegExp(`bench: attempt #1 \\(small\\) on gpu, input 64 / output ${OUT} tokens`));
    expect(text).toMatch(/conc\s+ok\s+req\/s\s+out tok\/s\s+total tok\/s\s+peak out\s+TTFT ms mean\/p50\/p99/);
    expect(text).toMatch(/not the bottleneck/);
    const h = await b.run('bench --history --json');
    const rows = h.data as Array<BenchData & { chartPath: string }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.attemptId).toBe(1);
    expect(rows[0]!.levels.map((l) => l.concurrency)).toEqual([1, 64]);
    const txt = await b.run('bench --history');
    expect(txt.text).toMatch(new RegExp(`#1\\s+64\\/${OUT}\\s+1: [\\d.]+, 64: `));
    const png = readFileSync(rows[0]!.chartPath);
    expect(decodePng(png)).toMatchObject({ width: 1000, height: 460 });
    expect(data.files[0]!.path).toBe(rows[0]!.chartPath);
  });
});

describe('bench chart', () => {
  const level = (c: number, out: number, ttft: number): LevelMetrics => {
    const d = (v: number) => ({ mean: v, median: v, p90: v, p95: v * 1.1, p99: v * 1.3, max: v * 1.5 });
    return {
      concurrency: c,
      requests: 2 * c,
      completed: 2 * c,
      failed: 0,
      durationS: 10,
      totalInputTokens: 0,
      totalOutputTokens: 0,
      requestThroughput: c / 5,
      inputThroughput: out * 4,
      outputThroughput: out,
      totalThroughput: out * 5,
      peakOutputThroughput: out * 1.2,
      peakConcurrentRequests: c,
      concurrencyAchieved: c,
      e2eMs: d(ttft + 5000),
      ttftMs: d(ttft),
      tpotMs: d(20 + c / 4),
      itlMs: d(20 + c / 4),
      client: { cpuPct: 5, loopDelayP99Ms: 11, loopDelayMaxMs: 12 },
    };
  };

  it('renders throughput and latency against concurrency as a readable PNG (resvg, bundled font)', async () => {
    const levels = [level(1, 40, 120), level(4, 150, 130), level(16, 560, 180), level(64, 1900, 420)];
    const png = await renderBenchChart(levels, 'small on gpu, attempt #1, in 1024 / out 256');
    expect(png.length).toBeGreaterThan(3_000);
    expect(png.length).toBeLessThan(300_000);
    const img = decodePng(png);
    expect(img).toMatchObject({ width: 1000, height: 460 });
    // A chart, not a blank page: lines in the series colours, dark text, anti-aliased edges.
    expect(img.near([31, 119, 180])).toBeGreaterThan(500);
    expect(img.near([214, 39, 40])).toBeGreaterThan(300);
    expect(img.dark()).toBeGreaterThan(1000);
    expect(img.colours()).toBeGreaterThan(50);
    // Lower case and units reach the picture as text (resvg draws it with the bundled DejaVu Sans).
    const svg = benchChartSvg(levels, 'small on gpu, attempt #1, in 1024 / out 256');
    for (const s of ['Throughput (tokens/s)', 'Latency (ms, log scale)', 'concurrency', 'TTFT p50', 'small on gpu'])
      expect(svg).toContain(s);
  });

  it('draws trials on a linear axis with its own label and the SLO as dashed lines on the latency panel (autopilot)', async () => {
    // Trials 1..3 (their concurrency field holds the trial number), one SLO term above every figure.
    const levels = [level(1, 900, 150), level(2, 1100, 170), level(3, 1300, 200)];
    const slo = [
      { label: 'SLO ttft_p99 20000 ms', value: 20_000 },
      { label: 'SLO itl_p50 40 ms', value: 40 },
    ];
    const svg = benchChartSvg(levels, 'autopilot run #1', { xLabel: 'trial', latencyLines: slo });
    expect(svg).toContain('>trial</text>');
    expect(svg).not.toContain('>concurrency</text>');
    for (const r of slo) expect(svg).toContain(`>${r.label}</text>`);
    const dashed = [...svg.matchAll(/<line [^>]*y1="([\d.]+)"[^>]*stroke-dasharray/g)].map((m) => Number(m[1]));
    expect(dashed).toHaveLength(2);
    // The 20 s line is above every figure (E2E p50 is 5.2 s) yet inside the plot area, which starts 52 px under the
    // panel's top at 40: the scale takes the objective in. And it is above the 40 ms one.
    for (const y of dashed) {
      expect(y).toBeGreaterThanOrEqual(92);
      expect(y).toBeLessThan(460);
    }
    expect(dashed[0]!).toBeLessThan(dashed[1]!);
    // Linear x: the three trials are evenly spaced (a log2 axis would not space 1, 2, 3 evenly).
    const cx = [...svg.matchAll(/<circle cx="([\d.]+)"[^>]*r="3.5" fill="#1f77b4"/g)].map((m) => Number(m[1]));
    expect(cx.slice(0, 3)[1]! - cx[0]!).toBeCloseTo(cx[2]! - cx[1]!, 0);
    // And the lines reach the picture: more dark pixels than the same chart without them.
    const withLines = decodePng(
      await renderBenchChart(levels, 'autopilot run #1', { xLabel: 'trial', latencyLines: slo }),
    );
    const without = decodePng(await renderBenchChart(levels, 'autopilot run #1', { xLabel: 'trial' }));
    expect(withLines.dark()).toBeGreaterThan(without.dark() + 300);
  });
});
