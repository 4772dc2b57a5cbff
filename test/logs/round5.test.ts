// Issue 11, round 5: where a request that failed ends and a broken server begins, whose report of a death is the root,
// and what a configuration refused really says. Each case is built from the documented messages the rules name.
import { describe, expect, it } from 'vitest';
import { diagnoseText } from '../../src/logs/classify/index.ts';

const READY = [
  '[2025-11-05 12:00:00] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16',
  '[2025-11-05 12:00:06] The server is fired up and ready to roll!',
];

function diagnose(lines: string[]) {
  const d = diagnoseText([...lines, ''].join('\n'));
  return { category: d.classification.category, root: d.classification.evidence[0]?.text, reason: d.reason };
}

const API = '(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72] ';
const engineDead = [
  `${API}Traceback (most recent call last):`,
  `${API}  File "/x/vllm/entrypoints/openai/chat_completion/serving.py", line 225, in render_chat_request`,
  `${API}    raise self.engine_client.dead_error`,
  `${API}vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.`,
  '(APIServer pid=1) INFO:     10.1.6.81:16983 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
  '(APIServer pid=1) INFO:     Shutting down',
];

describe('a server whose engine is dead is broken, whatever it still answers', () => {
  it("vLLM's EngineDeadError, answered 500 after it, is a crash with that line as the root", () => {
    const d = diagnose([...READY, ...engineDead]);
    expect(d.category, d.reason).toBe('other');
    expect(d.root).toContain('EngineDeadError');
  });

  it("the engine core's own error, when the log has it, names the crash", () => {
    const core = [
      '(EngineCore_DP0 pid=9) ERROR 05-12 01:48:41 [core.py:708] EngineCore encountered a fatal error.',
      '(EngineCore_DP0 pid=9) ERROR 05-12 01:48:41 [core.py:708] Traceback (most recent call last):',
      '(EngineCore_DP0 pid=9) ERROR 05-12 01:48:41 [core.py:708]   File "/x/vllm/v1/engine/core.py", line 701, in run_engine_core',
      '(EngineCore_DP0 pid=9) ERROR 05-12 01:48:41 [core.py:708]     engine_core.run_busy_loop()',
      '(EngineCore_DP0 pid=9) ERROR 05-12 01:48:41 [core.py:708] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.',
    ];
    expect(diagnose([...READY, ...core, ...engineDead]).category).toBe('cuda_oom');
  });

  it("the NVIDIA driver's Xid is a GPU fault: a crash, its line the root", () => {
    const xid = 'NVRM: Xid (PCI:0000:01:00): 8, pid=48694, name=python3, channel 0x00000008';
    const d = diagnose([...READY, 'NVRM: krcWatchdog_IMPL: RC watchdog: GPU is probably locked!', xid]);
    expect(d.category, d.reason).toBe('other');
    expect(d.root).toBe(xid);
  });
});

