// probe reads the server's own Prometheus /metrics (SGLang's --enable-metrics names), here from the stand-in over sshd.
import { describe, expect, it } from 'vitest';
import { parsePrometheusText, type ServerMetrics, serverMetrics } from '../../src/lifecycle/sglang-metrics.ts';
import { postGenerate, type TestBot } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
const bot = (): TestBot => shared.bot();

describe("the server's /metrics (probe, smoke, bench)", () => {
  it('sums label sets and takes histogram means (the shape of SGLang docs sample)', () => {
    const text = [
      '# HELP sglang:gen_throughput The generate throughput (token/s)',
      '# TYPE sglang:gen_throughput gauge',
      'sglang:gen_throughput{model_name="m",tp_rank="0"} 80.5',
      'sglang:gen_throughput{model_name="m",tp_rank="1"} 6.0',
      'sglang:time_to_first_token_seconds_sum{model_name="m"} 3.0',
      'sglang:time_to_first_token_seconds_count{model_name="m"} 12.0',
      'sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 12.0',
      'sglang:num_queue_reqs{model_name="m"} 2826.0',
    ].join('\n');
    expect(parsePrometheusText(text).get('sglang:gen_throughput')).toBe(86.5);
    expect(serverMetrics(text)).toMatchObject({ genThroughput: 86.5, queued: 2826, ttftMeanMs: 250 });
  });

  it('probe reports throughput, requests, KV cache use, TTFT and ITL with enable_metrics; says why not without', async () => {
    const b = bot();
    const port = await freePort();
    const l = await b.run(`launch small --set enable_metrics=true --port ${port} --no-check`);
    expect(l.exitCode, l.text).toBe(0);
    expect(b.app.engine.attempts.get(1)!.commandLine).toContain('--enable-metrics');
    await postGenerate(b.app, 'gpu', port);
    const p = await b.run('probe --json');
    const m = (p.data as { serverMetrics: ServerMetrics }).serverMetrics;
    expect(m.requests).toBeGreaterThanOrEqual(1);
    expect(m.running).toBe(0);
    expect(m.queued).toBe(0);
    expect(m.tokenUsage).toBeGreaterThanOrEqual(0);
    expect(m.ttftMeanMs).toBeGreaterThan(0);
    expect(m.itlMeanMs).toBeGreaterThan(0);
    expect((await b.run('probe')).text).toMatch(
      /metrics: +gen [\d.]+ tok\/s, running 0, queued 0, KV cache [\d.]+%, TTFT mean/,
    );
    // smoke and bench report the server's figures after their requests too.
    const s = await b.run('smoke');
    expect((s.data as { serverMetrics: ServerMetrics }).serverMetrics.requests).toBeGreaterThan(m.requests!);
    expect(s.text).toMatch(/server \/metrics: gen [\d.]+ tok\/s, .*TTFT mean [\d.]+ ms, ITL mean [\d.]+ ms/);
    const bench = await b.run('bench --concurrency 1 --requests 2 --input-len 8 --output-len 8');
    expect(bench.exitCode, bench.text).toBe(0);
    expect((bench.data as { serverMetrics: ServerMetrics }).serverMetrics.ttftMeanMs).toBeGreaterThan(0);
    expect(bench.text).toMatch(/server \/metrics: gen /);
    await b.run('stop');

    const l2 = await b.run(`launch small --port ${await freePort()} --no-check`);
    expect(l2.exitCode, l2.text).toBe(0);
    expect((await b.run('probe')).text).toMatch(/metrics: +not available: not served \(launch with enable_metrics/);
  });
});
