// The classifier's layers, each on its own: wrapper stripping, exception lines, exception rules, and what the
// engine makes of structure (source lines, C++ exceptions, bare exception lines, exit status).
import { describe, expect, it } from 'vitest';
import { matchException, parseExceptionLine } from '../../src/logs/classify/exceptions.ts';
import { diagnoseText, loadCatalog } from '../../src/logs/classify/index.ts';
import { stripWrappers } from '../../src/logs/classify/normalise.ts';
import { parseMilestone } from '../../src/logs/milestones.ts';

describe('stripWrappers', () => {
  const payload = '  File "/x/sglang/srt/managers/scheduler.py", line 12, in event_loop';
  it.each([
    ['docker compose v2', `sglang-1  | ${payload}`],
    ['docker compose v1', `sglang_server_1 | ${payload}`],
    ['Ray actor', `(RayWorkerWrapper pid=2202490) ${payload}`],
    ['Ray with ip', `(pid=5, ip=10.0.0.2) ${payload}`],
    ['vLLM V1 logger', `(EngineCore_DP0 pid=1) ERROR 11-05 12:19:32 [core.py:708] ${payload}`],
    [
      'vLLM worker with its rank',
      `(VllmWorker rank=3 pid=1090) ERROR 06-05 06:18:13 [multiproc_executor.py:470] ${payload}`,
    ],
    ['vLLM V0 logger', `ERROR 08-19 07:51:03 model_runner.py:732] ${payload}`],
    ['vLLM V0 logger in an indented block', `  ERROR 08-19 07:51:03 model_runner.py:732] ${payload}`],
    ["Ray's deduplication note after the line", `(SGLangEngine pid=23902) ${payload} [repeated 4x across cluster]`],
    ["docker compose's column with the name cut off", `  | ${payload}`],
    ['a quoted blank line run into the next', `>  > ${payload}`],
    ['vLLM-style logger with the year', `ERROR 2025-07-21 14:34:24.934 engine_factory.py:62] ${payload}`],
    ['Python logging', `ERROR:root:${payload}`],
    ['Kubernetes CRI', `2025-11-05T12:19:32.123456789Z stderr F ${payload}`],
    ['Markdown quote', `> ${payload}`],
    ['journald', `Dec 01 12:00:00 gpu-box python3[1234]: ${payload}`],
    ['mpirun', `[1,0]<stderr>:${payload}`],
    ['stacked', `sglang-1  | (SGLangEngine pid=7) ${payload}`],
  ])('%s: the payload comes back exactly, indentation included', (_name, wrapped) => {
    expect(stripWrappers(wrapped)).toBe(payload);
  });

  it('takes off Markdown bold around a pasted line', () => {
    expect(stripWrappers('**ImportError: /opt/python/site-packages/sgl_kernel/flash_ops.so: undefined symbol**')).toBe(
      'ImportError: /opt/python/site-packages/sgl_kernel/flash_ops.so: undefined symbol',
    );
  });

  it('leaves SGLang lines and plain text alone', () => {
    for (const line of [
      '[2026-02-19 00:17:24 TP3] Load weight begin. avail mem=93.12 GB',
      'RuntimeError: CUDA error: an illegal memory access was encountered',
      'Capturing batches (bs=512 avail_mem=3.10 GB):   0%|          | 0/52',
      '100%|██████████| 83/83 [02:11<00:00,  1.58s/it]',
    ]) {
      expect(stripWrappers(line)).toBe(line);
    }
  });
});

describe('a record in an indented paste', () => {
  it("keeps its level: vLLM's INFO notice that names out-of-memory is no failure, its ERROR is", () => {
    const notice =
      '  INFO 03-21 02:38:53 model_runner.py:1434] Capturing cudagraphs for decoding. If out-of-memory error occurs during cudagraph capture, consider decreasing `gpu_memory_utilization`.';
    const before = '  INFO 03-21 02:38:51 executor_base.py:110] # CUDA blocks: 2289, # CPU blocks: 2048';
    expect(diagnoseText(`${before}\n${notice}\n`).classification.category).toBe('none');
    const failed =
      '  ERROR 03-21 02:38:59 engine.py:139] RuntimeError: CUDA error: an illegal memory access was encountered';
    expect(diagnoseText(`${before}\n${notice}\n${failed}\n`).classification.category).toBe('illegal_memory_access');
  });
});

describe('parseExceptionLine', () => {
  it('reads type and message, dotted and bare', () => {
    expect(parseExceptionLine("KeyError: 'glm_moe_dsa'")).toEqual({
      type: 'KeyError',
      short: 'KeyError',
      message: "'glm_moe_dsa'",
    });
    expect(parseExceptionLine('torch.OutOfMemoryError: CUDA out of memory.')?.short).toBe('OutOfMemoryError');
    expect(parseExceptionLine('AssertionError')).toEqual({
      type: 'AssertionError',
      short: 'AssertionError',
      message: '',
    });
  });

  it("reads Ray's remote task errors, which name their cause in parentheses", () => {
    expect(parseExceptionLine('ray.exceptions.RayTaskError(EngineDeadError): ray::AgentLoopWorker.generate()')).toEqual(
      {
        type: 'ray.exceptions.RayTaskError',
        short: 'RayTaskError',
        message: 'ray::AgentLoopWorker.generate()',
      },
    );
  });

  it('refuses what is not an exception line: prose, warnings, source, paths', () => {
    for (const line of [
      'The server is fired up and ready to roll!',
      'UserWarning: TypedStorage is deprecated',
      'raise RuntimeError(f"NCCL error: {error_str}")',
      '/usr/lib/python3/site-packages/torch/cuda/__init__.py:61: FutureWarning: x',
      'Error: Could not create backend',
    ]) {
      expect(parseExceptionLine(line)).toBeNull();
    }
  });
});

