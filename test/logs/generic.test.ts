// Readings that generalise beyond one message: a generic signature that wraps its cause, exception families by their
// documented messages and modules, frames in any quoting, the phase a frame's function names, and lines that start
// where a joined log lost its breaks.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseExceptionLine } from '../../src/logs/classify/exceptions.ts';
import { diagnoseStream, diagnoseText } from '../../src/logs/classify/index.ts';
import { displayText, lineShape, withoutRequestText } from '../../src/logs/classify/lineinfo.ts';
import { splitJoined } from '../../src/logs/classify/normalise.ts';

const classOf = (lines: string[]) => diagnoseText(`${lines.join('\n')}\n`).classification;

describe('a generic signature yields to the cause it wraps (wraps: in the catalog)', () => {
  it("a backend check named after SGLang's 'Capture cuda graph failed:' is a backend assertion, placed in capture", () => {
    const line =
      "Exception: Capture cuda graph failed: Error in function 'MergeStates' at /x/flashinfer/attention/cascade.cuh:697: Unsupported head_dim: 106";
    const c = classOf([
      line,
      'Possible solutions:',
      '1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)',
    ]);
    expect([c.category, c.phase]).toEqual(['backend_assertion', 'cuda_graph_capture']);
    expect(c.evidence[0]?.text).toBe(line);
    // SGLang's own hints after the cause name no cause, even on the same line
    expect(classOf([`${line} Possible solutions: 1. set --mem-fraction-static to a smaller value`]).category).toBe(
      'backend_assertion',
    );
  });

  it('a cause that names nothing more specific keeps the capture class', () => {
    expect(classOf(['Exception: Capture cuda graph failed: something odd happened']).category).toBe(
      'cuda_graph_capture_failed',
    );
  });

  it('a cause only a signature names (a C++ assertion at its source line) wins as the overlaps rank it', () => {
    const head = [
      '[2025-11-05 12:00:00] Capture cuda graph begin. This can take up to several minutes.',
      'Traceback (most recent call last):',
      '  File "/x/sglang/srt/model_executor/cuda_graph_runner.py", line 300, in __init__',
      '    raise Exception(',
    ];
    const line =
      'Exception: Capture cuda graph failed: Assertion failed: tile_m <= 128 (/src/flashinfer/csrc/x.cuh:77)';
    const c = classOf([...head, line, 'Possible solutions:', '1. set --mem-fraction-static to a smaller value']);
    expect([c.category, c.phase, c.evidence[0]?.text]).toEqual(['backend_assertion', 'cuda_graph_capture', line]);
  });

  it('when nothing follows the wrapper, the exception printed just before it is the root', () => {
    const cause = 'RuntimeError: Runtime check failed at .../kvcache.cuh:196: CUDA error: invalid resource handle';
    const c = classOf([cause, 'Exception: Capture cuda graph failed']);
    expect(c.category).toBe('cuda_graph_capture_failed');
    expect(c.evidence[0]?.text).toBe(cause);
  });
});

