// STANDIN_SCENARIO (forced outcomes) and the STANDIN_CONTROL file that changes a running server.

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseMilestone } from '../../src/logs/milestones.ts';
import { GLM5, http, type Proc, QWEN, sleep, start, tmpDir } from './helpers.ts';

/** Milestone kinds in order, repeats (one per TP rank, one per shard) collapsed. */
const kinds = (p: Proc) =>
  p
    .lines()
    .map((l) => parseMilestone(l)?.kind)
    .filter((k, i, a) => k !== undefined && a[i - 1] !== k);

const SMALL = ['--model-path', QWEN];
const GLM = ['--model-path', GLM5, '--tp', '8', '--cuda-graph-max-bs', '64'];

describe.concurrent('forced scenarios (STANDIN_SCENARIO)', () => {
  it('ready: serves even with flags that would crash', async (ctx) => {
    const { p, port } = await start(ctx, ['--model-path', GLM5, '--tp', '8', '--attention-backend', 'triton'], {
      STANDIN_SCENARIO: 'ready',
    });
    await p.waitFor(/fired up/);
    const r = await http(port, '/generate', {
      body: { text: 'What is 2 + 2?', sampling_params: { max_new_tokens: 8 } },
    });
    expect(JSON.parse(r.body).text).toBe(' 4');
  });

  it('oom_graph_capture on a small model', async (ctx) => {
    const { p } = await start(ctx, SMALL, { STANDIN_SCENARIO: 'oom_graph_capture' });
    expect((await p.waitExit()).signal).toBe('SIGKILL');
    expect(p.out).toContain('Exception: Capture cuda graph failed: CUDA out of memory.');
    expect(p.out).toMatch(/^\[[\d\- :]+\] Scheduler hit an exception: Traceback/m);
  });

  it('oom_graph_capture without CUDA graphs is a plain CUDA OOM in the warmup', async (ctx) => {
    const { p } = await start(ctx, [...SMALL, '--disable-cuda-graph'], { STANDIN_SCENARIO: 'oom_graph_capture' });
    await p.waitExit();
    expect(p.out).toContain('torch.OutOfMemoryError: CUDA out of memory.');
    expect(p.out).not.toContain('Capture cuda graph failed');
    expect(kinds(p)).toContain('uvicorn_running');
  });

  it('nsa_fp8_assert', async (ctx) => {
    const { p } = await start(ctx, GLM, { STANDIN_SCENARIO: 'nsa_fp8_assert' });
    await p.waitExit();
    expect(p.out).toContain('    assert not self.nsa_kv_cache_store_fp8\nAssertionError\n');
  });

  it('unsupported_arch', async (ctx) => {
    const { p } = await start(ctx, GLM, { STANDIN_SCENARIO: 'unsupported_arch' });
    await p.waitExit();
    expect(p.out).toContain("Error in function 'TllmGenFmhaRunner'");
    expect(p.out).toContain('Unsupported architecture');
  });

  it('nan_decode: the first real request crashes in decode (torch.AcceleratorError spelling on request)', async (ctx) => {
    const { p, port } = await start(ctx, SMALL, {
      STANDIN_SCENARIO: 'nan_decode',
      STANDIN_TORCH_ACCELERATOR_ERROR: '1',
    });
    await p.waitFor(/fired up/);
    await http(port, '/v1/completions', { body: { model: 'q', prompt: 'Once upon a time', max_tokens: 32 } }).catch(
      () => null,
    );
    await p.waitExit();
    expect(p.out).toContain('torch.AcceleratorError: CUDA error: device-side assert triggered\n');
    expect(p.out).toContain(
      "Search for `cudaErrorAssert' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
    );
    expect(p.out).toContain('SIGQUIT received. signum=None, frame=None. It usually means one child failed.');
  });

  it('illegal_memory_access', async (ctx) => {
    const { p, port } = await start(ctx, SMALL, { STANDIN_SCENARIO: 'illegal_memory_access' });
    await p.waitFor(/fired up/);
    await http(port, '/generate', { body: { text: 'hello', sampling_params: { max_new_tokens: 16 } } }).catch(
      () => null,
    );
    await p.waitExit();
    expect(p.out).toContain('RuntimeError: CUDA error: an illegal memory access was encountered\n');
  });

  it('model_load_error: fails part-way through the shards', async (ctx) => {
    const { p } = await start(ctx, GLM, { STANDIN_SCENARIO: 'model_load_error' });
    await p.waitExit();
    expect(p.out).toContain('Loading safetensors checkpoint shards:  40% Completed | 33/83');
    expect(p.out).not.toContain('34/83');
    expect(p.out).toContain('RuntimeError: The size of tensor a (3072) must match the size of tensor b (6144)');
    expect(p.out).toMatch(/in load_weights\n/);
    expect(p.out).toContain('Received sigquit from a child process. It usually means the child failed.');
  });

  it('import_error: Python fails before parsing, exit 1', async (ctx) => {
    const { p } = await start(ctx, SMALL, { STANDIN_SCENARIO: 'import_error' });
    const e = await p.waitExit();
    expect(e.code).toBe(1);
    expect(p.out.trimEnd().split('\n').pop()).toBe("ModuleNotFoundError: No module named 'sgl_kernel'");
    expect(p.out).not.toContain('server_args=');
  });

  it('watchdog_timeout: the request hangs, /health turns 503, then the watchdog kills the server', async (ctx) => {
    const { p, port } = await start(ctx, SMALL, { STANDIN_SCENARIO: 'watchdog_timeout', STANDIN_TIME_SCALE: '0.01' });
    await p.waitFor(/fired up/);
    const req = http(port, '/generate', { body: { text: 'hello', sampling_params: { max_new_tokens: 16 } } }).catch(
      () => 'dropped',
    );
    await p.waitFor(/#new-token: 2,/);
    let health = 200;
    for (let i = 0; i < 100 && health === 200; i++) {
      await sleep(10);
      health = (await http(port, '/health')).status;
    }
    expect(health).toBe(503);
    await p.waitFor(
      /Health check failed\. Server couldn't get a response from detokenizer for last 20 seconds\. tic start time: \d\d:\d\d:\d\d\. last_heartbeat time: \d\d:\d\d:\d\d/,
    );
    await p.waitExit();
    expect(await req).toBe('dropped');
    expect(p.out).toContain('Scheduler watchdog timeout (self.watchdog_timeout=300.0, self.soft=False)');
    expect(p.out.indexOf('Scheduler watchdog timeout')).toBeLessThan(p.out.indexOf('SIGQUIT received'));
  });

  it('nccl_error: during torch.distributed init', async (ctx) => {
    const { p } = await start(ctx, GLM, { STANDIN_SCENARIO: 'nccl_error' });
    await p.waitExit();
    expect(p.out).toMatch(
      /torch\.distributed\.DistBackendError: NCCL error in: .*ProcessGroupNCCL\.cpp:\d+, unhandled system error/,
    );
    expect(kinds(p)).toEqual(['server_args', 'dist_init_begin']);
  });

  it.for([
    ['dist_init', ['server_args', 'dist_init_begin']],
    ['weight_load', ['server_args', 'dist_init_begin', 'weights_begin', 'shards']],
    [
      'kv_alloc',
      ['server_args', 'dist_init_begin', 'weights_begin', 'shards', 'weights_end', 'kv_allocated', 'mem_pool_end'],
    ],
    [
      'cuda_graph_capture',
      [
        'server_args',
        'dist_init_begin',
        'weights_begin',
        'shards',
        'weights_end',
        'kv_allocated',
        'mem_pool_end',
        'graph_begin',
      ],
    ],
  ] as Array<[string, string[]]>)(
    'crash_at_phase:%s stops with a generic traceback in that phase',
    async ([phase, expected], ctx) => {
      const { p } = await start(ctx, GLM, { STANDIN_SCENARIO: `crash_at_phase:${phase}` });
      expect((await p.waitExit()).signal).toBe('SIGKILL');
      expect(p.out).toContain(`RuntimeError: simulated failure injected by the SGLang stand-in at phase '${phase}'`);
      expect(kinds(p)).toEqual(expected);
    },
  );

  it('crash_at_phase:warmup and :decode', async (ctx) => {
    const w = await start(ctx, SMALL, { STANDIN_SCENARIO: 'crash_at_phase:warmup' });
    await w.p.waitExit();
    expect(w.p.out).toContain("at phase 'warmup'");
    expect(kinds(w.p)).toContain('prefill');
    expect(kinds(w.p)).not.toContain('ready');
    const d = await start(ctx, SMALL, { STANDIN_SCENARIO: 'crash_at_phase:decode' });
    await d.p.waitFor(/fired up/);
    await http(d.port, '/generate', { body: { text: 'hello', sampling_params: { max_new_tokens: 4 } } }).catch(
      () => null,
    );
    await d.p.waitExit();
    expect(d.p.out).toContain("at phase 'decode'");
  });

  it('crash_at_phase:startup fails in the main process, exit 1', async (ctx) => {
    const { p } = await start(ctx, SMALL, { STANDIN_SCENARIO: 'crash_at_phase:startup' });
    expect((await p.waitExit()).code).toBe(1);
    expect(p.out).toMatch(/^Traceback/);
  });

  it.for([
    ['weight_load', /Loading safetensors checkpoint shards: {2}45% Completed \| 37\/83/, 'weights_end'],
    ['cuda_graph_capture', /Capturing batches \(bs=64 avail_mem=[\d.]+ GB\): {3}0%/, 'graph_end'],
  ] as Array<[string, RegExp, string]>)(
    'stall:%s stops writing and hangs in that phase',
    async ([phase, last, never], ctx) => {
      const { p } = await start(ctx, GLM, { STANDIN_SCENARIO: `stall:${phase}` });
      await p.waitFor(last);
      await sleep(100); // let the pipes drain what was written with it
      const len = p.out.length;
      await sleep(150);
      expect(p.running).toBe(true);
      expect(p.out.length).toBe(len);
      expect(kinds(p)).not.toContain(never);
    },
  );

  it('rejects an unknown scenario word', async (ctx) => {
    const { p } = await start(ctx, SMALL, { STANDIN_SCENARIO: 'explode' });
    expect((await p.waitExit()).code).toBe(2);
    expect(p.out).toContain('unknown STANDIN_SCENARIO "explode"');
  });
});

describe.concurrent('STANDIN_CONTROL changes a running server', () => {
  it('turns a healthy server bad: nan_decode after it was ready', async (ctx) => {
    const dir = tmpDir();
    const control = path.join(dir, 'control');
    fs.writeFileSync(control, '');
    const { p, port } = await start(ctx, SMALL, { STANDIN_CONTROL: control });
    await p.waitFor(/fired up/);
    const ok = await http(port, '/generate', {
      body: { text: 'What is the capital of France?', sampling_params: { max_new_tokens: 8 } },
    });
    expect(JSON.parse(ok.body).text).toBe(' Paris.');
    fs.writeFileSync(control, 'nan_decode\n');
    const bad = await http(port, '/generate', {
      body: { text: 'again', sampling_params: { max_new_tokens: 8 } },
    }).catch(() => 'dropped');
    expect(bad).toBe('dropped');
    await p.waitExit();
    expect(p.out).toContain('probability tensor contains either `inf`, `nan` or element < 0');
  });

  it('overrides the flags: ready makes a crashing configuration serve', async (ctx) => {
    const dir = tmpDir();
    const control = path.join(dir, 'control');
    fs.writeFileSync(control, 'ready');
    const { p, port } = await start(ctx, ['--model-path', GLM5, '--tp', '8'], { STANDIN_CONTROL: control });
    await p.waitFor(/fired up/);
    const r = await http(port, '/v1/chat/completions', {
      body: { model: 'g', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(r.status).toBe(200);
  });

  it('stall:decode makes requests hang and /health fail', async (ctx) => {
    const dir = tmpDir();
    const control = path.join(dir, 'control');
    const { p, port } = await start(ctx, SMALL, { STANDIN_CONTROL: control });
    await p.waitFor(/fired up/);
    fs.writeFileSync(control, 'stall:decode');
    const ac = new AbortController();
    const pending = fetch(`http://127.0.0.1:${port}/generate`, {
      method: 'POST',
      body: JSON.stringify({ text: 'hi', sampling_params: { max_new_tokens: 8 } }),
      signal: ac.signal,
    }).catch(() => 'aborted');
    await p.waitFor(/#new-token: 2,/);
    let health = 200;
    for (let i = 0; i < 100 && health === 200; i++) {
      await sleep(10);
      health = (await http(port, '/health')).status;
    }
    expect(health).toBe(503);
    ac.abort();
    expect(await pending).toBe('aborted');
    expect(p.running).toBe(true);
  });
});