describe('exception rules', () => {
  const rules = loadCatalog().exceptionRules;
  const frame = (file: string, func: string) => ({ line: 1, text: '', file, func });

  it('a KeyError raised in transformers config code is a model that cannot be loaded, whatever the key', () => {
    const exc = { type: 'KeyError', short: 'KeyError', message: "'some_new_model_type'" };
    const frames = [
      frame('/x/sglang/srt/server_args.py', '__post_init__'),
      frame('/x/transformers/models/auto/configuration_auto.py', 'from_pretrained'),
      frame('/x/transformers/models/auto/configuration_auto.py', '__getitem__'),
    ];
    expect(matchException(rules, exc, frames)?.category).toBe('model_load_error');
    // The same KeyError raised in scheduler code is not about loading a model.
    expect(matchException(rules, exc, [frame('/x/sglang/srt/managers/scheduler.py', 'event_loop')])).toBeNull();
  });

  it('any out-of-memory wording is an OOM, and beats the capture frames it was raised under', () => {
    const exc = { type: 'RuntimeError', short: 'RuntimeError', message: 'CUDA driver error: out of memory' };
    const frames = [frame('/x/sglang/srt/model_executor/cuda_graph_runner.py', 'capture')];
    expect(matchException(rules, exc, frames)?.category).toBe('cuda_oom');
  });

  it('a tokenizer whose own code fails is a tokenizer error (other); a KeyError for a config class is a model type', () => {
    const exc = { type: 'ValueError', short: 'ValueError', message: 'Tokenizer class FooTokenizer does not exist' };
    const tok = [
      frame('/x/app.py', '<module>'),
      frame('/x/transformers/models/auto/tokenization_auto.py', 'from_pretrained'),
    ];
    expect(matchException(rules, exc, tok)?.category).toBe('other');
    // Raised one level further in, by the config mapping the tokenizer asked: the model type is unknown.
    const key = { type: 'KeyError', short: 'KeyError', message: "'FooConfig'" };
    const mapping = [...tok, frame('/x/transformers/models/auto/auto_factory.py', '__getitem__')];
    expect(matchException(rules, key, mapping)?.category).toBe('model_load_error');
    // A tokenizer whose files are missing is a model that cannot be loaded.
    const missing = { type: 'OSError', short: 'OSError', message: "Can't load tokenizer for '/models/x'." };
    expect(matchException(rules, missing, tok)?.category).toBe('model_load_error');
  });

  it('a link to the documentation in a message is not a model file on the hub', () => {
    const exc = {
      type: 'ValueError',
      short: 'ValueError',
      message:
        'Cannot use chat template functions because tokenizer.chat_template is not set. For information, please see the documentation at https://huggingface.co/docs/transformers/main/en/chat_templating',
    };
    expect(matchException(rules, exc, [])).toBeNull();
    const hub = { ...exc, message: 'Unauthorized for url: https://huggingface.co/api/models/org/model/revision/main' };
    expect(matchException(rules, hub, [])?.category).toBe('model_load_error');
  });

  it('the ImportError family is an import error', () => {
    for (const type of ['ImportError', 'ModuleNotFoundError']) {
      expect(matchException(rules, { type, short: type, message: "No module named 'x'" }, [])?.category).toBe(
        'import_error',
      );
    }
  });
});

describe('py-spy stack dumps', () => {
  const timeout = '[2026-03-02 10:11:12 TP0] Watchdog timeout (self.watchdog_timeout=300)';
  const dump = (state: string) => [
    '[2026-03-02 10:11:12 TP0] Pyspy dump for PID 309:',
    'Process 309: sglang::scheduler_TP0',
    '',
    `Thread 309 (${state}): "MainThread"`,
    '    _wait (sglang/srt/layers/moe/ep_moe/kernels.py:88)',
    '    forward (sglang/srt/models/deepseek_v2.py:512)',
    '    forward_extend (sglang/srt/model_executor/model_runner.py:1722)',
    '    run_batch (sglang/srt/managers/scheduler.py:1693)',
    '    event_loop_overlap (sglang/srt/managers/scheduler.py:801)',
  ];

  it('the running thread of a hang dump names the phase, read as frames (innermost first)', () => {
    const d = diagnoseText([timeout, ...dump('active+gil')].join('\n'));
    expect(d.classification.category).toBe('watchdog_timeout');
    expect(d.classification.phase).toBe('prefill');
    expect(d.classification.evidence[0]?.line).toBe(1);
  });

  it('an idle thread says nothing; a dump is never taken as a crash', () => {
    const alone = diagnoseText(timeout).classification.phase;
    expect(diagnoseText([timeout, ...dump('idle')].join('\n')).classification.phase).toBe(alone);
    expect(diagnoseText(dump('active').join('\n')).classification.category).toBe('none');
  });
});

describe('torch rank labels', () => {
  it.each(['[rankx]: ', '[rankN]: ', '[rank*]: ', '[rank3]: '])(
    'a label %s (a number or the placeholder people paste) is taken off: the exception line behind it is read',
    (label) => {
      const d = diagnoseText(`${label}TypeError: forward() got an unexpected keyword argument 'positions'`);
      expect(d.classification.category).toBe('other');
      expect(d.classification.evidence[0]?.line).toBe(1);
      expect(d.reason).toContain('TypeError');
    },
  );
});

describe('NCCL WARN lines', () => {
  const info = 'gpu-7:4242:4300 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC';
  it.each([
    ['CUDACHECK', "gpu-7:4242:4300 [1] transport/p2p.cc:275 NCCL WARN Cuda failure 2 'out of device handles'"],
    ['SYSCHECK', 'gpu-7:4242:4300 [1] misc/socket.cc:480 NCCL WARN Call to connect failed : Connection refused'],
  ])('a failed call NCCL reports (%s) is an NCCL error, its WARN line the root, with no traceback', (_n, warn) => {
    const d = diagnoseText([info, warn, 'gpu-7:4242:4300 [1] NCCL INFO init.cc:1010 -> 1'].join('\n'));
    expect(d.classification.category).toBe('nccl_error');
    expect(d.classification.evidence[0]?.line).toBe(2);
  });

  it('a WARN that reports no failed call is not a crash by itself', () => {
    const warn = 'gpu-7:4242:4300 [1] NCCL WARN NCCL_SOCKET_IFNAME set to eth9 but no interface matches';
    expect(diagnoseText([info, warn].join('\n')).classification.category).toBe('none');
  });
});