describe('a signature that says only how the process ended (generic: in the catalog)', () => {
  it('yields the root to the failure record printed just before it', () => {
    const rec =
      ':0:rocdevice.cpp            :3586: 1183357978 us:  Callback: Queue 0x7f35e8100000 aborting with error : HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. code: 0x1016';
    const c = classOf([rec, 'Fatal Python error: Aborted']);
    expect([c.category, c.evidence[0]?.text]).toEqual(['other', rec]);
    expect(classOf(['Fatal Python error: Aborted']).evidence[0]?.text).toBe('Fatal Python error: Aborted');
  });

  it('a warning before it yields no root (Python warnings format): the death or the crash line stays the root', () => {
    const warn = '/x/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: libc10_cuda.so';
    const start = '[2025-11-05 12:00:00] Init torch distributed begin.';
    const sigquit = '[2025-11-05 12:00:01] Received sigquit from a child process. It usually means the child failed.';
    expect(classOf([start, warn, sigquit, 'Killed']).evidence[0]?.text).toBe(sigquit);
    // nor does a library's error logged while it was loaded, before its program set logging up (absl's format then)
    const absl =
      'E0000 00:00:1733486123.456789  123 cuda_fft.cc:477] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered';
    expect(classOf([start, absl, sigquit, 'Killed']).evidence[0]?.text).toBe(sigquit);
    expect(classOf([start, warn, 'Fatal Python error: Segmentation fault']).evidence[0]?.text).toBe(
      'Fatal Python error: Segmentation fault',
    );
  });

  it("the shell's report of a killed process is one; a program's sentence that starts with the word is not", () => {
    const start = '[2025-11-05 12:00:00] Load weight begin. avail mem=78.00 GB';
    expect(classOf([start, 'Killed']).category).toBe('other');
    expect(
      classOf([start, 'bash: line 1: 1234 Killed                  python3 -m sglang.launch_server']).category,
    ).toBe('other');
    // A clean shutdown's count of what it ended, as a wrapper around SGLang's process-tree kill logs it (no
    // timestamp: the line starts with the word), names no crash.
    const ready = '[2025-11-05 12:00:09] The server is fired up and ready to roll!';
    expect(classOf([ready, 'Killed 3 child processes']).category).toBe('none');
  });

  it('after the server logged a stop signal, its kill and the records of its peers going are that stop, not a crash', () => {
    const ready = '[2025-11-05 12:00:09] The server is fired up and ready to roll!';
    const sigterm =
      '[2025-11-05 12:05:00] SIGTERM received. signum=None frame=None. Draining requests and shutting down...';
    const gloo =
      '[E1105 12:05:01.123456 123 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with Connection reset by peer';
    const d = diagnoseText([ready, sigterm, gloo, 'Killed', ''].join('\n'), { exit: { code: 137, signal: null } });
    expect(d.classification.category).toBe('none');
    expect(d.stopped?.text).toBe(sigterm);
    expect(d.reason).toMatch(/^a stop signal reached the server \(line 2\)/);
    // The same lines before the signal: the record and the kill are a crash.
    expect(classOf([ready, gloo, 'Killed']).category).toBe('nccl_error');
    // A crash before the signal stays the crash.
    const oom = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.';
    expect(classOf([ready, oom, sigterm, 'Killed']).category).toBe('cuda_oom');
    // A child's failure reported after it, or an abort while it drained, is still a crash.
    const sigquit = '[2025-11-05 12:05:02] Received sigquit from a child process. It usually means the child failed.';
    expect(classOf([ready, sigterm, sigquit, 'Killed']).category).toBe('other');
    const aborted = diagnoseText([ready, sigterm, ''].join('\n'), { exit: { code: 134, signal: null } });
    expect(aborted.classification.category).toBe('other');
    expect(
      diagnoseText([ready, sigterm, ''].join('\n'), { exit: { code: null, signal: 'SIGKILL' } }).stopped,
    ).toBeDefined();
    // A run started after the stop (a service log with restarts) is read as its own: its failure is a crash.
    const start = '[2025-11-05 12:06:00] Load weight begin. avail mem=78.00 GB';
    expect(classOf([ready, sigterm, 'Killed', start, gloo, 'Killed']).category).toBe('nccl_error');
  });

  it('a KeyboardInterrupt (SIGINT, a Ctrl-C) is a stop signal: its tracebacks, and what is chained to them, name no crash', () => {
    const ready = '[2025-11-05 12:00:09] The server is fired up and ready to roll!';
    const interrupt = [
      'Traceback (most recent call last):',
      '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 2300, in run_scheduler_process',
      '    scheduler.event_loop_overlap()',
      '  File "/usr/lib/python3.12/threading.py", line 355, in wait',
      '    waiter.acquire()',
      'KeyboardInterrupt',
    ];
    const chained = [
      '',
      'During handling of the above exception, another exception occurred:',
      '',
      'Traceback (most recent call last):',
      '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 2310, in run_scheduler_process',
      '    scheduler.event_loop_overlap()',
      'RuntimeError: Event loop is closed',
    ];
    const d = diagnoseText([ready, ...interrupt, ...chained, ''].join('\n'), { exit: { code: 130, signal: null } });
    expect(d.classification.category).toBe('none');
    expect(d.stopped?.text).toBe('KeyboardInterrupt');
    // every rank's, and a bare `KeyboardInterrupt` line
    expect(classOf([ready, ...interrupt, ...interrupt.map((l) => `[rank1]: ${l}`)]).category).toBe('none');
    expect(classOf([ready, 'KeyboardInterrupt', 'Killed']).category).toBe('none');
    // The same chained failure without the interrupt is a crash; a crash before the interrupt stays the crash.
    expect(classOf([ready, ...chained.slice(3)]).category).toBe('other');
    const oom = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.';
    expect(classOf([ready, oom, ...interrupt]).category).toBe('cuda_oom');
    // An interrupt is not a signal the server was killed by: a segfault after it is still a crash.
    expect(
      diagnoseText([ready, ...interrupt, ''].join('\n'), { exit: { code: 139, signal: null } }).classification.category,
    ).toBe('other');
  });

  it('a cause logged at warning level that the server then went past (ready, a batch) names no crash', () => {
    const start = '[2025-11-05 12:00:00] Load weight begin. avail mem=78.00 GB';
    const ready = '[2025-11-05 12:00:09] The server is fired up and ready to roll!';
    // c10d's TCPStore warns for each address it cannot bind and goes on with the next (torch/csrc/distributed/c10d/
    // socket.cpp: C10D_WARNING per address, C10D_ERROR and a DistNetworkError only when none is left)
    const warned =
      '[W1105 12:00:01.123456 socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).';
    expect(classOf([start, warned, ready]).category).toBe('none');
    expect(classOf([start, warned, 'Prefill batch. #new-seq: 1, #new-token: 4, #cached-token: 0']).category).toBe(
      'none',
    );
    // with nothing after it the warning is the only cause there is; logged as an error it stays a crash
    expect(classOf([start, warned]).category).toBe('port_in_use');
    expect(classOf([start, warned.replace('[W1105', '[E1105'), ready]).category).toBe('port_in_use');
    // once one of its lines is logged as an error, the server getting ready does not take it back
    expect(classOf([start, warned, warned.replace('[W1105', '[E1105'), ready]).category).toBe('port_in_use');
  });

  it('reads any CapWords class where a traceback ends as its exception, so the import family decides by type', () => {
    const frames = [
      'Traceback (most recent call last):',
      '  File "/usr/local/bin/sglang", line 5, in <module>',
      '    from pkg_resources import load_entry_point',
    ];
    const missing =
      "pkg_resources.DistributionNotFound: The 'triton' distribution was not found and is required by the application";
    const c = classOf([...frames, missing]);
    expect(c.category).toBe('import_error');
    expect(c.evidence[0]?.text).toBe(missing);
    expect(
      classOf([...frames, 'importlib.metadata.PackageNotFoundError: No package metadata was found for vllm']).category,
    ).toBe('import_error');
    // outside a traceback's end a CapWords word is no exception: a bare line of text stays text
    expect(classOf(['DistributionNotFound: not a traceback']).category).toBe('none');
    // a name with no message and no module path is a word, not a class (`Killed`, `Done`)
    expect(parseExceptionLine('BrokenProcessPool: x')).toBeNull();
  });

  it("the import family's other messages: a circular import, a Windows DLL; a missing torch.ops operator is not one", () => {
    for (const line of [
      "AttributeError: partially initialized module 'torch' has no attribute 'cuda' (most likely due to a circular import)",
      'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\env\\torch\\lib\\c10.dll" or one of its dependencies.',
    ])
      expect(classOf([line]).category, line).toBe('import_error');
    // the README's import family names no missing operator: the extension loaded, an op it lacks is `other`
    expect(classOf(["AttributeError: '_OpNamespace' '_C' object has no attribute 'gelu_quick'"]).category).toBe(
      'other',
    );
    // host memory while a DLL loads is no missing library
    expect(
      classOf([
        'OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "C:\\env\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.',
      ]).category,
    ).not.toBe('import_error');
    // an attribute missing from an ordinary object is no import error
    expect(classOf(["AttributeError: 'NoneType' object has no attribute 'shape'"]).category).toBe('other');
  });

  it("vLLM's engine configuration checks refuse a setting: a backend assertion by the frames that raised it", () => {
    const tb = (file: string, func: string, exc: string) => [
      'Traceback (most recent call last):',
      `  File "/usr/local/lib/python3.12/dist-packages/vllm/${file}", line 500, in ${func}`,
      '    raise ValueError(',
      exc,
    ];
    const q =
      'ValueError: Quantization method specified in the model config (fp8) does not match the quantization method specified in the `quantization` argument (awq).';
    expect(classOf(tb('config.py', '_verify_quantization', q)).category).toBe('backend_assertion');
    expect(classOf(tb('config/model.py', '_verify_quantization', q)).category).toBe('backend_assertion');
    const sel = 'ValueError: Invalid attention backend for cuda with use_v1: True use_mla: False';
    expect(classOf(tb('attention/selector.py', 'get_attn_backend_cls', sel)).category).toBe('backend_assertion');
    // the environment failing a probe there is no setting refused
    expect(classOf(tb('config.py', '__init__', 'RuntimeError: Failed to infer device type')).category).toBe('other');
  });

  it("vLLM V1's bound on a worker RPC for a model step is the engine giving up on that step", () => {
    expect(classOf(['TimeoutError: RPC call to execute_model timed out.']).category).toBe('watchdog_timeout');
    // another RPC (a set-up call) timing out names no hung step
    expect(classOf(['TimeoutError: RPC call to load_model timed out.']).category).toBe('other');
  });

  it('a warning-level cause waits for the end: survivable while starting, past once ready by any ready line', async () => {
    const start = '[2025-11-05 12:00:00] Load weight begin. avail mem=78.00 GB';
    const warned =
      '[W1105 12:00:01.123456 socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).';
    // while starting it is no crash yet (an early alert waits for the exit, which decides)
    const d = diagnoseText([start, warned, ''].join('\n'));
    expect(d.classification.category).toBe('port_in_use');
    expect(d.survivable).toBe(true);
    expect(
      diagnoseText([start, warned, ''].join('\n'), { exit: { code: 1, signal: null } }).survivable,
    ).toBeUndefined();
    // a warning with the process dying after it (an abort, a segfault) is that death's cause, told when read
    const ready = '[2026-12-01 10:00:46] The server is fired up and ready to roll!';
    const cudaWarn =
      '[W CUDAGuardImpl.h:115] Warning: CUDA warning: an illegal memory access was encountered (function destroyEvent)';
    const aborted = diagnoseText([ready, cudaWarn, 'Aborted (core dumped)', ''].join('\n'));
    expect(aborted.classification.category).toBe('illegal_memory_access');
    expect(aborted.survivable).toBeUndefined();
    // an error record that quotes NCCL's INFO level is no NCCL INFO line (NCCL's own start with host:pid:tid [dev])
    const quoted = diagnoseText(
      `${ready}\n[2026-12-01 10:01:05 TP0] ERROR: NCCL INFO said: Connection closed by remote peer 10.0.0.2 (NCCL error: remote process exited)\n`,
    );
    expect(quoted.classification.category).toBe('nccl_error');
    expect(quoted.survivable).toBeUndefined();
    // vLLM's ready line is uvicorn's
    const vllm = [
      warned,
      'INFO 11-05 12:00:05 [core.py:100] init engine (profile, create kv cache, warmup model) took 30.00 seconds',
      'INFO:     Application startup complete.',
      'INFO:     127.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 200 OK',
    ];
    expect(classOf(vllm).category).toBe('none');
    // the file scan, which skips lines, agrees when the batch line is not the last frequent line it skipped
    const filler = Array.from({ length: 40 }, (_, i) => `[2025-11-05 12:00:02] tokenizer idle ${i}`);
    const lines = [
      start,
      warned,
      ...filler,
      '[2025-11-05 12:00:10] Decode batch. #running-req: 1, #token: 100, token usage: 0.00, gen throughput (token/s): 50.00, #queue-req: 0',
      '[2025-11-05 12:00:10] INFO:     127.0.0.1:5000 - "POST /generate HTTP/1.1" 200 OK',
    ];
    const whole = classOf(lines).category;
    const scanned = (await diagnoseStream(Readable.from([Buffer.from(`${lines.join('\n')}\n`)]))).classification
      .category;
    expect([whole, scanned]).toEqual(['none', 'none']);
  });

  it('an error line before a Ctrl-C is no crash: the interrupt is the server carrying on to its stop', () => {
    const lines = [
      'INFO:     Application startup complete.',
      'ERROR 11-05 12:00:10 [prometheus.py:12] Failed to push metrics to the gateway: connection refused',
      'KeyboardInterrupt',
    ];
    const d = diagnoseText(`${lines.join('\n')}\n`, { exit: { code: 130, signal: null } });
    expect(d.classification.category).toBe('none');
    expect(d.stopped?.text).toBe('KeyboardInterrupt');
  });

  it("a worker that SIGTERM or SIGINT ended with its server, a warning's indented detail, a sentence ending in Killed: no crash", () => {
    const served = [
      'INFO:     Application startup complete.',
      'INFO:     127.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 200 OK',
      '^CINFO:     Shutting down',
      'INFO:     Application shutdown complete.',
    ];
    const died = (code: number) =>
      `ERROR 12-01 10:05:00 multiproc_worker_utils.py:116] Worker VllmWorkerProcess pid 320 died, exit code: ${code}`;
    expect(classOf([...served, died(-15)]).category).toBe('none');
    expect(classOf([...served, died(-2)]).category).toBe('none');
    expect(classOf([...served, died(-9)]).category).toBe('other');
    const start = '[2026-12-01 10:00:05] Load weight begin. avail mem=78.00 GB';
    const warning =
      '[2026-12-01 10:00:41 TP0] WARNING utils.py:12: Optional kernel package could not be loaded, using the triton kernels. Details:';
    const detail = '    ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory';
    expect(classOf([start, warning, detail, '[2026-12-01 10:00:42] Capture cuda graph begin.']).category).toBe('none');
    // the same indented line under an error record, or alone, is an exception a paste indented
    expect(classOf([start, warning.replace('WARNING', 'ERROR'), detail]).category).toBe('import_error');
    const ready = '[2026-12-01 10:00:46] The server is fired up and ready to roll!';
    const sentence =
      '[2026-12-01 10:00:50] INFO: launcher: previous instance of the benchmark client (pid 4411) was already Killed';
    expect(
      classOf([ready, sentence, '[2026-12-01 10:01:00] Prefill batch. #new-seq: 1, #new-token: 20']).category,
    ).toBe('none');
  });

  it("a launcher's line naming the signal is no generic ending: it stays the root", () => {
    const line = 'mpirun noticed that process rank 6 with PID 0 on node x exited on signal 9 (Killed).';
    expect(
      classOf(['a non-zero exit code. Per user-direction, the job has been aborted.', line]).evidence[0]?.text,
    ).toBe(line);
  });

  it("a wait that timed out is a failure record, named by the module it names (c10d's socket)", () => {
    const line =
      '[E1226 15:44:09.437224181 socket.cpp:1011] [c10d] The client socket has timed out after 600000ms while trying to connect to (node-05, 8000).';
    expect(classOf(['frame #57: _start + 0x21 (0x6297b1 in sglang::scheduler)', '', line]).category).toBe('nccl_error');
  });
});

