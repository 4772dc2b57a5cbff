// The reader's rules that keep an answer the same under a wrapper, a join or a hard wrap (normalise.ts, tracebacks.ts,
// records.ts, engine.ts): each test states one general fact with lines in the shape upstream programs print them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createClassifier, diagnoseFile, diagnoseStream, diagnoseText } from '../../src/logs/classify/index.ts';
import { readPrefix } from '../../src/logs/classify/lineinfo.ts';
import { splitJoined } from '../../src/logs/classify/normalise.ts';
import { failureRecord } from '../../src/logs/classify/records.ts';

const classify = (lines: string[]) => diagnoseText(`${lines.join('\n')}\n`).classification;
/** The answer of every reader: the whole text, the fast file scan (through a stream), and line by line. */
async function everyReader(lines: string[]) {
  const text = `${lines.join('\n')}\n`;
  const streamed = createClassifier();
  lines.forEach((l, i) => {
    streamed.push(l, i + 1);
  });
  return [
    diagnoseText(text).classification,
    (await diagnoseStream(Readable.from([Buffer.from(text)]))).classification,
    streamed.result(),
  ];
}

describe('splitJoined: where joined lines start again', () => {
  it("reads a tabled paste's column mark behind the wrappers of the program that printed it", () => {
    const row =
      '  |   | 2025-11-04 10:07:58 master-0 >>   what():  CUDA error: an illegal memory access was encountered |  ';
    expect(splitJoined(row)).toEqual([
      '  |   | 2025-11-04 10:07:58 master-0 >>   what():  CUDA error: an illegal memory access was encountered',
      ' |',
    ]);
    for (const wrapper of ['3: ', 'sglang-1  | (RayWorkerWrapper pid=7) ', '[default0]:']) {
      const pieces = splitJoined(`${wrapper}${row}`);
      expect(pieces?.length, wrapper).toBe(2);
      expect(pieces?.[1]).toBe(' |');
    }
  });

  it("splits at glog's prefix whatever the source file's extension (Triton's and gRPC's `.cc`)", () => {
    expect(
      splitJoined(
        "E0705 08:07:40.219476055   79386 chttp2_server.cc:1080]      UNKNOWN:No address added out of total 1 resolved for '0.0.0.0:18001' E0705 08:07:40.219789 79386 main.cc:245] failed to start GRPC service: Unavailable - Socket '0.0.0.0:18001' already in use",
      ),
    ).toEqual([
      "E0705 08:07:40.219476055   79386 chttp2_server.cc:1080]      UNKNOWN:No address added out of total 1 resolved for '0.0.0.0:18001'",
      "E0705 08:07:40.219789 79386 main.cc:245] failed to start GRPC service: Unavailable - Socket '0.0.0.0:18001' already in use",
    ]);
  });

  it("splits argparse's usage line from what came before, never a number's `usage:`", () => {
    expect(
      splitJoined(
        "INFO 05-19 17:20:56 __init__.py:190] Automatically detected platform cuda. usage: trl TRL CLI: error: argument command: invalid choice: 'x' (choose from 'chat', 'sft')",
      ),
    ).toEqual([
      'INFO 05-19 17:20:56 __init__.py:190] Automatically detected platform cuda.',
      "usage: trl TRL CLI: error: argument command: invalid choice: 'x' (choose from 'chat', 'sft')",
    ]);
    expect(
      splitJoined(
        '[2025-03-14 02:16:14 TP0] Decode batch. #running-req: 509, #token: 180776, token usage: 0.43, gen throughput (token/s): 12.0, error: none',
      ),
    ).toBeNull();
  });

  it("splits a signal handler's line and the boost::stacktrace frames after it, and Ray's one-line terminate", () => {
    expect(
      splitJoined(
        'Signal (6) received.  0# 0x0000557F92033459 in /opt/tritonserver/bin/tritonserver  1# gsignal in /usr/lib/x86_64-linux-gnu/libc.so.6',
      ),
    ).toEqual([
      'Signal (6) received.',
      '0# 0x0000557F92033459 in /opt/tritonserver/bin/tritonserver',
      '1# gsignal in /usr/lib/x86_64-linux-gnu/libc.so.6',
    ]);
    expect(
      splitJoined(
        'it returns an error: the actor is dead because its worker process has died. Unhandled exception: St13runtime_error. what(): NCCL Error 5: invalid usage',
      ),
    ).toEqual([
      'it returns an error: the actor is dead because its worker process has died.',
      'Unhandled exception: St13runtime_error. what(): NCCL Error 5: invalid usage',
    ]);
  });

  it('splits a chain marker from the bare exception line it runs on after', () => {
    expect(
      splitJoined(
        'asyncio.exceptions.TimeoutError  The above exception was the direct cause of the following exception: ',
      ),
    ).toEqual([
      'asyncio.exceptions.TimeoutError',
      'The above exception was the direct cause of the following exception:',
    ]);
  });
});