describe('an error record logged with a traceback that was cut', () => {
  // logger.exception(msg) / logger.error(msg, exc_info=True) print the message, then the traceback.
  const frames = [
    'Traceback (most recent call last):',
    '  File "/x/vllm/engine/llm_engine.py", line 274, in __init__',
    '    self.model_executor = executor_class(vllm_config=vllm_config)',
    '  File "/x/vllm/executor/executor_base.py", line 52, in __init__',
    '    self._init_executor()',
  ];
  const message = 'FlashMLA needs a GPU with compute capability 9.0 or newer; this GPU has 8.6.';

  it.each([
    ['vLLM logger with the year', `ERROR 2026-03-02 10:11:12.345 engine_factory.py:62] ${message}`],
    ['vLLM V1 logger', `(EngineCore_DP0 pid=7) ERROR 03-02 10:11:12 [core.py:708] ${message}`],
    ['Python logging', `ERROR:sglang.srt.entrypoints.engine:${message}`],
  ])('%s: the message stands in for the lost exception line', (_name, record) => {
    const d = diagnoseText([record, ...frames].join('\n'));
    expect(d.classification.category).toBe('unsupported_arch');
    expect(d.classification.evidence[0]?.line).toBe(1);
  });

  it('an info record before it, or a record that is not the line right before the header, is not its message', () => {
    for (const log of [
      [`INFO 03-02 10:11:12 [core.py:708] ${message}`, ...frames],
      [`ERROR:root:${message}`, 'INFO:root:retrying', ...frames],
    ]) {
      const d = diagnoseText(log.join('\n'));
      expect(d.classification.category).toBe('other');
      expect(d.reason).toContain('no signature or exception rule names');
    }
  });

  it('a record whose words the pre-filter does not know is still the message of the traceback logged after it', () => {
    const d = diagnoseText(["ERROR:root:No module named 'flash_mla'", ...frames].join('\n'));
    expect([d.classification.category, d.classification.evidence[0]?.line], d.reason).toEqual(['import_error', 1]);
  });

  it('an exception line that was printed wins over the record', () => {
    const d = diagnoseText(
      [`ERROR:root:${message}`, ...frames, "ModuleNotFoundError: No module named 'flash_mla'"].join('\n'),
    );
    expect(d.classification.category).toBe('import_error');
    expect(d.classification.evidence[0]?.line).toBe(7);
  });
});

describe('the engine reads IPython tracebacks', () => {
  // IPython prints the exception type in the header, frames without `File "..."`, numbered source lines with the
  // failing one marked `---->`, then the exception line after a blank line.
  const notebook = (call: string) =>
    [
      '---------------------------------------------------------------------------',
      'RuntimeError                              Traceback (most recent call last)',
      'Cell In[3], line 5',
      '      3 logits = model(ids).logits[:, -1]',
      '      4 probs = torch.softmax(logits / temperature, dim=-1)',
      `----> 5 ${call}`,
      '',
      'File ~/venv/lib/python3.11/site-packages/torch/utils/_device.py:104, in DeviceContext.__torch_function__(self, func, types, args, kwargs)',
      '    102 if func in _device_constructors() and kwargs.get("device") is None:',
      '--> 104 return func(*args, **kwargs)',
      '',
      'RuntimeError: CUDA error: device-side assert triggered',
    ].join('\n');

  it('reads the marked call: a device assert from torch.multinomial is NaN in sampling, its root the exception line', () => {
    const d = diagnoseText(notebook('next_id = torch.multinomial(probs, num_samples=1)'));
    expect(d.classification.category).toBe('nan_in_sampling');
    expect(d.classification.evidence[0]?.text).toBe('RuntimeError: CUDA error: device-side assert triggered');
    expect(d.reason).toContain('exc-multinomial-device-assert');
  });

  it('a device assert under any other call stays a generic device assert', () => {
    const d = diagnoseText(notebook('next_id = embed(probs.argmax(-1))'));
    expect(d.classification.category).toBe('other');
    expect(d.classification.evidence[0]?.text).toBe('RuntimeError: CUDA error: device-side assert triggered');
  });

  it('reads the frames of IPython before 8 (`<ipython-input-N-hash> in <module>()`) the same way', () => {
    const log = [
      'RuntimeError                              Traceback (most recent call last)',
      '<ipython-input-2-0a1b2c3d4e5f> in <module>()',
      '      1 probs = torch.tensor([0.0, float("nan")], device="cuda")',
      '----> 2 torch.multinomial(probs, 1).item()',
      '',
      'RuntimeError: cuda runtime error (59) : device-side assert triggered at /pytorch/aten/src/THC/THCGeneral.cpp:844',
    ].join('\n');
    const d = diagnoseText(log);
    expect(d.classification.category).toBe('nan_in_sampling');
    expect(d.classification.evidence[0]?.line).toBe(6);
  });
});