describe('exception families by their documented messages and modules', () => {
  it("FlashInfer's C++ error is the RuntimeError its bindings raise", () => {
    expect(parseExceptionLine("Error in function 'f' at /x/a.cuh:12: Unsupported head_dim: 106")).toEqual({
      type: 'RuntimeError',
      short: 'RuntimeError',
      message: 'Unsupported head_dim: 106',
    });
  });

  it('a refusal worded as a backend that does not support, or a backend or method it does not know', () => {
    for (const line of [
      'ValueError: Unrecognized FP8 backend: cutlass2',
      'NotImplementedError: FlashInfer backend does not support sliding window attention with page size > 1.',
      'ValueError: Invalid attention backend for cuda with use_v1: True use_mla: True',
      'ValueError: unknown kv cache dtype: fp4',
    ]) {
      expect(classOf([line]).category, line).toBe('backend_assertion');
    }
    // a device that does not support a dtype is the GPU's generation, not a setting (PyTorch's autocast check)
    expect(
      classOf(['RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.'])
        .category,
    ).toBe('unsupported_arch');
    // the words alone, in no exception a check raises, are no refusal
    expect(
      classOf(['INFO 12-01 10:00:00 [cuda.py:200] This GPU does not support FP8 marlin; using fallback']).category,
    ).toBe('none');
  });

  it("PyTorch's shape errors are wrong shapes computed, not a setting refused", () => {
    const tb = (exc: string) => [
      'Traceback (most recent call last):',
      '  File "/x/sglang/srt/layers/moe/fused_moe.py", line 10, in forward',
      '    x = torch.cat([a, b], dim=1)',
      exc,
    ];
    expect(
      classOf(
        tb(
          'RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 6 but got size 8 for tensor number 1 in the list.',
        ),
      ).category,
    ).toBe('other');
    expect(classOf(tb('ValueError: tp_size must be divisible by the number of heads (expected 8)')).category).toBe(
      'backend_assertion',
    );
  });

  it("PyTorch's dispatcher with no kernel for the backend is an unsupported device", () => {
    expect(
      classOf([
        "NotImplementedError: Could not run '_C::onednn_mm' with arguments from the 'CPU' backend. This could be because the operator doesn't exist for this backend",
      ]).category,
    ).toBe('unsupported_arch');
  });

  it("an attention backend is known by its module's name when the path was shortened", () => {
    expect(
      classOf([
        'File ".../flashattention_backend.py", line 832, in forward_extend',
        '    assert not get_global_server_args().disable_chunked_prefix_cache',
        'AssertionError',
      ]).category,
    ).toBe('backend_assertion');
    // a grammar backend is no attention backend
    expect(
      classOf([
        'File "/x/sglang/srt/constrained/xgrammar_backend.py", line 90, in dispatch_json',
        '    raise RuntimeError("bad schema")',
        'RuntimeError: bad schema',
      ]).category,
    ).toBe('other');
  });

  it("torch elastic's failed child: its record and its report's signal line", () => {
    const rec =
      'ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 31631) of binary: /usr/bin/python3';
    expect(classOf([rec]).evidence[0]?.text).toBe(rec);
    const c = classOf([
      'torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ',
      '============================================================',
      'Root Cause (first observed failure):',
      '[0]:',
      '  exitcode  : -9 (pid: 14750)',
      '  traceback : Signal 9 (SIGKILL) received by PID 14750',
    ]);
    expect([c.category, c.evidence[0]?.text]).toEqual([
      'other',
      '  traceback : Signal 9 (SIGKILL) received by PID 14750',
    ]);
  });
});

