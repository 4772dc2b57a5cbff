// Failure records (records.ts): a crash that printed no Python traceback, only a record saying what failed. The
// record is read as an exception line would be, and only when the server did not carry on after it.
import { describe, expect, it } from 'vitest';
import { diagnoseText } from '../../src/logs/classify/index.ts';
import { readPrefix } from '../../src/logs/classify/lineinfo.ts';
import { embeddedException, failureRecord } from '../../src/logs/classify/records.ts';

const record = (line: string) => failureRecord(readPrefix(line), line);

describe('embeddedException', () => {
  it('reads an exception named after the record’s own words, with or without its arguments, or as a repr', () => {
    expect(embeddedException("Failed to initialize Python stub: TypeError: f() got an unexpected keyword 'x'")).toEqual(
      {
        type: 'TypeError',
        short: 'TypeError',
        message: "f() got an unexpected keyword 'x'",
      },
    );
    expect(
      embeddedException('Decode transfer failed with exception KVTransferError(bootstrap_room=1): unknown reason'),
    ).toMatchObject({ type: 'KVTransferError', message: 'unknown reason' });
    expect(
      embeddedException(`TypeError("__init__() missing 1 required positional argument: 'stream'"), tb: None`),
    ).toEqual({
      type: 'TypeError',
      short: 'TypeError',
      message: "__init__() missing 1 required positional argument: 'stream'",
    });
    expect(embeddedException('engine start: torch.OutOfMemoryError: CUDA out of memory.')).toMatchObject({
      type: 'torch.OutOfMemoryError',
    });
  });

  it('names none in plain words, in a name that is no exception, or in a name not followed by a message', () => {
    expect(embeddedException('Stage 0 error on request 12: list index out of range')).toBeNull();
    expect(embeddedException('Failed to start engine: NoneType: None')).toBeNull();
    expect(embeddedException('the RuntimeError class is documented')).toBeNull();
  });
});

describe('failureRecord', () => {
  it.each([
    ['Python logging', 'ERROR:vllm_omni.entrypoints.omni_llm:Stage 0 error on request 0_38: list index out of range'],
    ['vLLM logger', 'ERROR 12-16 10:12:49 [core.py:708] EngineCore hit a fatal error'],
    ['glog without brackets (Triton)', 'E1216 02:12:49.624646 179 model.py:248] "[vllm] Failed to start engine"'],
    ['TensorRT-LLM', '[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: boom'],
    ['an SGLang record saying it failed', '[2026-05-21 16:07:41 DP6 TP6] Failed to update parameter online: bad start'],
    ['Rust tracing', 'ERROR sglang_router::server: worker http://127.0.0.1:30001 failed: connection refused'],
    // a prediction in the same line takes only its own sentence's words with it
    ['a failure reported beside a prediction', 'The engine failed to start. Starting it again would cause errors'],
  ])('%s is a failure record', (_name, line) => {
    expect(record(line)).not.toBeNull();
  });

  it.each([
    ['a warning', 'WARNING 12-16 10:12:49 [utils.py:12] Failed to import from vllm._C'],
    ['a bracketed warning', '[W1203 12:00:00.000 ProcessGroupNCCL.cpp:12] failed to do something, trying again'],
    [
      'a survived error (SGLang registry)',
      '[2026-01-30 20:54:50 TP0] Ignore import error when loading sglang.srt.models.x',
    ],
    ['a retry', 'ERROR 12-16 10:12:49 [hub.py:3] Download failed, retrying in 5 s'],
    [
      'a level with nothing failing',
      '2025-07-02 16:41:31 | ERROR | stderr | Loading safetensors checkpoint shards: 50%',
    ],
    ['an ordinary line', '[2026-05-21 16:07:41 TP0] Load weight end. mem usage=12.10 GB'],
    [
      "a warning in torchtitan's format (a tag before Python logging's date - name - level)",
      '[rank0]:[titan] 2025-03-12 11:10:12,612 - root - WARNING - ENV[TORCH_NCCL_ASYNC_ERROR_HANDLING] = 1 will be overridden to 3 based on job config',
    ],
    [
      'a failure predicted, not reported (transformers, no level in front)',
      '(EngineCore_DP0 pid=7) Token indices sequence length is longer than the specified maximum sequence length for this model (9000 > 8192). Running this sequence through the model will result in indexing errors',
    ],
  ])('%s is not', (_name, line) => {
    expect(record(line)).toBeNull();
  });
});