describe('joined lines and their wrappers', () => {
  it("cuts before a container's column that every line of the joined line carries, keeping it with its line", () => {
    expect(
      splitJoined(
        'app  | INFO:     127.0.0.1:48802 - "GET /health HTTP/1.1" 200 OK app  | ERROR 11-08 11:01:30 [core.py:502] EngineCore encountered a fatal error.',
      ),
    ).toEqual([
      'app  | INFO:     127.0.0.1:48802 - "GET /health HTTP/1.1" 200 OK',
      'app  | ERROR 11-08 11:01:30 [core.py:502] EngineCore encountered a fatal error.',
    ]);
  });

  it('a time-stamped record indented after an exception line is no more of its message: the error record logged with the next traceback', () => {
    const c = classify([
      '  File "/x/asyncio/queues.py", line 158, in get',
      '    await getter',
      'asyncio.exceptions.CancelledError',
      ' 2026-02-11 02:15:04.629 1 kserve ERROR [__main__.py:<module>():337] Failed to start model server: Engine core initialization failed.',
      'Traceback (most recent call last):',
      '  File "/x/huggingfaceserver/__main__.py", line 333, in <module>',
    ]);
    expect(c.evidence[0]?.line).toBe(4);
  });
});

describe("an exception's message over many lines", () => {
  // xformers' dispatcher lists the inputs, then each operator it tried and why not (xformers/ops/fmha/dispatch.py)
  const message = [
    'ValueError: Operator `memory_efficient_attention` does not support inputs:',
    '     query       : shape=(1, 4101, 32, 128) (torch.float16)',
    '     key         : shape=(1, 4101, 32, 128) (torch.float16)',
    '     value       : shape=(1, 4101, 32, 128) (torch.float16)',
    "     attn_bias   : <class 'xformers.ops.fmha.common.LowerTriangularMask'>",
    '     p           : 0.0',
    '`flshattF` is not supported because:',
    '    requires a GPU with compute capability > 7.5',
  ];

  it('is read whole, a line that opens with a code span too: its eighth line names the GPU generation', () => {
    const c = classify(message);
    expect([c.category, c.evidence[0]?.line]).toEqual(['unsupported_arch', 1]);
    // the same message cut before that line names only the backend's refusal
    expect(classify(message.slice(0, 7)).category).toBe('backend_assertion');
  });

  it("goes on past another rank's record printed between its lines", () => {
    const interleaved = [
      ...message.slice(0, 4),
      '[2025-11-05 12:19:32 TP7] Cache flushed successfully!',
      ...message.slice(4),
    ];
    expect(classify(interleaved).category).toBe('unsupported_arch');
  });

  it("ends at the C++ runtime's terminate report: that is another exception's", () => {
    const c = classify([
      'c10::DistBackendError',
      "terminate called after throwing an instance of 'c10::DistBackendError'",
      '  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST) ran for 1800011 milliseconds before timing out.',
    ]);
    expect([c.category, c.evidence[0]?.line]).toEqual(['nccl_error', 3]);
  });
});