describe('the engine reads structure', () => {
  it('never takes a source line shown under a frame as the root', () => {
    const log = [
      'Traceback (most recent call last):',
      '  File "/x/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 1, in check',
      '    raise RuntimeError(f"NCCL error: {error_str}")',
      '  File "/x/sglang/srt/managers/scheduler.py", line 2, in event_loop_normal',
      '    self.run_batch(batch)',
      'TypeError: unsupported operand type(s) for +: NoneType and int',
    ].join('\n');
    const d = diagnoseText(log);
    expect(d.classification.category).toBe('other');
    expect(d.classification.evidence[0]?.line).toBe(6);
    expect(d.reason).toContain('TypeError');
  });

  it('reads an excerpt that starts mid-traceback', () => {
    const log = [
      '  File "/x/transformers/models/auto/configuration_auto.py", line 1, in from_pretrained',
      '    config_class = CONFIG_MAPPING[config_dict["model_type"]]',
      '  File "/x/transformers/models/auto/configuration_auto.py", line 2, in __getitem__',
      '    raise KeyError(key)',
      "KeyError: 'glm_moe_dsa'",
    ].join('\n');
    const d = diagnoseText(log);
    expect(d.classification.category).toBe('model_load_error');
    expect(d.classification.evidence[0]?.text).toBe("KeyError: 'glm_moe_dsa'");
    expect(d.reason).toMatch(/exception rule|signature/);
  });

  it('takes the what() line of a C++ exception as its root', () => {
    const log = [
      "terminate called after throwing an instance of 'c10::DistBackendError'",
      '  what():  [PG 0 Rank 3] Process group watchdog thread terminated with exception: NCCL communicator was aborted',
      'Exception raised from ncclCommWatchdog at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1521',
    ].join('\n');
    const d = diagnoseText(log);
    expect(d.classification.category).toBe('nccl_error');
    expect(d.classification.evidence[0]?.line).toBe(2);
  });

  it('an exception ignored at shutdown is not a crash', () => {
    const log = [
      'Exception ignored in: <function Engine.__del__ at 0x7f>',
      'Traceback (most recent call last):',
      '  File "/x/sglang/srt/entrypoints/engine.py", line 1, in __del__',
      'ImportError: sys.meta_path is None, Python is likely shutting down',
    ].join('\n');
    expect(diagnoseText(log).classification.category).toBe('none');
  });

  it('a process that exited non-zero is never none: other, with its status and last line', () => {
    const log =
      '[2026-02-19 00:17:24] server_args=ServerArgs(model_path="x")\n[2026-02-19 00:17:25] Init torch distributed begin.\n';
    expect(diagnoseText(log).classification.category).toBe('none');
    const d = diagnoseText(log, { exit: { code: 1, signal: null } });
    expect(d.classification.category).toBe('other');
    expect(d.classification.summary).toContain('status 1');
    expect(d.classification.evidence[0]?.line).toBe(2);
    expect(d.reason).toContain('exited with status 1');
    expect(diagnoseText(log, { exit: { code: null, signal: 'SIGKILL' } }).classification.summary).toContain(
      'signal SIGKILL',
    );
    expect(diagnoseText(log, { exit: { code: 0, signal: null } }).classification.category).toBe('none');
  });

  it('reads CUDA status codes and errors by what CUDA defines them to mean', () => {
    // CUresult 2 is CUDA_ERROR_OUT_OF_MEMORY (a VMM allocator's cuMemCreate).
    const oom = diagnoseText('[vmm.cpp] CUresult error  result=2 file=vmm.cpp func=cu_mem_create line=7\n');
    expect(oom.classification.category).toBe('cuda_oom');
    expect(diagnoseText('[vmm.cpp] CUresult error  result=1 file=vmm.cpp\n').classification.category).not.toBe(
      'cuda_oom',
    );
    // A stream-capture error string, whoever prints it (here NCCL), is a capture failure, in the capture phase.
    const cap = diagnoseText(
      "host:1:1 [0] enqueue.cc:1 NCCL WARN Cuda failure 'operation not permitted when stream is capturing'\n",
    ).classification;
    expect([cap.category, cap.phase]).toEqual(['cuda_graph_capture_failed', 'cuda_graph_capture']);
    // Another engine's wording of a failed capture.
    expect(diagnoseText('Graph capture failed: kernel X: unsupported dtype F32\n').classification.category).toBe(
      'cuda_graph_capture_failed',
    );
  });

  it("a kernel library's host-side check and a configured limit are backend assertions; a KV cache too small is an OOM", () => {
    const cls = (t: string) => diagnoseText(`${t}\n`).classification.category;
    expect(cls('[TensorRT-LLM][ERROR] Assertion failed: Invalid tile (7). tile must be a power of two')).toBe(
      'backend_assertion',
    );
    // pytest's `E   ` in front of the exception line is a wrapper.
    expect(cls("E       RuntimeError: Failed: Assertion error csrc/impls/layout.hpp:12 'n % 4 == 0'")).toBe(
      'backend_assertion',
    );
    expect(cls('ValueError: Adapter rank 64 is greater than max_adapter_rank 16.')).toBe('backend_assertion');
    expect(
      cls(
        'ValueError: The max seq len (9000) is larger than the maximum number of tokens that can be stored in KV cache (4000).',
      ),
    ).toBe('cuda_oom');
  });

  it('names crashes outside Python: the kernel OOM killer, a Rust panic, a dead Ray actor; a line pasted as inline code', () => {
    const d = (t: string) => diagnoseText(`${t}\n`);
    for (const t of [
      '[123.4] Out of memory: Killed process 4242 (python) total-vm:1kB, anon-rss:1kB',
      "thread 'main' panicked at src/main.rs:1:2:",
      '`The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR`',
    ]) {
      expect(d(t).classification.category, t).toBe('other');
      expect(d(t).reason, t).toMatch(/^signature /);
    }
    // Inline code around an exception line: the exception is read, not the backtick.
    expect(d('`ValueError: The input (9 tokens) is longer than the context (4 tokens).`').reason).toMatch(/ValueError/);
  });

  it("names transformers' and vLLM's own messages when they are pasted without their exception type", () => {
    const path = diagnoseText(
      "Incorrect path_or_model_id: '/data/models/Meta-Llama-3-8B-Instruct'. Please provide either the path to a local folder or the repo_id of a model on the Hub.",
    ).classification;
    expect([path.category, path.phase]).toEqual(['model_load_error', 'weight_load']);
    const kv = diagnoseText(
      [
        'INFO 11-21 10:00:00 gpu_executor.py:122] # GPU blocks: 1478, # CPU blocks: 2048',
        "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
      ].join('\n'),
    ).classification;
    expect([kv.category, kv.phase, kv.evidence[0]?.line]).toEqual(['cuda_oom', 'kv_alloc', 2]);
  });

  it('an OOM that failed graph capture is an OOM (the catalog overlaps), in the capture phase', () => {
    const log = [
      '[2025-01-01 00:00:00 TP0] Capture cuda graph begin. This can take up to several minutes.',
      'Traceback (most recent call last):',
      '  File "/x/sglang/srt/model_executor/cuda_graph_runner.py", line 1, in capture',
      'Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB',
    ].join('\n');
    const c = diagnoseText(log).classification;
    expect([c.category, c.phase]).toEqual(['cuda_oom', 'cuda_graph_capture']);
  });
});

