// The stand-in's performance model (standin/perf.mjs): pacing that answers the tuned knobs, deterministically, and
// the memory limit that turns a too-greedy configuration into the warmup OOM.
import { describe, expect, it } from 'vitest';
// @ts-expect-error: the stand-in is plain JavaScript, without type declarations
import { buildParser } from '../../standin/flags.mjs';
// @ts-expect-error: the stand-in is plain JavaScript, without type declarations
import { EAGER, memoryOverflow, perfModel } from '../../standin/perf.mjs';
// @ts-expect-error: the stand-in is plain JavaScript, without type declarations
import { resolveServerArgs } from '../../standin/resolve.mjs';
import { GLM5, http, QWEN, sleep, start } from './helpers.ts';

const WORKING = [
  '--model-path',
  GLM5,
  '--tp',
  '8',
  '--quantization',
  'modelopt_fp4',
  '--attention-backend',
  'nsa',
  '--nsa-prefill-backend',
  'tilelang',
  '--nsa-decode-backend',
  'tilelang',
  '--kv-cache-dtype',
  'bfloat16',
  '--cuda-graph-max-bs',
  '256',
];

// biome-ignore lint/suspicious/noExplicitAny: the stand-in is plain JavaScript
function cfgOf(extra: string[] = []): any {
  const { parser, fields } = buildParser('f', () => {});
  const p = parser.parse([...WORKING, ...extra]);
  return resolveServerArgs(p.values, p.seen, 'f', fields);
}

/** Closed-loop throughput of `c` clients, `out` tokens each, as the model paces them (first draws of its noise). */
function throughput(extra: string[], c = 16, out = 32): number {
  const m = perfModel(cfgOf(extra));
  const ttft = m.ttftMs(256);
  const itl = m.itlMs(Math.min(c, m.maxRunning));
  return (Math.min(c, m.maxRunning) * out * 1000) / (ttft + (out - 1) * itl);
}