describe('C++ exceptions on one line', () => {
  it("reads libstdc++'s terminate and its what() joined on one line as the exception", async () => {
    const lines = [
      "terminate called after throwing an instance of 'std::runtime_error'   what():  [FT][ERROR] CUDA runtime error: out of memory /x/allocator.h:220",
      'Signal (6) received.',
      ' 0# 0x0000557F92033459 in /opt/tritonserver/bin/tritonserver',
      ' 3# abort in /usr/lib/x86_64-linux-gnu/libc.so.6',
    ];
    for (const c of await everyReader(lines)) {
      expect(c.category).toBe('cuda_oom');
      expect(c.evidence[0]?.line).toBe(1);
    }
  });

  it("reads Ray's TerminateHandler line as the exception, not a reporter's prose before it", () => {
    const c = classify([
      'When I run offline inference, it returns an error: the actor is dead because its worker process has died.',
      '',
      'Unhandled exception: St13runtime_error. what(): NCCL Error 5: invalid usage',
    ]);
    expect([c.category, c.evidence[0]?.line]).toEqual(['nccl_error', 3]);
  });
});

describe('source lines that lost their indentation', () => {
  it('takes an unindented line of code right after an indented frame as its source, not the exception', () => {
    const c = classify([
      'Traceback (most recent call last):',
      '  File "/x/vllm/v1/engine/core.py", line 441, in __init__',
      'super().__init__(vllm_config, executor_class, log_stats,',
      '  File "/x/vllm/v1/executor/multiproc_executor.py", line 446, in wait_for_ready',
      '    raise e from None',
      'Exception: WorkerProc initialization failed due to an exception in a background process.',
    ]);
    expect(c.evidence[0]?.text).toBe(
      'Exception: WorkerProc initialization failed due to an exception in a background process.',
    );
  });
});

describe('memory that ran out, in a record', () => {
  it('is a failure at the record’s own error level (c10’s glog prefix), not in a notice without one', () => {
    const npu =
      '[rank0]:[E1204 11:18:17.728425480 compiler_depend.ts:444] NPU out of memory. NPUWorkspaceAllocator tried to allocate 187.54 MiB(NPU 0; 60.96 GiB total capacity; 61.91 MiB free).';
    expect(failureRecord(readPrefix(npu), npu)).not.toBeNull();
    const retract =
      '[2025-01-06 02:58:44 TP0] Decode out of memory happened. #retracted_reqs: 1, #new_token_ratio: 0.09 -> 0.9';
    expect(failureRecord(readPrefix(retract), retract)).toBeNull();
    // a wrapper's level, on every line a process prints, is not the record's own
    expect(failureRecord(readPrefix(`ERROR:root:${retract}`), `ERROR:root:${retract}`)).toBeNull();
    expect(
      classify([npu, 'Exception raised from malloc at build/x/compiler_depend.ts:426 (most recent call first):'])
        .category,
    ).toBe('cuda_oom');
  });
});

describe("a warning's message hard-wrapped onto the next line", () => {
  const warning = [
    'Workers started ... press Ctrl-C to Exit',
    'WARNING 01-28 13:38:22 cuda.py:22] You are using a deprecated `pynvml` package. Please install `nvidia-ml-py` instead, and `pynvml` will take precedence and cause',
    'errors. See https://pypi.org/project/pynvml for more information.',
    'INFO:     Started server process [2971700]',
  ];

  it('is more of the warning, no failure, for every reader and behind per-line wrappers with their own time stamps', async () => {
    for (const c of await everyReader(warning)) expect(c.category).toBe('none');
    const cri = warning.map((l, i) => `2025-11-05T12:19:0${i}.123456789Z stderr F ${l}`);
    for (const c of await everyReader(cri)) expect(c.category).toBe('none');
  });

  it('the same line after an error record, or after a line that ended its sentence, is read on its own', () => {
    const afterError = [warning[0] as string, (warning[1] as string).replace('WARNING', 'ERROR'), warning[2] as string];
    expect(classify(afterError).category).toBe('other');
    const ended = [
      warning[0] as string,
      'WARNING 01-28 13:38:22 cuda.py:22] You are using a deprecated `pynvml` package.',
      warning[2] as string,
    ];
    expect(classify(ended).category).toBe('other');
  });
});