describe('the traceback reader under real-world damage', () => {
  const tb = (...lines: string[]) => diagnoseText(`${lines.join('\n')}\n`).classification;
  const cfgFrames = [
    '  File "/x/transformers/models/auto/configuration_auto.py", line 1, in from_pretrained',
    '    config_class = CONFIG_MAPPING[config_dict["model_type"]]',
    '  File "/x/transformers/models/auto/configuration_auto.py", line 2, in __getitem__',
    '    raise KeyError(key)',
  ];

  it("keeps reading a traceback through another rank's log records", () => {
    const c = tb(
      'Traceback (most recent call last):',
      ...cfgFrames,
      '[2025-01-01 00:00:00 TP7] Using default MoE kernel config. Performance might be sub-optimal!',
      "KeyError: 'new_model_type'",
    );
    expect([c.category, c.evidence[0]?.text]).toEqual(['model_load_error', "KeyError: 'new_model_type'"]);
  });

  it('reads frames and the exception behind torch.distributed rank labels, inside or outside other wrappers', () => {
    const lines = ['Traceback (most recent call last):', ...cfgFrames, "KeyError: 'new_model_type'"];
    for (const wrap of [(l: string) => `[rank0]: ${l}`, (l: string) => `[default0]:sglang-1  | ${l}`]) {
      expect(tb(...lines.map(wrap)).category).toBe('model_load_error');
    }
    // A glog line behind the label is a new record (c10 prints the month unpadded).
    const after = tb(...lines.slice(0, -1).map((l) => `[rank0]: ${l}`), '[rank0]:[W416 02:35:51.4 x.cpp:1] Warning: x');
    expect(after.evidence[0]?.text).not.toContain('Warning');
  });

  it('takes the line after Python-format frames as the exception even without a header, not after faulthandler', () => {
    expect(tb(...cfgFrames, 'some message printed without a type').evidence[0]?.text).toBe(
      'some message printed without a type',
    );
    const dump = tb(
      'Fatal Python error: Aborted',
      '  File "/x/threading.py", line 1 in wait',
      'Extension modules: numpy.core._multiarray_umath',
    );
    expect(dump.evidence[0]?.text).not.toContain('Extension modules');
  });

  it('joins a hard-wrapped frame name and exception message, and reads through `...` elisions', () => {
    const c = tb(
      '  File "/x/vllm/v1/engine/core.py", line 305, in _initialize_k',
      'v_caches',
      '    kv_cache_configs = get_kv_cache_configs(',
      '...',
      '  File "/x/vllm/v1/core/kv_cache_utils.py", line 758, in _check_enough_kv_cache_memory',
      "ValueError: To serve at least one request with the model's max seq len (100000), (4.26 GiB KV cach",
      'e is needed, which is larger than the available KV cache memory (4.25 GiB).',
    );
    expect([c.category, c.phase]).toEqual(['cuda_oom', 'kv_alloc']);
    expect(c.evidence[0]?.text).toContain('ValueError: To serve');
  });

  it('reads frames whose indentation was lost, their source lines included, never a source line as the root', () => {
    const c = tb(
      'File "/x/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 375, in ncclCommInitRank',
      'self.NCCL_CHECK(',
      'File "/x/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 350, in NCCL_CHECK',
      'raise RuntimeError(f"NCCL error: {error_str}")',
      'RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)',
    );
    expect([c.category, c.evidence[0]?.text]).toEqual([
      'nccl_error',
      'RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)',
    ]);
    // a message with no type right after such a frame is still the exception, not its source
    const msg = tb(
      'File "/x/torch/distributed/distributed_c10d.py", line 727, in _new_process_group_helper',
      "Distributed package doesn't have NCCL built in",
    );
    expect(msg.evidence[0]?.text).toBe("Distributed package doesn't have NCCL built in");
  });

  it('reads lines a CI runner stamped with an ISO time in brackets, quoted with blank quoted lines between', () => {
    const c = tb(
      '> [2025-11-06T02:10:00.702Z]   File "/x/sglang/srt/models/deepseek_vl2.py", line 252, in load_weights',
      '> ',
      '> [2025-11-06T02:10:00.702Z]     param = params_dict[name]',
      '> ',
      "> [2025-11-06T02:10:00.702Z] KeyError: 'lm_head.weight'",
      '> ',
      '> [2025-11-06T02:10:00.703Z] [2025-11-06 02:10:00] Received sigquit from a child process. It usually means the child failed.',
    );
    expect([c.category, c.phase]).toEqual(['model_load_error', 'weight_load']);
    expect(c.evidence[0]?.text).toContain("KeyError: 'lm_head.weight'");
  });

  it('reads an indented line right after an exception line as more of its message, not a record behind a label', () => {
    // an author's hard wrap aligned under the message (Python prints a message's own newlines as they are)
    const bare = tb(
      'ValueError: the hidden size 96 of this layer is not',
      '      divisible by the quantization block 128.',
    );
    expect([bare.category, bare.evidence[0]?.line]).toEqual(['backend_assertion', 1]);
    const wrapped = tb(
      ...['ValueError: the hidden size 96 of this layer is not', '      divisible by the quantization block 128.'].map(
        (l) => `sglang-1  | ${l}`,
      ),
    );
    expect([wrapped.category, wrapped.evidence[0]?.line]).toEqual(['backend_assertion', 1]);
    // a bare exception line is a traceback whose frames were cut: its message continues on the next lines as one's does
    const unindented = tb(
      'ValueError: the hidden size 96 of this layer is not',
      'divisible by the quantization block 128.',
    );
    expect([unindented.category, unindented.evidence[0]?.line]).toEqual(['backend_assertion', 1]);
    // a label or record behind the indentation is a line of its own
    const other = tb(
      "KeyError: 'layers.1.mlp.w13_weight'",
      '(VllmWorker rank=0 pid=1)  [rank0]:[W816 11:45:16.4 ProcessGroupNCCL.cpp:1479] Warning: destroy_process_group() was not called',
    );
    expect(other.category).not.toBe('nccl_error');
    expect(other.evidence[0]?.line).toBe(1);
  });

  it("takes the exception line after `raise X` as the root under any wrapper, not the source line's name", () => {
    const lines = [
      '  File "/x/sglang/srt/eplb/recorder.py", line 9, in init_new',
      '    raise NotImplementedError',
      'NotImplementedError',
      'Process Process-2:',
    ];
    for (const wrap of [(l: string) => l, (l: string) => `sglang-1  | ${l}`, (l: string) => `ERROR:root:${l}`]) {
      expect(tb(...lines.map(wrap)).evidence[0]?.line).toBe(3);
    }
  });

  it('reads srun --label in front of indented frame lines', () => {
    const c = tb('0: Traceback (most recent call last):', ...cfgFrames.map((l) => `0: ${l}`), "0: KeyError: 'x'");
    expect([c.category, c.evidence[0]?.text]).toEqual(['model_load_error', "0: KeyError: 'x'"]);
  });
});