describe('frames in any quoting, and the phase their functions name', () => {
  it('a frame with backslash-escaped quotes (a traceback logged inside a quoted string) is a frame', () => {
    expect(lineShape('   File \\"/x/triton_decoder.py\\", line 136, in _exec_triton_request_single')).toEqual({
      kind: 'frame',
      file: '/x/triton_decoder.py',
      func: '_exec_triton_request_single',
      python: true,
    });
    // a Windows path's backslashes are still a plain frame's
    expect(lineShape('  File "C:\\x\\vllm\\a.py", line 3, in f')).toMatchObject({
      kind: 'frame',
      file: 'C:\\x\\vllm\\a.py',
    });
  });

  it('a frame whose line and function the copier cut to `...` still names the file the exception was raised in', () => {
    expect(lineShape('  File ".../aiter/ops/flydsl/moe_kernels.py", ...')).toEqual({
      kind: 'frame',
      file: '.../aiter/ops/flydsl/moe_kernels.py',
      func: '',
      python: true,
    });
    const log = [
      '[2026-04-16 23:48:59 TP1] Scheduler hit an exception: Traceback (most recent call last):',
      '  File ".../sglang/srt/layers/moe/fused_moe.py", ...',
      '    raise ValueError(f"bad tile: {name}")',
      'ValueError: bad tile: t16x128',
    ];
    const d = diagnoseText(`${log.join('\n')}\n`);
    expect(d.classification.category).toBe('backend_assertion');
    expect(d.reason).toContain('ValueError raised in fused_moe.py,');
    // the same traceback with its frame's file unknown reads as a plain ValueError
    expect(classOf([log[0] as string, '  ...', log[2] as string, log[3] as string]).category).toBe('other');
  });

  it("a loader's list of the places it tried is part of its failure, a fallback among them no fallback it went on with", () => {
    const log = [
      '[sgl_kernel] CRITICAL: Could not load any common_ops library!',
      '',
      'Attempted locations:',
      '1. Architecture-specific pattern: /x/sgl_kernel/sm90/common_ops.* - found files: []',
      '2. Fallback pattern: /x/sgl_kernel/common_ops.* - found files: []',
    ];
    expect(classOf(log)).toMatchObject({ category: 'import_error', phase: 'startup' });
    // a record that says it fell back is still one the program went on from
    expect(classOf([log[0] as string, 'Falling back to the Python implementation of common_ops.']).category).toBe(
      'none',
    );
  });

  it("replaying a captured graph is no capture, though PyTorch's capture API file runs it", () => {
    const frames = (func: string) => [
      'Traceback (most recent call last):',
      `  File "/x/torch/cuda/graphs.py", line 117, in ${func}`,
      '    super().replay()',
      'torch.AcceleratorError: CUDA error: an illegal instruction was encountered',
    ];
    expect(classOf(frames('replay')).phase).toBe('unknown');
    expect(classOf(frames('capture_begin')).phase).toBe('cuda_graph_capture');
  });
});

