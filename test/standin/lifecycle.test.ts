// Startup, readiness, log milestones, stopping and port conflicts of the SGLang stand-in.

import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseMilestone } from '../../src/logs/milestones.ts';
import { until } from '../helpers/app.ts';
import {
  alive,
  baseEnv,
  type Ctx,
  freePort,
  GLM5,
  groupPids,
  http,
  launch,
  type Proc,
  QWEN,
  sleep,
  tmpDir,
  waitHealth,
} from './helpers.ts';

/** Open and close a TCP connection to 127.0.0.1:port. */
/** A process's command name (`/proc/<pid>/comm`), or '' once it is gone. */
function comm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

function connect(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => {
      s.end();
      resolve();
    });
    s.on('error', reject);
  });
}

/** Kill the process group when the test ends, whatever happened. */
const own = (ctx: Ctx, p: Proc) => {
  ctx.onTestFinished(() => p.killGroup());
  return p;
};

describe.concurrent('startup and readiness', () => {
  it('keeps the port closed while loading, answers 503 until warmup is done, then 200', async (ctx) => {
    // A control-file stall holds the warmup open; clearing the file lets it finish.
    const control = path.join(tmpDir(), 'control');
    fs.writeFileSync(control, 'stall:warmup');
    const port = await freePort();
    const p = own(
      ctx,
      launch(
        ['--model-path', QWEN, '--port', String(port)],
        baseEnv({ STANDIN_CONTROL: control, STANDIN_TIME_SCALE: '0.003' }),
      ),
    );
    // node needs far longer than this to boot, let alone bind: the port is closed
    await expect(connect(port)).rejects.toThrow(/ECONNREFUSED/);
    const seen = await waitHealth(port, 503, 15_000);
    expect(seen.filter((c) => c !== 0 && c !== 503)).toEqual([]);
    await p.waitFor(/Uvicorn running on/);
    expect(p.out).not.toContain('fired up');
    fs.writeFileSync(control, '');
    const after = await waitHealth(port, 200);
    expect(after.filter((c) => c !== 503 && c !== 200)).toEqual([]);
    await p.waitFor(/The server is fired up and ready to roll!/);
    expect(p.out).toMatch(/INFO: {5}127\.0\.0\.1:\d+ - "GET \/health HTTP\/1\.1" 503 Service Unavailable/);
    expect(p.out.indexOf('503 Service Unavailable')).toBeLessThan(p.out.indexOf('fired up'));
  });

  it('logs GLM-5 milestones in SGLang order, with TP prefixes and the seeds numbers', async (ctx) => {
    const port = await freePort();
    const p = own(
      ctx,
      launch(['--model-path', GLM5, '--tp', '8', '--max-running-requests', '64', '--port', String(port)], baseEnv()),
    );
    await p.waitFor(/The server is fired up and ready to roll!/);
    const ms = p
      .lines()
      .map((l) => parseMilestone(l))
      .filter((m) => m !== null);
    const kinds = ms.map((m) => m.kind).filter((k, i, a) => a[i - 1] !== k);
    expect(kinds).toEqual([
      'server_args',
      'dist_init_begin',
      'weights_begin',
      'shards',
      'weights_end',
      'kv_allocated',
      'mem_pool_end',
      'graph_begin',
      'graph_end',
      'scheduler_ready',
      // uvicorn's line before its `Uvicorn running on`: SGLang's app has started, its warm-up request follows
      'app_started',
      'uvicorn_running',
      'prefill',
      'ready',
    ]);
    const shards = ms.filter((m) => m.kind === 'shards');
    expect(shards.length).toBe(84);
    expect(shards[shards.length - 1]).toEqual({ kind: 'shards', percent: 100, done: 83, total: 83 });
    expect(ms.find((m) => m.kind === 'weights_end')).toEqual({ kind: 'weights_end', memUsageGb: 52.84 });
    expect(ms.find((m) => m.kind === 'uvicorn_running')).toEqual({ kind: 'uvicorn_running', port });
    const ready = ms.find((m) => m.kind === 'scheduler_ready');
    expect(ready?.kind === 'scheduler_ready' && ready.maxTotalTokens).toBeGreaterThan(400_000);
    // Every line is `[YYYY-mm-dd HH:MM:SS{ TPn}] msg`, a uvicorn line, or tqdm/warning text.
    expect(p.out).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d TP7\] Load weight end\. elapsed=[\d.]+ s, type=GlmMoeDsaForCausalLM, dtype=torch\.bfloat16, avail mem=41\.36 GB, mem usage=52\.84 GB\.$/m,
    );
    expect(p.out).toMatch(/^\[[\d\- :]+ TP0\] KV Cache is allocated\. #tokens: \d+, KV size: [\d.]+ GB$/m);
    const argsLine = p.lines().find((l) => l.includes('server_args=ServerArgs(')) ?? '';
    expect(argsLine).toMatch(/^\[[\d\- :]+\] server_args=ServerArgs\(model_path='lukealonso\/GLM-5-NVFP4', /);
    for (const kv of [
      'tp_size=8',
      "kv_cache_dtype='fp8_e4m3'",
      "attention_backend='nsa'",
      "nsa_decode_backend='flashmla_kv'",
      'page_size=64',
      'mem_fraction_static=0.895',
      'watchdog_timeout=300.0',
    ]) {
      expect(argsLine).toContain(`, ${kv},`);
    }
    expect(p.out).toContain(
      '\rLoading safetensors checkpoint shards:  45% Completed | 37/83 [00:40<00:50,  1.09s/it]\n',
    );
    expect(p.out).toMatch(/Set NSA backends for fp8_e4m3 KV Cache: prefill=flashmla_auto, decode=flashmla_kv\./);
    expect(p.out).toMatch(
      /^\[[\d\- :]+\] INFO: {5}Uvicorn running on http:\/\/127\.0\.0\.1:\d+ \(Press CTRL\+C to quit\)$/m,
    );
    // red herrings are there, and are only warnings
    expect(p.out).toContain(
      'DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0. This might cause accuracy degradation on Blackwell.',
    );
    expect(p.out).toContain("Unrecognized keys in `rope_parameters` for 'rope_type'='default'");
    // one scheduler child per TP rank and a detokenizer, all in the server's process group
    expect(groupPids(p.pid).length).toBe(10);
  });

  it('loads a small model much faster than GLM-5 (simulated seconds in the log)', async (ctx) => {
    const [pq, pg] = [await freePort(), await freePort()];
    const q = own(ctx, launch(['--model-path', QWEN, '--port', String(pq)], baseEnv()));
    const g = own(
      ctx,
      launch(['--model-path', GLM5, '--tp', '8', '--cuda-graph-max-bs', '256', '--port', String(pg)], baseEnv()),
    );
    await q.waitFor(/fired up/);
    await g.waitFor(/fired up/);
    const elapsed = (p: Proc) => Number(p.out.match(/Load weight end\. elapsed=([\d.]+) s/)?.[1]);
    expect(elapsed(g)).toBeGreaterThan(80);
    expect(elapsed(q)).toBeLessThan(2);
    expect(q.out).toContain('Loading safetensors checkpoint shards: 100% Completed | 1/1');
    expect(q.out).toMatch(/KV Cache is allocated\. #tokens: \d+, K size: [\d.]+ GB, V size: [\d.]+ GB/);
  });
});

describe.concurrent('stopping', () => {
  it('SIGTERM before the first request ends the process at once, with its children', async (ctx) => {
    const port = await freePort();
    const p = own(
      ctx,
      launch(
        ['--model-path', GLM5, '--tp', '2', '--port', String(port)],
        baseEnv({ STANDIN_SCENARIO: 'stall:weight_load' }),
      ),
    );
    await p.waitFor(/Loading safetensors checkpoint shards: {2}45% Completed/);
    const group = groupPids(p.pid);
    expect(group.length).toBe(4);
    p.signal('SIGTERM');
    const e = await p.waitExit();
    expect(e.signal).toBe('SIGTERM');
    expect(p.out).not.toContain('SIGTERM received');
    // The children were sent SIGKILL before the process ended; each is gone once the kernel has run its exit, which
    // on a busy machine comes when it comes.
    await until(() => group.filter(alive).length === 0, 5000).catch(() => {});
    expect(group.filter(alive)).toEqual([]);
  });

  it("SIGKILL of the server process alone ends its children too, as SGLang's die with it (PR_SET_PDEATHSIG)", {
    timeout: 45_000,
  }, async (ctx) => {
    const port = await freePort();
    // a model two GPUs hold: GLM-5 on two ran out of memory loading its weights (as it would), and the crash ended the
    // children before a loaded machine got to count them
    const p = own(ctx, launch(['--model-path', QWEN, '--tp', '2', '--port', String(port)], baseEnv()));
    await p.waitFor(/fired up/, 20_000);
    // two scheduler ranks and the detokenizer, each exec'd into its final program (`sleep` under the title SGLang
    // gives it)
    const children = groupPids(p.pid).filter((pid) => pid !== p.pid && comm(pid) === 'sleep');
    expect(children.length, `the server's output:\n${p.out.slice(-2000)}`).toBe(3);
    process.kill(p.pid, 'SIGKILL');
    await p.waitExit();
    // No orphans left in the process group for a bot's process check to find alive.
    await until(() => children.filter(alive).length === 0, 10_000).catch(() => {});
    expect(children.filter(alive)).toEqual([]);
  });

  it('after the first request, SIGTERM drains and exits 0 with the upstream log lines', async (ctx) => {
    const port = await freePort();
    const env = baseEnv();
    const p = own(ctx, launch(['--model-path', QWEN, '--port', String(port)], env));
    await p.waitFor(/fired up/);
    const group = groupPids(p.pid);
    p.signal('SIGTERM');
    const e = await p.waitExit();
    expect(e).toEqual({ code: 0, signal: null });
    expect(p.out).toMatch(
      /^\[[\d\- :]+\] SIGTERM received\. signum=None frame=None\. Draining requests and shutting down\.\.\.$/m,
    );
    expect(p.out).toMatch(
      /^\[[\d\- :]+\] Gracefully exiting\.\.\. Remaining number of requests 0\. Remaining requests remaining_rids=\[\]\.$/m,
    );
    expect(parseMilestone(p.lines().find((l) => l.includes('SIGTERM received')) ?? '')).toEqual({ kind: 'shutdown' });
    await until(() => group.filter(alive).length === 0, 5000).catch(() => {});
    expect(group.filter(alive)).toEqual([]);
    expect(fs.readdirSync(env.STANDIN_STATE_DIR ?? '').filter((f) => f.endsWith('.json'))).toEqual([]);
  });

  it('drains an in-flight request before exiting', async (ctx) => {
    const port = await freePort();
    // The request must still run when SIGTERM is handled: 120 tokens 25 ms apart (3 s), where 3 ms apart (360 ms)
    // was once over before the signal got there on a loaded machine. A window, wide against the test's own delays.
    const p = own(ctx, launch(['--model-path', QWEN, '--port', String(port)], baseEnv({ STANDIN_TPOT_MS: '25' })));
    await p.waitFor(/fired up/);
    const req = http(port, '/generate', {
      body: { text: 'tell me a story', sampling_params: { max_new_tokens: 120, ignore_eos: true } },
    });
    await p.waitFor(/Prefill batch, #new-seq: 1, #new-token: 5,/);
    p.signal('SIGTERM');
    await p.waitFor(
      /Health check|Gracefully exiting\.\.\. Remaining number of requests 1\. Remaining requests remaining_rids=\['[0-9a-f]{32}'\]\./,
    );
    const r = await req;
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).meta_info.completion_tokens).toBe(120);
    expect((await p.waitExit()).code).toBe(0);
    expect(p.out).toMatch(/Remaining number of requests 0\./);
  });

  it('with STANDIN_IGNORE_SIGTERM=1 only SIGKILL of the group stops it', async (ctx) => {
    const port = await freePort();
    const p = own(
      ctx,
      launch(['--model-path', QWEN, '--port', String(port)], baseEnv({ STANDIN_IGNORE_SIGTERM: '1' })),
    );
    await p.waitFor(/fired up/);
    p.signal('SIGTERM');
    await sleep(150);
    expect(p.running).toBe(true);
    expect((await http(port, '/health')).status).toBe(200);
    expect(p.out).not.toContain('SIGTERM received');
    p.killGroup();
    expect((await p.waitExit()).signal).toBe('SIGKILL');
  });

  it('fails like uvicorn when the port is taken, after loading, exit 1', async (ctx) => {
    const port = await freePort();
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', () => r()));
    try {
      const p = own(ctx, launch(['--model-path', QWEN, '--port', String(port)], baseEnv()));
      const e = await p.waitExit();
      expect(e.code).toBe(1);
      expect(p.out).toMatch(
        new RegExp(
          `^\\[[\\d\\- :]+\\] ERROR: {4}\\[Errno 98\\] error while attempting to bind on address \\('127\\.0\\.0\\.1', ${port}\\): address already in use$`,
          'm',
        ),
      );
      expect(p.out.indexOf('Load weight end')).toBeLessThan(p.out.indexOf('[Errno 98]'));
      expect(p.out).not.toContain('Uvicorn running');
    } finally {
      blocker.close();
    }
  });
});