describe('phase from the frames', () => {
  it('reads the other tracebacks of the same failure when the root traceback says nothing', () => {
    const log = [
      '  File "/x/app/speculative/utils.py", line 1, in create',
      "NameError: name 'some_kernel' is not defined",
      '[2025-01-01 00:00:01 TP3] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/x/sglang/srt/managers/scheduler.py", line 2, in event_loop_normal',
      '  File "/x/sglang/srt/managers/scheduler.py", line 3, in run_batch',
      "NameError: name 'some_kernel' is not defined",
    ].join('\n');
    const c = diagnoseText(log).classification;
    expect([c.category, c.phase, c.evidence[0]?.line]).toEqual(['other', 'runtime', 2]);
  });

  it('names serving by its words in any engine (sampling, generation, a loop, a step), but not in a test program', () => {
    const crash = (file: string, func: string) =>
      diagnoseText(`Traceback (most recent call last):\n  File "${file}", line 1, in ${func}\nRuntimeError: boom\n`)
        .classification.phase;
    expect(crash('/x/engine/pyexecutor/py_executor.py', '_executor_loop_overlap')).toBe('runtime');
    expect(crash('/x/transformers/generation/utils.py', 'GenerationMixin._sample')).toBe('runtime');
    expect(crash('/x/app/common.py', 'nucleus_sampling')).toBe('runtime');
    expect(crash('/x/kernels/tests/test_low_latency.py', 'test_loop')).toBe('unknown');
    expect(crash('/x/uvloop/__init__.py', 'uvloop.loop.Loop.run_until_complete')).toBe('unknown');
    // transformers' from_pretrained also loads configs: by its name alone it is no weight load; in the tokenizer's
    // base class it loads the tokenizer, which the phase rule reads as loaded with the model (phase.ts HINTS)
    expect(crash('/x/transformers/configuration_utils.py', 'from_pretrained')).toBe('unknown');
    expect(crash('/x/transformers/tokenization_utils_base.py', 'from_pretrained')).toBe('weight_load');
  });

  it('names init steps in any engine: its capture, KV cache and start-up steps by their words, torch entry points by name', () => {
    const crash = (...frames: [string, string][]) =>
      diagnoseText(
        [
          'Traceback (most recent call last):',
          ...frames.map(([file, func]) => `  File "${file}", line 1, in ${func}`),
          'RuntimeError: boom',
        ].join('\n'),
      ).classification.phase;
    // PyTorch's capture API, under whatever the engine calls its capture step
    expect(crash(['/x/vllm/compilation/backends.py', '__call__'], ['/x/torch/cuda/graphs.py', 'capture_end'])).toBe(
      'cuda_graph_capture',
    );
    expect(crash(['/x/nanovllm/engine/model_runner.py', 'capture_cudagraph'])).toBe('cuda_graph_capture');
    expect(crash(['/x/vllm/v1/worker/gpu_model_runner.py', '_allocate_kv_cache_tensors'])).toBe('kv_alloc');
    expect(crash(['/x/train.py', 'main'], ['/x/torch/distributed/distributed_c10d.py', 'init_process_group'])).toBe(
      'startup',
    );
    expect(crash(['/x/vllm/v1/engine/utils.py', 'wait_for_engine_startup'])).toBe('startup');
    // SGLang's and vLLM's get_model load the weights (model_loader/); a serving framework's hands out a loaded model
    expect(crash(['/x/sglang/srt/model_loader/__init__.py', 'get_model'])).toBe('weight_load');
    expect(crash(['/x/xinference/core/worker.py', 'get_model'])).toBe('unknown');
  });

  it("reads a web framework's request handling as serving, and the call an excerpt stopped at as the next frame", () => {
    const served = diagnoseText(
      'Traceback (most recent call last):\n  File "/x/starlette/_exception_handler.py", line 42, in wrapped_app\n  File "/x/app/image_api.py", line 129, in generations\nTypeError: \'NoneType\' object is not subscriptable\n',
    ).classification;
    expect(served.phase).toBe('runtime');
    // behind a Ray label the source line still names its call: `_init_distributed_environment(...)` is start-up
    const cut = diagnoseText(
      [
        '(LLMEngine pid=1, ip=10.0.0.1) torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, internal error',
        '(LLMEngine pid=1, ip=10.0.0.1)   File "/x/vllm/worker/worker.py", line 62, in init_model',
        '(LLMEngine pid=1, ip=10.0.0.1)     _init_distributed_environment(self.parallel_config, self.rank,',
        '(LLMEngine pid=1, ip=10.0.0.1)   File "/x/vllm/work',
      ].join('\n'),
    ).classification;
    expect([cut.category, cut.phase]).toEqual(['nccl_error', 'startup']);
  });

  it('serving words in an HTTP client, the hub client or a compiler say nothing about serving', () => {
    const crash = (file: string, func: string) =>
      diagnoseText(`Traceback (most recent call last):\n  File "${file}", line 1, in ${func}\nRuntimeError: boom\n`)
        .classification.phase;
    expect(crash('/x/huggingface_hub/file_download.py', '_request_wrapper')).toBe('unknown');
    expect(crash('/x/requests/sessions.py', 'request')).toBe('unknown');
    expect(crash('/x/torch/_dynamo/symbolic_convert.py', 'step')).toBe('unknown');
    expect(crash('/x/vllm/v1/engine/core.py', 'step')).toBe('runtime');
  });

  it("an exception rule's usual phase yields to the init step its frames name", () => {
    const log = [
      'Traceback (most recent call last):',
      '  File "/x/text_generation_server/models/flash_causal_lm.py", line 755, in warmup',
      '    raise RuntimeError(',
      'RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`',
    ].join('\n');
    const c = diagnoseText(log).classification;
    expect([c.category, c.phase]).toEqual(['cuda_oom', 'warmup']);
    // without such frames the rule's phase stands
    const bare = diagnoseText('ValueError: No available memory for the cache blocks.').classification;
    expect([bare.category, bare.phase]).toEqual(['cuda_oom', 'kv_alloc']);
  });
});