describe('init steps by their documented roles, and more wordings of a cause', () => {
  const tb = (file: string, func: string, exc: string) => [
    'Traceback (most recent call last):',
    `  File "${file}", line 10, in ${func}`,
    '    x = f()',
    exc,
  ];

  it('loading the tokenizer is the model load', () => {
    expect(
      classOf(
        tb(
          '/x/vllm/transformers_utils/tokenizer.py',
          'get_cached_tokenizer',
          "AttributeError: 'Qwen2Tokenizer' has no attribute 'x'",
        ),
      ).phase,
    ).toBe('weight_load');
  });

  it("PyTorch's rendezvous and argument parsing are start-up", () => {
    expect(
      classOf(
        tb(
          '/x/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py',
          '_create_tcp_store',
          'torch.distributed.DistNetworkError: timed out',
        ),
      ).phase,
    ).toBe('startup');
    expect(
      classOf(tb('/x/transformers/hf_argparser.py', 'parse_args_into_dataclasses', 'ValueError: no zero_optimization'))
        .phase,
    ).toBe('startup');
  });

  it("PyTorch's caching allocator's 'allocation failed with OOM' is an OOM; the host's OOM killer named in a hint is not", () => {
    expect(
      classOf([
        '[rank0]:[W830 12:05:56.43 CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 0 while trying to allocate 272629760 bytes',
      ]).category,
    ).toBe('cuda_oom');
    expect(
      classOf([
        'RuntimeError: Rank 0 scheduler died during initialization (exit code: 255). If exit code is -9 (SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.',
      ]).category,
    ).not.toBe('cuda_oom');
  });

  it("a launcher's report that a process died is the root over a frame of a traceback cut before its exception", () => {
    const c = classOf([
      '[12-16 14:27:08] Rank 0 scheduler is dead. Please check if there are relevant logs.',
      'Traceback (most recent call last):',
      '  File "/x/sglang/cli/main.py", line 26, in main',
      '    args.func(args, extra_argv)',
    ]);
    expect(c.evidence[0]?.line).toBe(1);
  });
});