describe('a crash with no traceback, only a failure record', () => {
  const startup = [
    '[2026-05-21 16:07:00 TP0] Init torch distributed begin.',
    '[2026-05-21 16:07:30 TP0] Load weight begin.',
  ];

  it('is a crash: other, the record its root line, the phase the milestones reached', () => {
    const line = '[2026-05-21 16:07:41 TP0] Failed to allocate the radix cache: start out of range';
    const d = diagnoseText([...startup, line, ''].join('\n'));
    expect(d.classification.category).toBe('other');
    expect(d.classification.phase).toBe('weight_load');
    expect(d.classification.evidence[0]?.text).toBe(line);
    expect(d.reason).toMatch(/failure record with no traceback/);
  });

  it('the exception it names decides its class, as an exception line would', () => {
    const line =
      'E1216 02:12:49.624646 179 model.py:248] "Failed to start engine: ImportError: libcudart.so.12: cannot open"';
    const d = diagnoseText([...startup, line, ''].join('\n'));
    expect(d.classification.category).toBe('import_error');
    expect(d.classification.evidence[0]?.text).toBe(line);
  });

  it('is no crash when the server carried on after it: a milestone or serving', () => {
    const failed = 'ERROR 12-16 10:12:49 [serving_chat.py:12] Error in chat completion: request 7 failed';
    for (const after of [
      '[2026-05-21 16:08:00 TP0] Load weight end. mem usage=12.10 GB',
      '[2026-05-21 16:08:00] INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
      '[2026-05-21 16:08:00 TP0] Decode batch, #running-req: 1, #token: 90, token usage: 0.00, gen throughput (token/s): 40.1',
    ]) {
      expect(diagnoseText([...startup, failed, after, ''].join('\n')).classification.category, after).toBe('none');
    }
    expect(diagnoseText([...startup, failed, ''].join('\n')).classification.category).toBe('other');
  });

  it('an ordinary line after it is no sign of progress: a failing process goes on printing', () => {
    const failed = '[2026-05-21 16:07:41 TP0] Failed to allocate the radix cache: start out of range';
    for (const after of [
      '[2026-05-21 16:07:41 TP3] Cache flushed successfully!',
      '[shutdown] Executor: waiting for worker exit count=2',
    ]) {
      const d = diagnoseText([...startup, failed, after, ''].join('\n'));
      expect(d.classification.category, after).toBe('other');
      expect(d.classification.evidence[0]?.text).toBe(failed);
    }
  });

  it('a failure the program says it retries was survived; the one after the last retry is the root', () => {
    const log = [
      '[Router (Rust)] 2025-03-18 14:17:58 - WARN - Generate request to http://localhost:8001 failed (attempt 1/3)',
      '[Router (Rust)] 2025-03-18 14:17:58 - INFO - Retrying request after 1 failed attempts',
      '[Router (Rust)] 2025-03-18 14:17:58 - WARN - Generate request to http://localhost:8001 failed (attempt 3/3)',
      '',
    ].join('\n');
    expect(diagnoseText(log).classification.evidence[0]?.line).toBe(3);
  });

  it('an NCCL WARN is a failure once NCCL returns its error up the calls; a WARN alone is not', () => {
    const warn =
      'gpu-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<54862> with status=12';
    const trace = [
      'gpu-0:3468:3905 [4] NCCL INFO transport/net.cc:1302 -> 6',
      'gpu-0:3468:3905 [4] NCCL INFO proxy.cc:87',
    ];
    const d = diagnoseText([warn, ...trace, ''].join('\n'));
    expect(d.classification.category).toBe('nccl_error');
    expect(d.classification.evidence[0]?.text).toBe(warn);
    expect(diagnoseText([warn, ''].join('\n')).classification.category).toBe('none');
  });

  it('an error-code constant states a failure (MPI_ERR_*, NIXL_ERR_*)', () => {
    expect(record('2025-05-16T04:56:18.119Z ERROR engine.run_mp_engine: NIXL_ERR_BACKEND')).not.toBeNull();
    expect(record('[2026-05-21 16:07:41 TP0] transfer ended with NIXL_ERR_NOT_FOUND')).not.toBeNull();
  });

  it('a traceback still names the crash over a record printed before it', () => {
    const log = [
      'ERROR 12-16 10:12:49 [core.py:708] EngineCore failed to run the model',
      'Traceback (most recent call last):',
      '  File "/x/vllm/v1/engine/core.py", line 12, in run',
      "ModuleNotFoundError: No module named 'flash_attn'",
      '',
    ].join('\n');
    const d = diagnoseText(log);
    expect(d.classification.category).toBe('import_error');
    expect(d.classification.evidence[0]?.text).toBe("ModuleNotFoundError: No module named 'flash_attn'");
  });
});