describe('rules from what generalises, found on the f- dev cases', () => {
  const tb = (...lines: string[]) => diagnoseText(`${lines.join('\n')}\n`).classification;

  it('a config class that fails its pydantic validation is a configuration rejected', () => {
    const c = tb(
      '  File "/x/pydantic/_internal/_dataclasses.py", line 127, in __init__',
      '    s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)',
      'pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig',
    );
    expect(c.category).toBe('backend_assertion');
    // a validation error of a request's data is not
    expect(
      tb('pydantic_core._pydantic_core.ValidationError: 1 validation error for ChatCompletionRequest').category,
    ).toBe('other');
  });

  it('whatever fails in the model registry leaves the model without code to load it', () => {
    const c = tb(
      'Traceback (most recent call last):',
      '  File "/x/vllm/model_executor/models/registry.py", line 434, in _run_in_subprocess',
      '    returned.check_returncode()',
      '  File "/x/subprocess.py", line 502, in check_returncode',
      '    raise CalledProcessError(self.returncode, self.args, self.stdout,',
      "subprocess.CalledProcessError: Command '['python', '-m', 'vllm.model_executor.models.registry']' returned non-zero exit status 1.",
    );
    expect(c.category).toBe('model_load_error');
  });

  it('MPI failures are process-group failures; a CUDA error the NCCL watchdog reports is that CUDA error', () => {
    expect(tb('mpi4py.MPI.Exception: MPI_ERR_UNKNOWN: unknown error').category).toBe('nccl_error');
    const trt = tb(
      "terminate called after throwing an instance of 'tensorrt_llm::common::TllmException'",
      "  what():  [TensorRT-LLM][ERROR] Assertion failed: Failed: MPI error /x/mpiUtils.cpp:211 '6'",
    );
    expect(trt.category).toBe('nccl_error');
    const watchdog = tb(
      "terminate called after throwing an instance of 'std::runtime_error'",
      '  what():  [Rank 0] NCCL watchdog thread terminated with exception: CUDA error: unspecified launch failure',
    );
    expect([watchdog.category, watchdog.evidence[0]?.text]).toEqual([
      'other',
      '  what():  [Rank 0] NCCL watchdog thread terminated with exception: CUDA error: unspecified launch failure',
    ]);
  });

  it("names a launch failure, Open MPI's signal report and SGLang's decode OOM without a traceback", () => {
    expect(tb('llama/ggml-cuda/ggml-cuda.cu:96: CUDA error: unspecified launch failure').category).toBe('other');
    expect(tb('mpirun noticed that process rank 6 with PID 0 on node x exited on signal 9 (Killed).').category).toBe(
      'other',
    );
    expect(tb('Decode out of memory. Try to lower your batch size').category).toBe('cuda_oom');
  });

  it('an exception raised while graphs are captured fails the capture, unless it names a more specific cause', () => {
    const during = (exc: string) =>
      tb(
        'Capturing batches (bs=32 avail_mem=10.30 GB):   0%|          | 0/8 [00:00<?, ?it/s]',
        '[2026-01-04 01:42:55 TP1] Scheduler hit an exception: Traceback (most recent call last):',
        '  File "/x/flashinfer/jit/cpp_ext.py", line 299, in run_ninja',
        exc,
      );
    const ninja = during("subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.");
    expect([ninja.category, ninja.phase]).toEqual(['cuda_graph_capture_failed', 'cuda_graph_capture']);
    expect(during('RuntimeError: CUDA error: an illegal memory access was encountered').category).toBe(
      'illegal_memory_access',
    );
    // the same exception with no capture in sight is no capture failure
    expect(
      tb(
        '  File "/x/flashinfer/jit/cpp_ext.py", line 299, in run_ninja',
        "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
      ).category,
    ).toBe('other');
  });

  it('reads a frame the excerpt cut inside its path, and never takes an underline of carets as the exception', () => {
    const cut = tb(
      'vllm/engine/arg_utils.py", line 963, in create_model_config',
      '    return ModelConfig(',
      'RuntimeError: boom',
    );
    expect([cut.category, cut.phase]).toEqual(['other', 'startup']);
    const carets = tb(
      'File "/x/sglang/srt/constrained/xgrammar_backend.py", line 100, in fill_vocab_mask',
      'self.matcher.fill_next_token_bitmask(vocab_mask, idx)',
      '^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
      'RuntimeError: [23:42:39] /project/cpp/grammar_matcher.cc:556: Check failed',
    );
    expect(carets.evidence[0]?.text).toBe('RuntimeError: [23:42:39] /project/cpp/grammar_matcher.cc:556: Check failed');
  });
});