describe('whose report of a death is the root', () => {
  it("a parent's report over two lines: the one with the exit code says how the child ended", () => {
    const d = diagnose([
      '[12-16 14:27:08] Rank 0 scheduler is dead. Please check if there are relevant logs.',
      '[12-16 14:27:10] Exit code: -9',
      'Traceback (most recent call last):',
      '  File "/x/sglang/cli/main.py", line 26, in main',
      '    args.func(args, extra_argv)',
    ]);
    expect(d.root).toBe('[12-16 14:27:10] Exit code: -9');
  });

  it('a death over two lines keeps the line that names what died: in the summary and the evidence, beside the exit', () => {
    const dead = '[2025-11-05 12:01:00] Rank 0 scheduler is dead. Please check if there are relevant logs.';
    const exit = '[2025-11-05 12:01:00] Exit code: -9';
    for (const tail of [
      [dead, exit],
      [dead, exit, 'Traceback (most recent call last):', '  File "/x/sglang/cli/main.py", line 26, in main'],
    ]) {
      const d = diagnoseText([...READY, ...tail, ''].join('\n')).classification;
      expect(d.category).toBe('other');
      expect(d.evidence.map((e) => e.text).slice(0, 2)).toEqual([exit, dead]);
      expect(d.summary).toContain('Rank 0 scheduler is dead');
      expect(d.summary).toContain('Exit code: -9');
    }
  });

  it("the child's own error, when the log has it, is the root over its parent's report of the exit", () => {
    const own =
      '[torch_memory_saver.cpp] CUresult error  result=1 file=csrc/torch_memory_saver.cpp func=resume line=214';
    const d = diagnose([own, own, 'Child process unexpectedly failed with an exit code 256. pid=97721']);
    expect(d.category).toBe('other');
    expect(d.root).toBe(own);
  });

  it("a launcher's header for its child's standard error states no error; its report of the signal stays the root", () => {
    const signal =
      '2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 4 rank=0';
    const d = diagnose([
      '2024-03-06T17:53:22.336246Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0',
      '2024-03-06T17:53:31.052367Z ERROR shard-manager: text_generation_launcher: Shard complete standard error output:',
      ' rank=0',
      signal,
    ]);
    expect(d.root).toBe(signal);
  });

  it("uvicorn's record of an application's exception is the root of a traceback cut before its exception line", () => {
    const asgi = '[2025-06-19 02:07:56] ERROR:    Exception in ASGI application';
    const d = diagnose([
      asgi,
      'Traceback (most recent call last):',
      '  File "/x/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi',
      '    result = await app(  # type: ignore[func-returns-value]',
      '  File "/x/starlette/middleware/errors.py", line 165, in __call__',
      '    await self.app(scope, receive, _send)',
    ]);
    expect(d.root).toBe(asgi);
  });

  it("PyTorch's monitored barrier naming the faulty rank, after a launcher's sigquit, is the process group's failure", () => {
    const gloo =
      '[rank3]:[E421 04:13:43.426633564 ProcessGroupGloo.cpp:143] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.';
    const d = diagnose([
      '[2025-04-21 04:13:43] Received sigquit from a child process. It usually means the child failed.',
      gloo,
      '[2025-04-21 04:13:43 TP3] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/x/sglang/srt/managers/scheduler.py", line 2056, in run_scheduler_process',
      '    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)',
    ]);
    expect(d.category, d.reason).toBe('nccl_error');
    expect(d.root).toBe(gloo);
  });
});

describe('what a configuration refused says: a setting and the values it allows', () => {
  const raised = (file: string, exc: string) => [
    'Traceback (most recent call last):',
    `  File "${file}", line 42, in check`,
    '    raise_it()',
    exc,
  ];
  it.each([
    [
      'a setting that must divide another',
      'ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8)',
    ],
    [
      "a kernel's check with its condition spelled out",
      'RuntimeError: Expect (32 <= headDim <= 2048) && (numTokensPerPage <= 128), got headDim=576',
    ],
    [
      'two settings that must be given together',
      'ValueError: Expected both speculative_model and num_speculative_tokens to be provided',
    ],
    ["a setting's allowed values", "ValueError: kv_cache_dtype should be one of ['auto', 'fp8']"],
  ])('%s is a configuration rejected', (_name, exc) => {
    expect(diagnose(raised('/x/vllm/config/model.py', exc)).category).toBe('backend_assertion');
  });

  it.each([
    [
      "a peer's engine ID that differs in a KV-connector handshake",
      'RuntimeError: Remote NIXL agent engine ID mismatch. Expected 46126a31, received 8d2f',
    ],
    [
      "a library's internal mapping",
      'ValueError: Backend should be defined in the BACKENDS_MAPPING. Offending backend: x',
    ],
    ["PyTorch's dtype check of a tensor op", 'RuntimeError: expected scalar type Float but found Half'],
  ])('%s is no configuration rejected', (_name, exc) => {
    expect(diagnose(raised('/x/site-packages/somelib/core.py', exc)).category).toBe('other');
  });

  it("a request's JSON schema the grammar backend cannot compile is the request's, not a setting", () => {
    const exc =
      'RuntimeError: [06:33:23] /project/cpp/json_schema_converter.cc:2181: items must be a boolean or an object';
    const d = diagnose([
      'Traceback (most recent call last):',
      '  File "/x/vllm/v1/structured_output/backend_xgrammar.py", line 42, in compile_grammar',
      '    ctx = self.compiler.compile_json_schema(grammar_spec, any_whitespace=not self.disable_any_whitespace)',
      exc,
    ]);
    expect(d.category, d.reason).toBe('other');
    expect(d.root).toBe(exc);
  });

  it("a grammar backend that cannot be set up for the server's tokenizer at start-up is a configuration rejected", () => {
    const exc =
      'ValueError: The vocab type of the tokenizer is not supported: expected one of RAW, BYTE_FALLBACK, BYTE_LEVEL';
    const d = diagnose([
      '[2025-11-05 12:00:00] Load weight begin. avail mem=70.00 GB',
      '[2025-11-05 12:00:10] Load weight end. type=X, dtype=torch.bfloat16',
      '[2025-11-05 12:00:11] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 300, in __init__',
      '    self.grammar_backend = create_grammar_backend(server_args, self.tokenizer, vocab_size)',
      '  File "/sgl/python/sglang/srt/constrained/xgrammar_backend.py", line 120, in __init__',
      '    tokenizer_info = TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)',
      exc,
    ]);
    expect(d.category, d.reason).toBe('backend_assertion');
    expect(d.root).toBe(exc);
  });
});