describe('where a joined log lost its line breaks', () => {
  it("TensorRT-LLM's and TurboMind's logger tags start a line, except as the cause a message quotes", () => {
    expect(splitJoined('[TensorRT-LLM][WARNING] a is not specified [TensorRT-LLM][INFO] MPI size: 1, rank: 0')).toEqual(
      ['[TensorRT-LLM][WARNING] a is not specified', '[TensorRT-LLM][INFO] MPI size: 1, rank: 0'],
    );
    expect(
      splitJoined('engine_cfg: TurbomindEngineConfig(tp=1) [TM][ERROR] CUDA runtime error: out of memory'),
    ).toEqual(['engine_cfg: TurbomindEngineConfig(tp=1)', '[TM][ERROR] CUDA runtime error: out of memory']);
    expect(
      splitJoined(
        '[TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: [TensorRT-LLM][ERROR] Assertion failed: x',
      ),
    ).toBeNull();
  });

  it("multiprocessing's 'Process Name-N:' header, Ray's exception with its cause, a bare exception at the end", () => {
    expect(
      splitJoined(
        'RuntimeError: Failed to infer device type Process SpawnProcess-1: Traceback (most recent call last):',
      ),
    ).toEqual([
      'RuntimeError: Failed to infer device type',
      'Process SpawnProcess-1: Traceback (most recent call last):',
    ]);
    expect(
      splitJoined(
        '    raise value.as_instanceof_cause() ray.exceptions.RayTaskError(TimeoutError): ray::Rollout.generate()',
      ),
    ).toEqual([
      '    raise value.as_instanceof_cause()',
      'ray.exceptions.RayTaskError(TimeoutError): ray::Rollout.generate()',
    ]);
    expect(splitJoined('File ".../a_backend.py", line 8, in f     assert not x AssertionError')).toEqual([
      '  File ".../a_backend.py", line 8, in f',
      '    assert not x',
      'AssertionError',
    ]);
  });

  it('an exception a message quotes is no line of its own, and a warning that quotes one is no crash', () => {
    const warning =
      'WARNING 12-01 10:00:01 [utils.py:2500] Found ulimit of 1024 and failed to automatically increase with error ' +
      'current limit exceeds maximum limit. This can cause fd limit errors like `OSError: [Errno 24] Too many open ' +
      'files`. Consider increasing with ulimit -n';
    expect(splitJoined(warning)).toBeNull();
    const started = [
      warning,
      'INFO 12-01 10:00:30 [api_server.py:1800] Starting vLLM API server 0 on http://0.0.0.0:8000',
      'INFO:     Application startup complete.',
    ];
    expect(classOf(started).category).toBe('none');
    // a quote that opens a value is the line's own start: Docker's json-file log, one record per line
    const docker = (log: string) => JSON.stringify({ log: `${log}\n`, stream: 'stderr', time: '2025-01-01T00:00:00Z' });
    expect(
      classOf([
        docker('Traceback (most recent call last):'),
        docker(
          '  File "/usr/lib/python3.12/site-packages/vllm/engine/arg_utils.py", line 1200, in create_engine_config',
        ),
        docker('    raise ValueError(msg)'),
        docker('ValueError: Total number of attention heads (40) must be divisible by tensor parallel size (3).'),
      ]).category,
    ).toBe('backend_assertion');
    // unquoted, the same name after a sentence does start a line a paste joined
    expect(splitJoined('Consider increasing with ulimit -n OSError: [Errno 24] Too many open files')).toEqual([
      'Consider increasing with ulimit -n',
      'OSError: [Errno 24] Too many open files',
    ]);
  });
});

describe('review of the n- round reader', () => {
  it("a warning that quotes an exception as a value is one line, at the warning's level", () => {
    const ready = '[2025-03-01 10:00:40] The server is fired up and ready to roll!';
    const warn =
      "[2025-03-01 10:01:00 TP0] WARNING: Custom allreduce probe failed, falling back to NCCL: error='RuntimeError: " +
      "CUDA error: out of memory'";
    const decode =
      '[2025-03-01 10:01:01 TP0] Decode batch. #running-req: 1, #token: 140, token usage: 0.00, gen throughput (token/s): 80.00, #queue-req: 0';
    expect(splitJoined(warn)).toBeNull();
    expect(classOf([ready, warn, decode]).category).toBe('none');
  });

  it("vLLM's stats line after a worker's traceback does not excuse it (its timer still counts that interval)", () => {
    const w = (t: string) => `(VllmWorker rank=1 pid=2101) ERROR 06-10 10:00:11 [multiproc_executor.py:527] ${t}`;
    const exc = 'IndexError: index 32768 is out of bounds for dimension 0 with size 32768';
    const d = classOf([
      'INFO:     Application startup complete.',
      w('WorkerProc hit an exception.'),
      w('Traceback (most recent call last):'),
      w('  File "/x/vllm/v1/worker/gpu_model_runner.py", line 1200, in execute_model'),
      w('    logits = self.model.compute_logits(hidden_states[logits_indices])'),
      w(exc),
      'INFO 06-10 10:00:15 [loggers.py:116] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 61.4 tokens/s, Running: 8 reqs',
    ]);
    expect(d.category).toBe('other');
    expect(d.evidence[0]?.text).toContain(exc);
  });
});

describe("a Go logger's level key (Ollama's log/slog records)", () => {
  it('a WARN record with an error= value is a notice; an ERROR one states the failure', () => {
    const warn =
      'time=2025-01-01T10:00:01.000Z level=WARN source=amd_linux.go:61 msg="ollama recommends running the ' +
      'https://www.amd.com/en/support/linux-drivers" error="amdgpu version file missing: /sys/module/amdgpu/version ' +
      'stat /sys/module/amdgpu/version: no such file or directory"';
    const started =
      'time=2025-01-01T10:00:05.000Z level=INFO source=server.go:626 msg="llama runner started in 3.90 seconds"';
    expect(classOf([warn, started]).category).toBe('none');
    expect(
      classOf(['time="2025-01-01T10:00:01Z" level=warning msg="retrying" error="connection refused"', started])
        .category,
    ).toBe('none');
    const failed =
      'time=2025-01-01T10:00:05.000Z level=ERROR source=sched.go:400 msg="error loading llama server" ' +
      'error="llama runner process has terminated: cudaMalloc failed: out of memory"';
    expect(classOf([failed]).category).toBe('cuda_oom');
  });
});