describe('milestones in the words of other engines', () => {
  const boom = ['Traceback (most recent call last):', '  File "/x/app/main.py", line 1, in main', 'RuntimeError: boom'];
  const phaseAfter = (...lines: string[]) => diagnoseText([...lines, ...boom].join('\n')).classification.phase;

  it("reads weight-load progress bars: transformers' and TensorRT-LLM's tqdm as well as SGLang's and vLLM's", () => {
    expect(parseMilestone('Loading checkpoint shards:  75%|███████▌  | 3/4 [00:08<00:02,  2.83s/it]')).toEqual({
      kind: 'shards',
      percent: 75,
      done: 3,
      total: 4,
    });
    expect(parseMilestone('Loading weights concurrently:  94%|█████████▍| 723/769 [00:01<00:00, 336.17it/s]')).toEqual({
      kind: 'shards',
      percent: 94,
      done: 723,
      total: 769,
    });
    expect(parseMilestone('Loading fastsafetensors checkpoint shards:  20% Completed | 1/5 [00:00<00:02]')?.kind).toBe(
      'shards',
    );
    expect(parseMilestone('Loading weights took 3.04 seconds')?.kind).toBe('weights_end');
    // a host OOM kill printed on the bar's own line, as a shell shows it
    const killed = diagnoseText(
      [
        'Loading checkpoint shards:  75%|███████████ ...... 3/4 [00:08<00:02,  2.83s/it]Killed',
        '[26002.109061] Out of memory: Killed process 576419 (python) total-vm:78521468kB',
      ].join('\n'),
    ).classification;
    expect([killed.category, killed.phase]).toEqual(['other', 'weight_load']);
  });

  it("places a crash after vLLM's arguments, KV cache sizing and capture lines", () => {
    expect(phaseAfter("INFO 09-03 21:20:47 [cli_args.py:261] non-default args: {'model': 'x'}")).toBe('startup');
    expect(
      phaseAfter('INFO 12-20 20:25:46 distributed_gpu_executor.py:57] # GPU blocks: 3852, # CPU blocks: 4096'),
    ).toBe('kv_alloc');
    expect(
      phaseAfter('(EngineCore pid=1) INFO 08-19 14:58:40 [kv_cache_utils.py:849] GPU KV cache size: 922,496 tokens'),
    ).toBe('kv_alloc');
    expect(
      phaseAfter('INFO 12-20 20:25:49 model_runner.py:1413] Capturing cudagraphs for decoding. This may lead'),
    ).toBe('cuda_graph_capture');
    expect(phaseAfter('(EngineCore pid=1) INFO [gpu_model_runner.py:2721] Graph capturing for 304 input tokens')).toBe(
      'cuda_graph_capture',
    );
  });

  it('a weight-load bar before the failure places it in the weight load, whatever serving frames follow (rule 1 first)', () => {
    const log = [
      'Loading safetensors checkpoint shards: 100% Completed | 17/17 [00:23<00:00,  1.38s/it]',
      'Traceback (most recent call last):',
      '  File "/x/xinference/model/llm/transformers/utils.py", line 483, in batch_inference_one_step',
      'RuntimeError: boom',
    ].join('\n');
    expect(diagnoseText(log).classification.phase).toBe('weight_load');
  });

  it("SGLang's health check is a generation request: the server was serving", () => {
    const c = diagnoseText(
      "[2025-09-24 05:48:14] Health check failed. Server couldn't get a response from detokenizer for last 20 seconds.",
    ).classification;
    expect([c.category, c.phase]).toEqual(['watchdog_timeout', 'runtime']);
  });
});

describe('a 10 MB line', () => {
  it('with no newline neither hangs nor hides a crash printed before it', async () => {
    const { Readable } = await import('node:stream');
    const { diagnoseStream } = await import('../../src/logs/classify/index.ts');
    const head = Buffer.from('RuntimeError: CUDA error: an illegal memory access was encountered\n');
    const chunk = Buffer.alloc(1 << 20, 0x61);
    const chunks = [head, ...Array.from({ length: 10 }, () => chunk)];
    const d = await diagnoseStream(Readable.from(chunks));
    expect(d.classification.category).toBe('illegal_memory_access');
    expect(d.classification.evidence[0]?.line).toBe(1);
    expect(d.linesRead).toBe(2);
  });

  it('followed by a crash: the crash is still read, the long line cut, not kept whole', async () => {
    const { Readable } = await import('node:stream');
    const { diagnoseStream } = await import('../../src/logs/classify/index.ts');
    const long = Buffer.alloc(10 << 20, 0x62);
    const tail = Buffer.from('\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n');
    const d = await diagnoseStream(Readable.from([long.subarray(0, 5 << 20), long.subarray(5 << 20), tail]));
    expect(d.classification.category).toBe('cuda_oom');
    expect(d.classification.evidence[0]?.line).toBe(2);
  });
});
