// The load benchmark against the stand-in set to a known time to first token and per-token delay: the figures it
// reports must match what the stand-in was told, at concurrency 1 and 64, over the SSH tunnel. Plus the chart.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { benchChartSvg, renderBenchChart } from '../../src/bench-load/chart.ts';
import { type LevelMetrics, levelMetrics } from '../../src/bench-load/metrics.ts';
import { clientVerdict } from '../../src/bench-load/report.ts';
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

describe('bench accuracy', () => {
  let data: BenchData;
  let text: string;
  beforeAll(async () => {
    const r = await b.run(`bench --concurrency 1,64 --requests 1,128 --input-len 64 --output-len ${OUT}`);
    expect(r.exitCode, r.text).toBe(0);
    data = r.data as BenchData;
    text = r.text;
  }, 90_000);

  // How close the figures come to the stand-in's set TTFT and per-token delay is a speed figure, and speed goes to
  // `npm run bench` (bench/load.ts: within 5%): on a loaded machine timers fire late and the tunnel queues, which
  // moves a figure without anything being wrong. What holds under any load is asserted here: every request and
  // token counted, c at a time, and no figure faster than the stand-in can answer (it sends the first token TTFT
  // after admission and each next one TPOT after the one before, never sooner), with the totals' arithmetic exact.
  for (const [i, c] of [1, 64].entries()) {
    it(`reports every request and token of concurrency ${c}, c at a time, none faster than the stand-in answers`, () => {
      const m = data.levels[i]!;
      expect(m.concurrency).toBe(c);
      const n = c === 1 ? 1 : 2 * c; // one request alone; two waves of 64
      expect(m.completed).toBe(n);
      expect(m.failed).toBe(0);
      expect(m.totalOutputTokens).toBe(n * OUT);
      expect(m.peakConcurrentRequests).toBe(c);
      const note = `(ttft ${JSON.stringify(m.ttftMs)}, e2e ${JSON.stringify(m.e2eMs)})`;
      // Node's timers round to the millisecond: 1 ms of slack below each floor.
      expect(m.ttftMs.median, note).toBeGreaterThanOrEqual(TTFT - 1);
      expect(m.e2eMs.median, note).toBeGreaterThanOrEqual(TTFT + (OUT - 1) * TPOT - 1);
      expect(m.ttftMs.max, note).toBeLessThanOrEqual(m.e2eMs.max);
      // c requests at a time, each at least TTFT + (OUT - 1) x TPOT long: no more tokens a second than that.
      expect(m.outputThroughput).toBeLessThanOrEqual(((c * OUT * 1000) / (TTFT + (OUT - 1) * TPOT - 1)) * 1.0001);
      expect(m.outputThroughput).toBeCloseTo(m.totalOutputTokens / m.durationS, 6);
      expect(m.requestThroughput).toBeCloseTo(n / m.durationS, 6);
      // TPOT is a request's time after its first token over the tokens after it: never negative.
      expect(m.tpotMs.mean).toBeGreaterThanOrEqual(0);
    });
  }

  it('reports like bench_serving, keeps the sweep in the ledger with its attempt, and charts it as a PNG', async () => {
    expect(text).toMatch(new RegExp(`bench: attempt #1 \\(small\\) on gpu, input 64 / output ${OUT} tokens`));
    expect(text).toMatch(/conc\s+ok\s+req\/s\s+out tok\/s\s+total tok\/s\s+peak out\s+TTFT ms mean\/p50\/p99/);
    // Whether the client kept up is its own measure, told either way (clientVerdict, below, decides it).
    expect(text).toMatch(
      /load client: at most \d+% of one core, event-loop delay p99 [\d.]+ ms( \(not the bottleneck\)| -- WARNING: the client may have limited these figures)/,
    );
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

describe("bench figures from the load client's records (bench_serving's formulas)", () => {
  it('counts, throughputs, peaks and latency distributions of a known run, exactly', () => {
    // Two requests that completed and one the server refused, over 2 s; each chunk one token.
    const m = levelMetrics({
      params: { concurrency: 3, requests: 3, inputLen: 10, outputLen: 4 },
      durationMs: 2000,
      client: { cpuPct: 3, loopDelayP99Ms: 11, loopDelayMaxMs: 12 },
      records: [
        {
          ok: true,
          start: 0,
          end: 1000,
          inputTokens: 10,
          outputTokens: 4,
          ttftMs: 400,
          itlMs: [200, 200, 200],
          chunks: [
            [400, 1],
            [600, 1],
            [800, 1],
            [1000, 1],
          ],
          serverE2eMs: 900,
        },
        {
          ok: true,
          start: 100,
          end: 1600,
          inputTokens: 10,
          outputTokens: 3,
          ttftMs: 500,
          itlMs: [500, 500],
          chunks: [
            [600, 1],
            [1100, 1],
            [1600, 1],
          ],
          serverE2eMs: 1100,
        },
        {
          ok: false,
          error: 'HTTP 500',
          start: 200,
          end: 300,
          inputTokens: 10,
          outputTokens: 0,
          ttftMs: null,
          itlMs: [],
          chunks: [],
          serverE2eMs: null,
        },
      ],
    });
    expect(m).toMatchObject({
      concurrency: 3,
      requests: 3,
      completed: 2,
      failed: 1,
      firstError: 'HTTP 500',
      durationS: 2,
      totalInputTokens: 20,
      totalOutputTokens: 7,
      requestThroughput: 1,
      inputThroughput: 10,
      outputThroughput: 3.5,
      totalThroughput: 13.5,
      // Second 0 saw 4 tokens arrive (at 400, 600, 600, 800 ms), second 1 three.
      peakOutputThroughput: 4,
      // The refused request was in flight too, from 200 to 300 ms.
      peakConcurrentRequests: 3,
      // (1000 + 1500) ms of requests over 2000 ms.
      concurrencyAchieved: 1.25,
      // By the server's clock: 7 tokens in (900 + 1100) ms of requests, 3 slots kept busy: 7 x 3 / 2 s.
      serverOutputThroughput: 10.5,
      client: { cpuPct: 3 },
    });
    expect(m.e2eMs).toEqual({ mean: 1250, median: 1250, p90: 1450, p95: 1475, p99: 1495, max: 1500 });
    expect(m.ttftMs).toMatchObject({ mean: 450, median: 450, max: 500 });
    // TPOT per request after its first token: (1000 - 400) / 3 = 200 and (1500 - 500) / 2 = 500.
    expect(m.tpotMs).toMatchObject({ mean: 350, median: 350, max: 500 });
    // ITL over every gap: 200, 200, 200, 500, 500.
    expect(m.itlMs).toMatchObject({ mean: 320, median: 200, p90: 500, max: 500 });
  });
});

describe("the server-clock throughput (the server's e2e_latency per request)", () => {
  const rec = (serverE2eMs: number | null) => ({
    ok: true,
    start: 0,
    end: 1000,
    inputTokens: 10,
    outputTokens: 10,
    ttftMs: 100,
    itlMs: [],
    chunks: [[1000, 10]] as Array<[number, number]>,
    serverE2eMs,
  });
  const run = (records: ReturnType<typeof rec>[]) =>
    levelMetrics({
      params: { concurrency: 2, requests: records.length, inputLen: 10, outputLen: 10 },
      durationMs: 5000,
      client: { cpuPct: 1, loopDelayP99Ms: 1, loopDelayMaxMs: 1 },
      records,
    });
  it('is the slots kept busy by the latencies the server gave, whatever the wall time was', () => {
    // 4 requests of 10 tokens, 250 ms each by the server's clock, 2 at once: 40 tokens in 0.5 s. The wall said 5 s.
    const m = run([rec(250), rec(250), rec(250), rec(250)]);
    expect(m.serverOutputThroughput).toBe(80);
    expect(m.outputThroughput).toBe(8);
  });
  it('is null when one request did not report its latency (an older server)', () => {
    expect(run([rec(250), rec(null)]).serverOutputThroughput).toBeNull();
  });
});

describe("the bench's verdict on its own client", () => {
  const at = (cpuPct: number, loopDelayP99Ms: number) =>
    ({ client: { cpuPct, loopDelayP99Ms, loopDelayMaxMs: loopDelayP99Ms } }) as LevelMetrics;
  it('is the worst level: busy past 80% of a core or an event loop more than 50 ms behind warns', () => {
    expect(clientVerdict([at(12, 11), at(40, 20)])).toBe(
      'load client: at most 40% of one core, event-loop delay p99 20.0 ms (not the bottleneck)',
    );
    for (const worst of [at(81, 11), at(10, 51)])
      expect(clientVerdict([at(5, 10), worst])).toMatch(/ -- WARNING: the client may have limited these figures$/);
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
