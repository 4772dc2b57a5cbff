// Outcomes the stand-in derives from the flags (the seeds' story for GLM-5 on SM120, 96 GB), no scenario forced.

import { describe, expect, it } from 'vitest';
import { parseMilestone } from '../../src/logs/milestones.ts';
import { until } from '../helpers/app.ts';
import { alive, GLM5, groupPids, http, type Proc, QWEN, start } from './helpers.ts';

const kinds = (p: Proc) =>
  p
    .lines()
    .map((l) => parseMilestone(l)?.kind)
    .filter((k) => k !== undefined);

const POSSIBLE_SOLUTIONS =
  'Possible solutions:\n' +
  '1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n' +
  '2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n' +
  '3. disable torch compile by not using --enable-torch-compile\n' +
  '4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n' +
  'Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n';

const GLM = ['--model-path', GLM5, '--tp', '8', '--trust-remote-code', '--quantization', 'modelopt_fp4'];

/** Count lines `[... TPn] Scheduler hit an exception: Traceback` per rank. */
const crashedRanks = (p: Proc) =>
  [...p.out.matchAll(/^\[[\d\- :]+ TP(\d)\] Scheduler hit an exception: Traceback \(most recent call last\):$/gm)].map(
    (m) => Number(m[1]),
  );

describe.concurrent('flag-derived outcomes', () => {
  it('attempt 1: default capture batch sizes (512 at tp 8) run out of memory during CUDA graph capture', async (ctx) => {
    const { p } = await start(ctx, GLM);
    const group = () => groupPids(p.pid);
    await p.waitFor(/Capture cuda graph begin/);
    const pids = group();
    const e = await p.waitExit();
    expect(e.signal).toBe('SIGKILL');
    expect(p.out).toMatch(/Capture cuda graph bs \[1, 2, 4, 8, 12, 16, .*, 496, 512\]/);
    expect(p.out).toMatch(
      /^torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate [\d.]+ GiB\. GPU 0 has a total capacity of 94\.97 GiB/m,
    );
    expect(p.out).toContain('\nDuring handling of the above exception, another exception occurred:\n\n');
    expect(p.out).toContain(`Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate`);
    expect(p.out).toContain(POSSIBLE_SOLUTIONS);
    expect(crashedRanks(p)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(p.out).toMatch(
      /^\[[\d\- :]+\] Received sigquit from a child process\. It usually means the child failed\.$/m,
    );
    expect(p.out).not.toContain('Uvicorn running');
    expect(kinds(p)).toContain('graph_begin');
    expect(kinds(p)).not.toContain('graph_end');
    // The group was SIGKILLed when the leader exited; its other members are gone a moment later, not at once.
    await until(() => pids.filter(alive).length === 0, 5000).catch(() => {});
    expect(pids.filter(alive)).toEqual([]);
  });

  it('attempt 3: triton attention with fp8 KV asserts in set_kv_buffer during capture (bare AssertionError)', async (ctx) => {
    const { p } = await start(ctx, [...GLM, '--attention-backend', 'triton', '--kv-cache-dtype', 'fp8_e4m3']);
    const e = await p.waitExit();
    expect(e.signal).toBe('SIGKILL');
    expect(p.out).toMatch(
      /File ".*\/srt\/mem_cache\/memory_pool\.py", line 1498, in set_kv_buffer\n {4}assert not self\.nsa_kv_cache_store_fp8\nAssertionError\n/,
    );
    expect(p.out).toMatch(/triton_backend\.py", line \d+, in forward_decode/);
    expect(p.out).not.toContain('Capture cuda graph failed');
    expect(p.out).not.toContain('Use nsa attention backend');
    expect(crashedRanks(p)).toHaveLength(8);
    expect(kinds(p)).toContain('graph_begin');
  });

  it('triton with auto KV (fp8 on SM120) and no CUDA graph asserts in the warmup prefill', async (ctx) => {
    const { p } = await start(ctx, [...GLM, '--attention-backend', 'triton', '--disable-cuda-graph']);
    await p.waitExit();
    expect(p.out).toContain('Setting KV cache dtype to fp8_e4m3 for DeepSeek DSA on SM12 device.');
    expect(p.out).not.toContain('Capture cuda graph begin');
    expect(p.out).toMatch(/triton_backend\.py", line \d+, in forward_extend/);
    expect(p.out.indexOf('Uvicorn running')).toBeLessThan(p.out.indexOf('AssertionError'));
    expect(p.out).toMatch(
      /^\[[\d\- :]+\] SIGQUIT received\. signum=None, frame=None\. It usually means one child failed\.$/m,
    );
    expect(p.out).not.toContain('fired up');
  });

  it('trtllm NSA decode on SM120: TllmGenFmhaRunner Unsupported architecture during capture', async (ctx) => {
    const { p } = await start(ctx, [
      ...GLM,
      '--nsa-decode-backend',
      'trtllm',
      '--nsa-prefill-backend',
      'trtllm',
      '--cuda-graph-max-bs',
      '128',
    ]);
    await p.waitExit();
    expect(p.out).toContain(
      'When specifying --nsa-prefill-backend or --nsa-decode-backend, you should also explicitly set --kv-cache-dtype',
    );
    expect(p.out).toContain(
      "RuntimeError: Error in function 'TllmGenFmhaRunner' at /workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:30: Unsupported architecture\n",
    );
    expect(p.out).toContain(
      "Exception: Capture cuda graph failed: Error in function 'TllmGenFmhaRunner' at /workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:30: Unsupported architecture\nPossible solutions:",
    );
  });

  it('attempt 7: trtllm prefill+decode without CUDA graph fails in the warmup', async (ctx) => {
    const { p } = await start(ctx, [
      ...GLM,
      '--nsa-decode-backend',
      'trtllm',
      '--nsa-prefill-backend',
      'trtllm',
      '--fp8-gemm-backend',
      'cutlass',
      '--disable-cuda-graph',
    ]);
    await p.waitExit();
    expect(p.out).toMatch(/trtllm_ragged_attention_deepseek/);
    expect(p.out).toContain('Unsupported architecture');
    expect(p.out).not.toContain('Capture cuda graph failed');
    expect(kinds(p)).toContain('uvicorn_running');
    expect(kinds(p)).not.toContain('ready');
  });

  it('bf16 KV picks trtllm decode on SM>=10, which is unsupported here', async (ctx) => {
    const { p } = await start(ctx, [...GLM, '--kv-cache-dtype', 'bf16', '--cuda-graph-max-bs', '64']);
    await p.waitExit();
    expect(p.out).toContain('Set NSA backends for bfloat16 KV Cache: prefill=flashmla_sparse, decode=trtllm.');
    expect(p.out).toContain('Unsupported architecture');
  });

  it('fa3 is Hopper-only: NotImplementedError from sgl-kernel', async (ctx) => {
    const { p } = await start(ctx, [
      ...GLM,
      '--nsa-decode-backend',
      'fa3',
      '--kv-cache-dtype',
      'bfloat16',
      '--cuda-graph-max-bs',
      '64',
    ]);
    await p.waitExit();
    expect(p.out).toContain('NotImplementedError: flash_attn at sgl-kernel is only supported on sm90 and above');
  });

  it('tilelang with fp8 KV fails at capture; with bf16 KV GLM-5 serves', async (ctx) => {
    const bad = await start(ctx, [
      ...GLM,
      '--nsa-decode-backend',
      'tilelang',
      '--nsa-prefill-backend',
      'tilelang',
      '--cuda-graph-max-bs',
      '64',
    ]);
    await bad.p.waitExit();
    expect(bad.p.out).toContain('ValueError: kernel main input KV dtype expected bfloat16, but got float8_e4m3fn');

    const good = await start(ctx, [
      ...GLM,
      '--nsa-decode-backend',
      'tilelang',
      '--nsa-prefill-backend',
      'tilelang',
      '--kv-cache-dtype',
      'bfloat16',
      '--cuda-graph-max-bs',
      '64',
    ]);
    await good.p.waitFor(/fired up/);
    for (let i = 0; i < 2; i++) {
      const r = await http(good.port, '/v1/chat/completions', {
        body: { model: 'glm', messages: [{ role: 'user', content: 'What is the capital of France?' }] },
      });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body).choices[0].message.content).toContain('Paris');
    }
    expect(good.p.out).toContain('KV Cache is allocated. #tokens: ');
    expect(good.p.out).toContain('Using KV cache dtype: torch.bfloat16');
  });

  it('attempts 4-6: a FlashMLA decode backend starts completely, then the first real request dies of NaN in sampling', async (ctx) => {
    const { p, port } = await start(ctx, [
      ...GLM,
      '--nsa-decode-backend',
      'flashmla_sparse',
      '--fp8-gemm-backend',
      'cutlass',
      '--max-running-requests',
      '64',
    ]);
    await p.waitFor(/The server is fired up and ready to roll!/);
    expect((await http(port, '/health')).status).toBe(200);
    // a one-token request passes: the NaN is in decode, not in the prefill's sampling
    const one = await http(port, '/generate', { body: { text: 'Hi', sampling_params: { max_new_tokens: 1 } } });
    expect(one.status).toBe(200);
    const pids = groupPids(p.pid);
    const res = await http(port, '/v1/chat/completions', {
      body: { model: 'glm-5', messages: [{ role: 'user', content: 'Write a haiku about GPUs.' }] },
    }).then(
      (r) => r.status,
      () => 'dropped',
    );
    expect(res).toBe('dropped');
    const e = await p.waitExit();
    expect(e.signal).toBe('SIGKILL');
    expect(p.out).toMatch(
      /^\/pytorch\/aten\/src\/ATen\/native\/cuda\/TensorCompare\.cu:110: _assert_async_cuda_kernel: block: \[0,0,0\], thread: \[0,0,0\] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed\.$/m,
    );
    expect(p.out).toContain('RuntimeError: CUDA error: device-side assert triggered\n');
    expect(p.out).toContain('Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.');
    expect(crashedRanks(p)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(p.out).toMatch(
      /^\[[\d\- :]+\] SIGQUIT received\. signum=None, frame=None\. It usually means one child failed\.$/m,
    );
    // the order of the story: ready, the request's prefill, then the crash
    const ready = p.out.indexOf('fired up');
    expect(ready).toBeLessThan(p.out.lastIndexOf('Prefill batch'));
    expect(p.out.lastIndexOf('Prefill batch')).toBeLessThan(p.out.indexOf('Scheduler hit an exception'));
    // The group was SIGKILLed when the leader exited; its other members are gone a moment later, not at once.
    await until(() => pids.filter(alive).length === 0, 5000).catch(() => {});
    expect(pids.filter(alive)).toEqual([]);
  });

  it('the NaN also hits with flashmla_sparse decode, cutlass FP8 GEMM, auto KV and CUDA graph disabled (attempt 6)', async (ctx) => {
    const { p, port } = await start(ctx, [
      ...GLM,
      '--nsa-decode-backend',
      'flashmla_sparse',
      '--fp8-gemm-backend',
      'cutlass',
      '--disable-cuda-graph',
    ]);
    await p.waitFor(/fired up/);
    expect(p.out).not.toContain('Capture cuda graph');
    await http(port, '/generate', { body: { text: 'Hello', sampling_params: { max_new_tokens: 16 } } }).catch(
      () => null,
    );
    await p.waitExit();
    expect(p.out).toContain('probability tensor contains either `inf`, `nan` or element < 0');
  });

  it('rejects a KV dtype DSA does not support, in the main process (exit 1)', async (ctx) => {
    const { p } = await start(ctx, [...GLM, '--kv-cache-dtype', 'fp8_e5m2']);
    const e = await p.waitExit();
    expect(e.code).toBe(1);
    expect(p.out).toMatch(
      /^Traceback \(most recent call last\):\n {2}File "<frozen runpy>", line 198, in _run_module_as_main/m,
    );
    expect(p.out.trimEnd().split('\n').pop()).toBe(
      'AssertionError: DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype',
    );
    expect(p.out).not.toContain('server_args=');
  });

  it('Kimi K2-Thinking NVFP4 with modelopt_fp4 and no CUDA graph serves', async (ctx) => {
    const { p, port } = await start(ctx, [
      '--model-path',
      'nvidia/Kimi-K2-Thinking-NVFP4',
      '--tp',
      '8',
      '--quantization',
      'modelopt_fp4',
      '--disable-cuda-graph',
      '--trust-remote-code',
    ]);
    await p.waitFor(/fired up/);
    expect(p.out).not.toContain('Capture cuda graph');
    expect(p.out).not.toContain('DeepGemm is enabled');
    const r = await http(port, '/v1/completions', { body: { model: 'k', prompt: 'What is 2+2?', max_tokens: 8 } });
    expect(JSON.parse(r.body).choices[0].text).toBe(' 4');
  });

  it('GLM-4.7 FP8 prints the MoE default-config and DeepGemm warnings and still serves', async (ctx) => {
    const { p, port } = await start(ctx, ['--model-path', 'zai-org/GLM-4.7-FP8', '--tp', '8']);
    await p.waitFor(/fired up/);
    expect(p.out).toMatch(
      /^\[[\d\- :]+ TP0\] Using default MoE kernel config\. Performance might be sub-optimal! Config file not found at .*\/fused_moe_triton\/configs\/triton_3_5_1\/E=161,N=192,device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition,dtype=fp8_w8a8,block_shape=\[128, 128\]\.json, you can create them with https:\/\/github\.com\/sgl-project\/sglang\/tree\/main\/benchmark\/kernels\/fused_moe_triton$/m,
    );
    expect(p.out).toContain('DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0.');
    expect((await http(port, '/health')).status).toBe(200);
  });

  it('more TP ranks than GPUs: invalid device ordinal in the extra ranks', async (ctx) => {
    const { p } = await start(ctx, ['--model-path', QWEN, '--tp', '16']);
    expect((await p.waitExit()).signal).toBe('SIGKILL');
    expect([...p.out.matchAll(/ TP(\d+)\] Scheduler hit an exception/g)].map((m) => Number(m[1]))).toEqual([
      8, 9, 10, 11, 12, 13, 14, 15,
    ]);
    expect(p.out).toContain('RuntimeError: CUDA error: invalid device ordinal\n');
  });

  it('a small model at tp 1 serves, without rank prefixes', async (ctx) => {
    const { p, port } = await start(ctx, ['--model-path', QWEN]);
    await p.waitFor(/fired up/);
    expect(p.out).not.toMatch(/ TP\d\]/);
    expect(p.out).toMatch(/^\[[\d\- :]+\] Load weight end\./m);
    const r = await http(port, '/generate', {
      body: { text: 'The capital of France is', sampling_params: { max_new_tokens: 8 } },
    });
    expect(JSON.parse(r.body).text).toBe(' Paris.');
  });
});