describe("a logged request's text is a user's, not the server's", () => {
  const started = [
    'INFO 12-01 10:00:30 [api_server.py:1800] Starting vLLM API server 0 on http://0.0.0.0:8000',
    'INFO:     Application startup complete.',
  ];
  it("vLLM's request log: a prompt that quotes an error, in either quote style, is no crash; the fields after it are read", () => {
    const single =
      "INFO 12-01 10:01:00 [logger.py:43] Received request chatcmpl-1: prompt: '<|im_start|>user\\nWhat does " +
      "RuntimeError: CUDA error: an illegal memory access was encountered mean?<|im_end|>\\n', params: " +
      'SamplingParams(n=1, temperature=0.7), prompt_token_ids: None, lora_request: None.';
    const double =
      'INFO 12-01 10:01:00 [logger.py:43] Received request cmpl-2-0: prompt: "Why can\'t torch.OutOfMemoryError: ' +
      'CUDA out of memory. Tried to allocate 2.00 GiB be avoided?", params: SamplingParams(n=1)';
    const answer =
      "INFO 12-01 10:01:02 [logger.py:60] Generated response chatcmpl-1: output: 'It means Traceback (most recent " +
      "call last): ... torch.OutOfMemoryError: CUDA out of memory', output_token_ids: None, finish_reason: stop";
    for (const line of [single, double, answer]) expect(classOf([...started, line]).category).toBe('none');
    expect(withoutRequestText(single)).toBe(
      'INFO 12-01 10:01:00 [logger.py:43] Received request chatcmpl-1: prompt: , params: SamplingParams(n=1, ' +
        'temperature=0.7), prompt_token_ids: None, lora_request: None.',
    );
  });

  it("SGLang's --log-requests lines, and a line that only names a request, read as they are", () => {
    const receive =
      "[2025-03-01 10:01:00] Receive: obj=GenerateReqInput(text='Explain: torch.OutOfMemoryError: CUDA out of " +
      "memory. Tried to allocate 2.00 GiB', sampling_params={'max_new_tokens': 128})";
    expect(withoutRequestText(receive)).toBe('[2025-03-01 10:01:00] Receive: obj=');
    expect(classOf(['[2025-03-01 10:00:40] The server is fired up and ready to roll!', receive]).category).toBe('none');
    // a paste that lost its line breaks: the repr ends where its brackets close, the lines after it are read
    const joined = [
      '[2025-03-01 10:00:40] The server is fired up and ready to roll!',
      "[2025-03-01 10:01:00] Receive: obj=GenerateReqInput(text='hi (x', sampling_params={'max_new_tokens': 8}), " +
        "out={'text': 'CUDA out of memory'}",
      '[2025-03-01 10:01:01 TP0] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2500, in run_scheduler_process',
      '    scheduler.event_loop_overlap()',
      'RuntimeError: CUDA error: an illegal memory access was encountered',
    ].join(' ');
    expect(classOf([joined]).category).toBe('illegal_memory_access');
    const failed = 'ERROR 12-01 10:01:00 [core.py:700] Request chatcmpl-1 failed: CUDA error: out of memory';
    expect(withoutRequestText(failed)).toBe(failed);
  });
});

describe('one reading whatever is in front of a line or between lines', () => {
  it('a glog record prefix is taken off with or without a rank label in front', () => {
    const line = '[E1226 15:44:09.437224181 socket.cpp:1011] [c10d] The client socket has timed out';
    expect(displayText(line)).toBe(displayText(`[default0]:${line}`));
  });

  it('a frame split from a joined line keeps its rank label in front of its indentation', () => {
    expect(
      splitJoined(
        '[rank0]:   File "/x/vllm/distributed/device_communicators/pynccl_wrapper.py", line 256, in NCCL_CHECK [rank0]:     raise RuntimeError(f"NCCL error: {error_str}") [rank0]: RuntimeError: NCCL error: unhandled system error',
      )?.every((p) => p.startsWith('[rank0]:')),
    ).toBe(true);
  });

  it('a record whose line a paste indented is read outside a traceback', () => {
    expect(
      classOf(['', ' [E1226 15:44:09.43 socket.cpp:1011] [c10d] The client socket has timed out after 600000ms'])
        .category,
    ).toBe('nccl_error');
  });

  it("another rank's record between a frame that lost its indentation and its source line leaves it the source", () => {
    const c = classOf([
      'File "/x/vllm/entrypoints/llm.py", line 495, in collective_rpc',
      '[2025-11-05 12:19:32 TP6] Cache flushed successfully!',
      'executor = self.llm_engine.model_executor',
      "AttributeError: 'LLMEngine' object has no attribute 'model_executor'",
    ]);
    expect(c.evidence[0]?.text).toBe("AttributeError: 'LLMEngine' object has no attribute 'model_executor'");
  });
});

describe('a signature never reads a wrapper’s characters', () => {
  it("argparse's error with its program's name cut off reads the same under any wrapper", () => {
    const line = 'error: unrecognized arguments: --served-model-name x';
    for (const w of ['', 'Dec 01 12:00:00 gpu-box python3[1234]: ', 'sglang-1  | ', '(EngineCore pid=1) ']) {
      expect(classOf([`${w}${line}`]).category, w).toBe('backend_assertion');
    }
  });
});

describe('the s- round’s dev half: general wordings', () => {
  it("a kernel launcher's shared-memory check, cuda-gdb's fault names, a group used before it was set up", () => {
    expect(
      classOf([
        "Error: kernel 'moe_kernel' launch shared memory exceeds current GPU arch sm_120a allowed. Allocated: 118784 bytes. Max: 101376 bytes.",
        'RuntimeError: CUDA Error: cudaErrorInvalidValue',
      ]).category,
    ).toBe('shared_memory_exceeded');
    expect(
      classOf(['CUDA Exception: Lane Misaligned Address', 'The exception was triggered at PC 0x7f99']).category,
    ).toBe('illegal_memory_access');
    expect(
      classOf([
        'Traceback (most recent call last):',
        '  File "/x/vllm/distributed/parallel_state.py", line 12, in get_world_group',
        '    assert _WORLD is not None',
        'AssertionError: distributed environment is not initialized',
      ]).category,
    ).toBe('nccl_error');
  });

  it("CUTLASS's `Error Internal` from a quantization kernel is a kernel that failed, not a setting refused", () => {
    const log = (message: string) => [
      'Traceback (most recent call last):',
      '  File "/x/vllm/model_executor/layers/quantization/compressed_tensors/schemes/compressed_tensors_24.py", line 3, in apply_weights',
      '    out = ops.cutlass_scaled_sparse_mm(a, b)',
      `RuntimeError: ${message}`,
    ];
    expect(classOf(log('Error Internal')).category).toBe('other');
    expect(classOf(log('Only fp8 weights are supported')).category).toBe('backend_assertion');
  });

  it('a warning first, then the same failure logged as an error: the error record is the root', () => {
    const c = classOf([
      'WARNING 01-03 10:56:05 model_runner_base.py:143] Failed to pickle inputs of failed execution: CUDA error: an illegal memory access was encountered',
      "ERROR 01-03 10:56:05 engine.py:135] RuntimeError('Error in model execution: CUDA error: an illegal memory access was encountered')",
    ]);
    expect([c.category, c.evidence[0]?.line]).toEqual(['illegal_memory_access', 2]);
  });

  it("a server's notice that its engine is gone, before the engine's own error: the error is the root", () => {
    const c = classOf([
      'CRITICAL 11-26 13:20:09 launcher.py:99] MQLLMEngine is already dead, terminating server process',
      "ERROR 11-26 13:20:09 engine.py:135] RuntimeError('Error in model execution: shape mismatch: value tensor of shape [4956, 3584] cannot be broadcast')",
      'ERROR 11-26 13:20:09 engine.py:135] Traceback (most recent call last):',
      'ERROR 11-26 13:20:09 engine.py:135]   File "/x/vllm/worker/model_runner.py", line 1654, in execute_model',
    ]);
    expect(c.evidence[0]?.line).toBe(2);
    // a death that says how the process ended still comes first
    const killed = classOf([
      '[2025-01-01 10:00:00] Rank 0 scheduler is dead. Please check if there are relevant logs.',
      '[2025-01-01 10:00:00] Exit code: -9',
      '[2025-01-01 10:00:01] Stage initialization failed',
      'Traceback (most recent call last):',
      '  File "/x/sglang/srt/entrypoints/engine.py", line 12, in _launch',
    ]);
    expect(killed.evidence.slice(0, 2).map((e) => e.line)).toContain(2);
  });
});