describe('more wordings of a known class', () => {
  const core = '(EngineCore_DP0 pid=1511501) ERROR 12-15 18:57:10 [core.py:918] ';
  it("a failure raised while a LoRA adapter is loaded is a model that cannot be loaded; a check on the adapter's settings is a configuration rejected", () => {
    const lora = (exc: string[]) => [
      `${core}Invocation of add_lora method failed`,
      `${core}Traceback (most recent call last):`,
      `${core}  File "/x/vllm/lora/worker_manager.py", line 102, in _load_adapter`,
      `${core}    lora = self._lora_model_cls.from_local_checkpoint(`,
      ...exc,
    ];
    const cut = diagnose(lora([]));
    expect(cut.category, cut.reason).toBe('model_load_error');
    expect(cut.root).toContain('Invocation of add_lora method failed');
    expect(diagnose(lora([`${core}ValueError: LoRA rank 256 is greater than max_lora_rank 16.`])).category).toBe(
      'backend_assertion',
    );
  });

  it("an Ascend NPU's memory protection unit refusing an address is an illegal memory access", () => {
    const line =
      '       The extend info: errcode:(0, 0x200000000000000, 0) errorStr: The MPU address access is invalid. fixp_error0 info: 0xa0bfbd5';
    const d = diagnose([
      'EZ9999: [PID: 696742] 2025-10-31-21:35:03.992.057 The error from device(chipId:7, dieId:0)',
      line,
    ]);
    expect(d.category).toBe('illegal_memory_access');
    expect(d.root).toBe(line);
  });
});

describe("a kernel library's host check: a refused input, or a call it ran that failed", () => {
  it.each([
    [
      'a kernel run that failed',
      '[TensorRT-LLM][ERROR] Assertion failed: Error occurred when running GEMM! (/src/x/KernelRunner.cpp:180)',
      'other',
    ],
    [
      'a JIT compiler that exited with an error',
      'RuntimeError: Assertion error (csrc/jit/kernel_runtime.hpp:45): exit_code == 0',
      'other',
    ],
    [
      'a setting the kernel refuses',
      '[TensorRT-LLM][ERROR] Assertion failed: Invalid low_rank (1024). low_rank must be smaller than mMaxLowRank (64)',
      'backend_assertion',
    ],
    [
      'a layout the kernel refuses',
      "RuntimeError: Failed: Assertion error csrc/utils/layout.hpp:57 'Unknown recipe'",
      'backend_assertion',
    ],
  ])('%s', (_name, line, want) => {
    expect(diagnose([line]).category).toBe(want);
  });
});