describe('performance model', () => {
  it('is slower without CUDA graphs, and above the largest captured batch size', () => {
    const graphs = perfModel(cfgOf()).itlMs(16);
    const eager = perfModel(cfgOf(['--disable-cuda-graph'])).itlMs(16);
    expect(eager / graphs).toBeGreaterThan(EAGER * 0.95);
    const small = perfModel(cfgOf(['--cuda-graph-max-bs', '8']));
    expect(small.itlMs(16)).toBeGreaterThan(small.itlMs(8) * 1.4);
  });

  it('moves throughput with the memory fraction, the prefill chunk, the policy and the conservativeness', () => {
    const base = throughput([]);
    expect(throughput(['--mem-fraction-static', '0.93'])).toBeGreaterThan(base);
    expect(throughput(['--mem-fraction-static', '0.8'])).toBeLessThan(base);
    expect(throughput(['--chunked-prefill-size', '1024'])).toBeGreaterThan(base);
    expect(throughput(['--schedule-policy', 'lpm'])).toBeLessThan(base);
    expect(throughput(['--schedule-conservativeness', '0.6'])).toBeGreaterThan(base);
    expect(throughput(['--schedule-conservativeness', '0.2'])).toBeLessThan(base);
    // Fewer running requests than clients: a lower batch (lower ITL), and a queue.
    const capped = perfModel(cfgOf(['--max-running-requests', '4']));
    expect(capped.maxRunning).toBe(4);
    expect(capped.itlMs(4)).toBeLessThan(perfModel(cfgOf()).itlMs(16));
  });

  it('is deterministic per configuration, with a little noise between requests', () => {
    const a = perfModel(cfgOf());
    const b = perfModel(cfgOf());
    const xs = Array.from({ length: 5 }, () => a.itlMs(16));
    expect(Array.from({ length: 5 }, () => b.itlMs(16))).toEqual(xs);
    expect(new Set(xs).size).toBeGreaterThan(1);
    for (const x of xs) expect(Math.abs(x / xs[0]! - 1)).toBeLessThan(0.05);
  });

  it('overflows the card when the static pool, the graphs and the prefill chunk do not fit', () => {
    expect(memoryOverflow(cfgOf(['--mem-fraction-static', '0.93']))).toBeNull();
    expect(memoryOverflow(cfgOf(['--mem-fraction-static', '0.95']))).not.toBeNull();
    // Bigger chunks need more activation memory: the same fraction no longer fits.
    expect(memoryOverflow(cfgOf(['--mem-fraction-static', '0.93', '--chunked-prefill-size', '16384']))).not.toBeNull();
  });

  it('an overflowing configuration dies of the CUDA OOM in the warmup prefill, after the graphs were captured', async (ctx) => {
    const { p } = await start(ctx, [...WORKING, '--mem-fraction-static', '0.96']);
    const e = await p.waitExit();
    expect(e.signal).toBe('SIGKILL');
    expect(p.out).toContain('Capture cuda graph end');
    expect(p.out).toMatch(/^torch\.OutOfMemoryError: CUDA out of memory\./m);
    expect(p.out).not.toContain('Capture cuda graph failed');
  });

  it('holds requests above --max-running-requests until a slot frees, and reports the knobs in /server_info', async (ctx) => {
    const { p, port } = await start(ctx, [
      ...WORKING,
      '--max-running-requests',
      '2',
      '--schedule-policy',
      'lof',
      '--enable-metrics',
    ]);
    await p.waitFor(/The server is fired up and ready to roll!/);
    const info = JSON.parse((await http(port, '/server_info')).body);
    expect(info).toMatchObject({ max_running_requests: 2, schedule_policy: 'lof', mem_fraction_static: 0.895 });
    // Counted from here (the warmup prefilled too).
    const warm = p.out.match(/Prefill batch, /g)?.length ?? 0;
    const prefills = () => (p.out.match(/Prefill batch, /g)?.length ?? 0) - warm;
    const gauge = async (name: string) =>
      Number(new RegExp(`^sglang:${name}\\{[^}]*\\} (\\d+)`, 'm').exec((await http(port, '/metrics')).body)?.[1]);
    // Two long generations fill both slots (each told by its own prefill; they end when the test aborts them) ...
    const long = { sampling_params: { max_new_tokens: 4000, ignore_eos: true } };
    const first = new AbortController();
    const second = new AbortController();
    const held = [
      http(port, '/generate', { body: { text: 'one', ...long }, signal: first.signal }).catch(() => null),
      http(port, '/generate', { body: { text: 'two two', ...long }, signal: second.signal }).catch(() => null),
    ];
    await p.waitFor(/#running-req: 1, /);
    // ... so a third waits in the queue, not prefilled, until one of them goes.
    const third = http(port, '/generate', { body: { text: 'three', sampling_params: { max_new_tokens: 4 } } });
    const end = Date.now() + 8000;
    while ((await gauge('num_queue_reqs')) !== 1) {
      if (Date.now() > end) throw new Error('the third request never queued');
      await sleep(5);
    }
    expect(await gauge('num_running_reqs')).toBe(2);
    expect(prefills()).toBe(2);
    first.abort();
    expect((await third).status).toBe(200);
    expect(prefills()).toBe(3);
    second.abort();
    await Promise.all(held);
    // No prefill ever ran beside two others (a decode batch of the two long ones is 2, as it should be).
    expect(p.out).toMatch(/Prefill batch, [^\n]*#running-req: 1, /);
    expect(p.out).not.toMatch(/Prefill batch, [^\n]*#running-req: 2, /);
  });

  it('times its latency histograms finely: tokens a busy machine releases together still have an ITL above 0', async (ctx) => {
    const { p, port } = await start(ctx, ['--model-path', QWEN, '--enable-metrics'], {
      STANDIN_TTFT_MS: '300',
      STANDIN_TPOT_MS: '2',
    });
    await p.waitFor(/The server is fired up and ready to roll!/);
    const body = { text: 'tell me a story', sampling_params: { max_new_tokens: 4, ignore_eos: true } };
    const req = http(port, '/generate', { body });
    await p.waitFor(/Prefill batch, #new-seq: 1, #new-token: 5,/);
    // The server gets no CPU while every token falls due (300 ms after its prefill, 2 ms apart), as on a loaded
    // machine; then all their timers fire in one turn of its event loop.
    p.signal('SIGSTOP');
    await sleep(1000);
    p.signal('SIGCONT');
    expect((await req).status).toBe(200);
    const metrics = (await http(port, '/metrics')).body;
    const value = (name: string) =>
      Number(new RegExp(`^sglang:${name}\\{[^}]*\\} ([\\d.e-]+)`, 'm').exec(metrics)?.[1]);
    expect(value('inter_token_latency_seconds_count')).toBe(3);
    expect(value('inter_token_latency_seconds_sum')).toBeGreaterThan(0);
  });
});
