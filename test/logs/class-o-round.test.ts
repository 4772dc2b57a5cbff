// The class decision on the o- round's dev misses: the documented messages of the libraries and servers that print
// them (NCCL's socket transport, TGI's CUDA-graph warmup, TensorRT-LLM's checkpoint config, vLLM's launcher and its
// V0 engine client's heartbeat loop), each in a small log built for the test.
import { describe, expect, it } from 'vitest';
import { diagnose, tb } from './diagnose.ts';

describe("NCCL's socket transport reporting a broken peer connection (NCCL WARN)", () => {
  it('is an NCCL error, with its error-return trace after it', () => {
    const warn = 'gpu-7:101:202 [1] proxy.cc:999 NCCL WARN Socket recv failed while polling for opId=0x7f00deadbeef';
    const d = diagnose([
      warn,
      'gpu-7:101:202 [1] NCCL INFO transport/net.cc:400 -> 6',
      'gpu-7:101:202 [1] NCCL INFO init.cc:800 -> 6',
    ]);
    expect(d).toMatchObject({ category: 'nccl_error', root: warn });
  });
  it('covers the socket layer wording of a peer that went away', () => {
    const warn =
      'gpu-7:101:202 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer gpu-8<41234>';
    expect(diagnose([warn]).category).toBe('nccl_error');
  });
  it('a WARN about an optional library NCCL falls back from is no crash', () => {
    const d = diagnose([
      'gpu-7:101:101 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.',
      'gpu-7:101:101 [0] NCCL INFO Using network Socket',
    ]);
    expect(d.category).toBe('none');
  });
});

describe("TGI's `Decode cuda graph warmup failed`", () => {
  const head = '2025-01-01T10:00:00.000000Z ERROR text_generation_launcher: Decode cuda graph warmup failed';
  it('is a CUDA graph capture failure when no more specific cause follows', () => {
    expect(diagnose([head]).category).toBe('cuda_graph_capture_failed');
  });
  it('an OOM in the traceback after it names the crash', () => {
    const d = diagnose([
      head,
      ...tb(
        [['/opt/tgi/models/flash_causal_lm.py', 'cuda_graph_warmup', 'with torch.cuda.graph(graph):']],
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB',
      ),
    ]);
    expect(d.category).toBe('cuda_oom');
  });
});

describe("TensorRT-LLM's conversion and trtllm-build reading the model's config", () => {
  it('a KeyError raised in trtllm-build or a model converter is a model that cannot be loaded', () => {
    const build = tb(
      [
        ['/usr/bin/trtllm-build', '<module>', 'sys.exit(main())'],
        ['/usr/lib/python3/dist-packages/tensorrt_llm/commands/build.py', 'main', "kind = cfg['some_key']"],
      ],
      "KeyError: 'some_key'",
    );
    expect(diagnose(build).category).toBe('model_load_error');
    const conv = tb(
      [
        ['convert_checkpoint.py', 'main', 'convert(args)'],
        ['/x/tensorrt_llm/models/somearch/convert.py', 'load_weights', "w = weights['h.0.attn.weight']"],
      ],
      "KeyError: 'h.0.attn.weight'",
    );
    expect(diagnose(conv).category).toBe('model_load_error');
  });
  it("the PyTorch backend's runtime code (tensorrt_llm/_torch) is not read as conversion", () => {
    const d = diagnose(
      tb([['/x/tensorrt_llm/_torch/pyexecutor/py_executor.py', '_step', "r = self.reqs['id']"]], "KeyError: 'id'"),
    );
    expect(d.category).not.toBe('model_load_error');
  });
});

describe("vLLM's API server stopping because its engine died", () => {
  it("the launcher's CRITICAL `... has failed, terminating server process` is a crash, not a survived error", () => {
    const d = diagnose([
      'INFO 01-01 10:00:00 metrics.py:349] Avg prompt throughput: 1.0 tokens/s, Running: 1 reqs',
      'CRITICAL 01-01 10:00:03 launcher.py:99] AsyncLLMEngine has failed, terminating server process',
      'INFO:     127.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error',
    ]);
    expect(d.category).not.toBe('none');
    expect(d.survivable).toBe(false);
  });
  it("the V0 client's heartbeat loop dying is the root even with 200s answered after it", () => {
    const p = 'ERROR 01-01 10:00:00 client.py:250] ';
    const d = diagnose([
      ...tb(
        [
          ['/x/vllm/engine/multiprocessing/client.py', 'run_heartbeat_loop', 'await self._check_success('],
          ['/x/vllm/engine/multiprocessing/client.py', '_check_success', 'raise response'],
        ],
        'RuntimeError: Engine loop has died',
      ).map((l) => p + l),
      'INFO:     127.0.0.1:5000 - "GET /v1/models HTTP/1.1" 200 OK',
    ]);
    expect(d).toMatchObject({ category: 'other', root: `${p}RuntimeError: Engine loop has died` });
  });
});