describe('a line that states a failure of its own after a long warning is read, not taken as more of it', () => {
  const long = 'the tokenizer of this model differs from the one this server was tuned for and will';

  it('a record of its own (`fatal: ...`, `error: ...`) after a warning that runs on is that failure', async () => {
    for (const lines of [
      [
        'INFO 12-01 10:00:00 [loader.py:12] Loading weights took 20.10 seconds and the model uses 15.2 GiB of memory on rank 0',
        'fatal: unable to access the model repository',
      ],
      [`[2026-12-01 10:00:00] WARNING: ${long}`, 'error: failed to fetch the model weights from the hub'],
    ]) {
      for (const c of await everyReader(lines))
        expect([c.category, c.evidence[0]?.line], lines[1]).toEqual(['other', 2]);
    }
  });

  it("another rank's or container's label is another process's line: only a time stamp's digits may differ", async () => {
    for (const lines of [
      [
        `0: [2026-12-01 10:00:00] WARNING: ${long}`,
        '1: fatal: unable to read the model index from /models/x/index.json',
      ],
      [
        `worker-0  | INFO 12-01 10:00:00 [loader.py:12] Loading weights: ${long}`,
        'worker-1  | the engine process on this node was killed',
      ],
    ]) {
      for (const c of await everyReader(lines))
        expect([c.category, c.evidence[0]?.line], lines[1]).toEqual(['other', 2]);
    }
  });

  it('a warning longer than one screen line wraps onto nothing, for every reader alike (the fast scan too)', async () => {
    const lines = [
      `[2026-12-01 10:00:00] INFO: ${long} ${'from the one it was tuned for '.repeat(160)}and`,
      'error: failed to fetch the model weights from the hub',
    ];
    const file = join(mkdtempSync(join(tmpdir(), 'wrap-')), 'long.log');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const answers = [...(await everyReader(lines)), (await diagnoseFile(file)).classification];
    for (const c of answers) expect([c.category, c.evidence[0]?.line]).toEqual(['other', 2]);
  });
});

describe("a Markdown table's rows", () => {
  it('a row of column names that names errors states no failure, for every reader', async () => {
    const lines = [
      '[2026-12-01 10:00:00] The server is fired up and ready to roll!',
      '| model | backend | requests | errors | ERROR rate | tok/s |',
      '|---|---|---|---|---|---|',
      '| llama | sglang | 1000 | 0 | 0.0% | 4523 |',
    ];
    for (const c of await everyReader(lines)) expect(c.category).toBe('none');
    // a log record pasted in a table is still read (its cell has its own `:`)
    expect(classify(['| [2026-12-01 10:00:00] ERROR: failed to load the model weights |']).category).toBe('other');
  });
});

describe("an exception's message continued on the next lines", () => {
  it('is read whole by the signatures, as it is when the lines are one', () => {
    const lines = [
      'RuntimeError: Assertion error (include_parser.hpp:69):',
      'Failed to open: /usr/local/lib/python3.12/dist-packages/vllm/third_party/deep_gemm/',
      'include/deep_gemm/impls/sm121_fp8_mqa_logits.cuh',
    ];
    const apart = classify(lines);
    const joined = classify([lines.join(' ')]);
    expect([apart.category, apart.evidence[0]?.line]).toEqual(['unsupported_arch', 1]);
    expect(joined.category).toBe('unsupported_arch');
  });
});