describe('the t- round’s dev half: general wordings', () => {
  it('a kernel library without this GPU architecture in its table is an unsupported architecture', () => {
    expect(
      classOf([
        'Traceback (most recent call last):',
        '  File "/x/aiter/jit/utils/chip_info.py", line 65, in get_gfx_custom_op_core',
        '    raise KeyError(',
        `KeyError: "Unknown GPU architecture: gfx1101. Supported architectures: ['gfx90a', 'gfx942']"`,
      ]).category,
    ).toBe('unsupported_arch');
    expect(classOf(["AssertionError: One of GPU archs of ['gfx1201'] is invalid or not supported"]).category).toBe(
      'unsupported_arch',
    );
  });

  it("an Ascend NPU graph's capture that fails is a graph capture failure", () => {
    expect(
      classOf([
        'RuntimeError: NPUModelRunner failed, error is capture_begin:../torch_npu/csrc/core/npu/NPUGraph.cpp:230 NPU function error: c10_npu::acl::AclmdlRICaptureBegin(capture_stream_, capture_mode), error code is 207005',
      ]).category,
    ).toBe('cuda_graph_capture_failed');
  });

  it("a platform's bare NotImplementedError, and a backend that does not yet support a setting, refuse the configuration", () => {
    expect(
      classOf([
        'Traceback (most recent call last):',
        '  File "/x/vllm/platforms/interface.py", line 201, in is_async_output_supported',
        '    raise NotImplementedError',
        'NotImplementedError',
      ]).category,
    ).toBe('backend_assertion');
    // the same bare exception raised in a model's own code says nothing of a setting
    expect(
      classOf([
        'Traceback (most recent call last):',
        '  File "/x/vllm/model_executor/models/llama.py", line 201, in forward',
        '    raise NotImplementedError',
        'NotImplementedError',
      ]).category,
    ).toBe('other');
    expect(
      classOf(["NotImplementedError: XPU gdn_attention does not yet support 'spec_sequence_masks'."]).category,
    ).toBe('backend_assertion');
  });

  it('a traceback cut before its exception after a failure record and its advice: the record is the root', () => {
    const c = classOf([
      '[2026-05-22 04:54:32 TP6] Piecewise CUDA Graph failed with error: Tensor match failed for Tensor<8> at fused_store_index_cache.cuh:107',
      "- Root cause: Size mismatch for shape#0('num_tokens'): expected 6 but got 8",
      'To work around this error, add --disable-piecewise-cuda-graph to your launch command.',
      'Please report this issue at https://github.com/sgl-project/sglang/issues/new/choose',
      '[2026-05-22 04:54:32 TP6] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/x/sglang/srt/managers/scheduler.py", line 3811, in run_scheduler_process',
      '    scheduler.run_event_loop()',
    ]);
    expect(c.evidence[0]?.line).toBe(1);
  });
});

describe('NCCL and ptxas lines the t- round showed', () => {
  it("NCCL's missing libibverbs is a notice; two ranks on one GPU is NCCL's failure", () => {
    const init = [
      'host:5893:5893 [0] NCCL INFO Bootstrap : Using [0]eno1:172.30.215.224<0>',
      'host:5893:5893 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]',
      'host:5893:5893 [0] NCCL INFO NET/Socket : Using [0]eno1:172.30.215.224<0>',
      'host:5893:5893 [0] NCCL INFO Using network Socket',
    ];
    expect(classOf(init).category).toBe('none');
    const dup = classOf([
      ...init,
      'host:5924:5948 [1] init.cc:573 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 3000',
    ]);
    expect([dup.category, dup.evidence[0]?.line]).toEqual(['nccl_error', 5]);
  });

  it("ptxas's fatal line, not the JIT's line that only says the build failed, is the root", () => {
    const c = classOf([
      'RuntimeError: Internal Triton PTX codegen error: ',
      "  ptxas fatal   : (C7600) Register allocation failed with register count of '255'. Compile the program with a higher register target",
      '  ptxas fatal   : Ptx assembly aborted due to errors',
    ]);
    expect([c.category, c.evidence[0]?.line]).toEqual(['other', 2]);
  });
});

it("PyTorch's advice under a CUDA error is more of that error: the error's own record stays the root", () => {
  const c = classOf([
    '2024-03-29 18:28:51,875 xinference.api.restful_api 8 ERROR    [address=0.0.0.0:43266, pid=897] CUDA error: invalid argument',
    'CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.',
    'For debugging consider passing CUDA_LAUNCH_BLOCKING=1.',
  ]);
  expect([c.category, c.evidence[0]?.line]).toEqual(['other', 1]);
});
