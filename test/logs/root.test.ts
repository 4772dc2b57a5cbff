// The root line is a line that states the cause: the one check (statesNothing) the root chooser applies to every
// candidate, and the reader cases where a line that states nothing used to become the root.
import { describe, expect, it } from 'vitest';
import { diagnoseText } from '../../src/logs/classify/index.ts';
import { statesNothing } from '../../src/logs/classify/lineinfo.ts';
import { chooseRoot } from '../../src/logs/classify/result.ts';

describe('statesNothing', () => {
  it.each([
    ['Markdown bold markers', '**'],
    ['a Markdown rule', '---'],
    ['a code fence', '```'],
    ['a caret underline', '             ^^^^^^^^^^^^^^^^^^^^^^'],
    ['a tilde and caret underline', '    ~~~~~~^^^^^^^'],
    ['a frame', '  File "/x/sglang/srt/managers/scheduler.py", line 12, in event_loop'],
    ['a frame cut inside its path', 'vllm/engine/arg_utils.py", line 963, in create_model_config'],
    ['a path cut off', '/home/x/sglang/python/sglang/srt/managers/sche'],
    ['a traceback header', 'Traceback (most recent call last):'],
    [
      'a header behind a wrapper’s own words',
      '[2025-03-10 14:17:52 TP1] Scheduler hit an exception: Traceback (most recent call last):',
    ],
    ['a chain marker', 'The above exception was the direct cause of the following exception:'],
    ['a wrapper’s own line before the exception', '[2025-03-10 14:17:52 TP1] Scheduler hit an exception:'],
    ['an empty record', '[2025-03-10 14:17:52 TP1] '],
  ])('%s', (_name, line) => {
    expect(statesNothing(line)).toBe(true);
  });

  it.each([
    ['an exception line', "KeyError: b''"],
    ['an error record', '[2025-03-10 14:17:52 TP6] Ignore import error when loading sglang.srt.models.deepseek_v2.'],
    ['a CUDA error line', 'CUDA error: an illegal memory access was encountered'],
    ['the kernel’s Killed', 'Killed'],
    ['a what(): line', '  what():  CUDA error: out of memory'],
  ])('%s states something', (_name, line) => {
    expect(statesNothing(line)).toBe(false);
  });
});

describe('chooseRoot', () => {
  it('takes the first candidate that states something, else the first there is', () => {
    const header = { line: 1, text: 'Traceback (most recent call last):' };
    const frame = { line: 2, text: '  File "/x/a.py", line 3, in f' };
    const record = { line: 0, text: 'ERROR 01-01 00:00:00 [core.py:1] Engine failed: bad config' };
    expect(chooseRoot([null, undefined, frame, record, header])).toBe(record);
    expect(chooseRoot([null, frame, header])).toBe(frame);
    expect(chooseRoot([null, undefined])).toBeNull();
  });
});

describe('roots that used to state nothing', () => {
  it('an exception line indented with the rest of a pasted excerpt is the exception, not more source', () => {
    const log = [
      '  File "/x/vllm/transformers_utils/tokenizers/mistral.py", line 223, in convert_tokens_to_string',
      '    self.tokenizer._tekken_token2id_nospecial[t] + shift',
      "  KeyError: b''",
      '',
    ].join('\n');
    const d = diagnoseText(log);
    expect(d.classification.evidence[0]?.text).toBe("  KeyError: b''");
    expect(d.reason).toMatch(/uncaught KeyError/);
  });

  it('an indented exception line is read by the signatures too', () => {
    const log = [
      '  File "/x/sglang/srt/layers/attention/flashinfer_backend.py", line 12, in forward',
      '    o = self.decode_wrapper.forward(q, k, v)',
      '  RuntimeError: CUDA error: an illegal memory access was encountered',
      '',
    ].join('\n');
    expect(diagnoseText(log).classification.category).toBe('illegal_memory_access');
  });

  it('a traceback cut before its first frame: the record logged before its header is the root, not the header', () => {
    const log = [
      "[2025-03-10 14:17:52 TP6] Ignore import error when loading sglang.srt.models.deepseek_v2. Command '['/usr/bin/gcc', 'main.c']' returned non-zero exit status 1.",
      '[2025-03-10 14:17:52 TP1] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/home/x/sglang/python/sglang/srt/managers/sche',
      '',
    ].join('\n');
    const d = diagnoseText(log);
    expect(d.classification.evidence[0]?.line).toBe(1);
    expect(d.classification.category).toBe('import_error');
  });
});

describe("a paste's own lines around a log: a reporter's prose, a Markdown fence", () => {
  const text = (...lines: string[]) => diagnoseText(`${lines.join('\n')}\n`).classification;
  const healthy = [
    '[2025-11-05 12:00:06] The server is fired up and ready to roll!',
    '[2025-11-05 12:01:00 TP0] Decode batch, #running-req: 1, #token: 90, gen throughput (token/s): 40.1',
  ];

  it("a reporter's line introducing the log (`I get this error:`) states no failure of its own", () => {
    const warning = '[2025-11-05 12:00:00 TP0] Using default MoE kernel config. Performance might be sub-optimal!';
    expect(text('When I start the server I get this error:', '', '```', warning, '```').category).toBe('none');
    expect(text('报错信息：', warning).category).toBe('none');
    expect(text('When I start the server I get this error:', '', '```', ...healthy, '```').category).toBe('none');
    // a record that names an exception still does, colon or not
    expect(text('Failed to start the engine: RuntimeError: no device found:').category).toBe('other');
  });

  it('a log record at an error level that ends in a colon states its failure, the reason on the next line', () => {
    const c = text(
      "[2025-11-05 12:00:00] server_args=ServerArgs(model_path='x', tp_size=8)",
      '[2025-11-05 12:00:05] Load weight begin. avail mem=78.00 GB',
      '[2025-11-05 12:00:09] ERROR: Failed to load the model, the server cannot start:',
      '    the checkpoint at /models/x has 3 of 4 shards',
    );
    expect(c.category).toBe('other');
    expect(c.evidence[0]?.text).toContain('Failed to load the model');
    // the same words as prose (a reporter's, no record prefix nor level) introduce what follows
    expect(text('Failed to load the model, the server cannot start:', ...healthy).category).toBe('none');
  });

  it('a closing fence ends the traceback it holds: the prose after it is not its exception line', () => {
    const c = text(
      '```',
      'Traceback (most recent call last):',
      '  File "/x/sglang/srt/managers/scheduler.py", line 2787, in run_scheduler_process',
      '    scheduler = Scheduler(',
      '```',
      '',
      'Any idea how to fix this?',
    );
    expect(c.category).toBe('other');
    expect(c.evidence[0]?.text).not.toContain('Any idea');
  });

  it("a reporter's introduction before a traceback cut short is never its root", () => {
    const c = text(
      'When I start the server I get this error:',
      '[2025-03-10 14:17:52 TP6] Engine failed to start: the kernel cache could not be written',
      '[2025-03-10 14:17:52 TP1] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/x/sglang/python/sglang/srt/managers/sche',
    );
    expect(c.evidence[0]?.text).not.toContain('I get this error');
  });
});

describe('a line logged before the traceback whose exception matches the same signature', () => {
  const tb = (before: string, exc: string) =>
    [
      before,
      'Traceback (most recent call last):',
      '  File "/x/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 157, in _create_tcp_store',
      '    store = TCPStore(',
      exc,
      '',
    ].join('\n');

  it("gives the root to the exception when it restates the logger's message", () => {
    const d = diagnoseText(
      tb(
        '[E socket.cpp:957] [c10d] The client socket has timed out after 60s while trying to connect to (10.0.0.2, 29400).',
        'torch.distributed.DistNetworkError: The client socket has timed out after 60s while trying to connect to (10.0.0.2, 29400).',
      ),
    );
    expect(d.classification.evidence[0]?.line).toBe(5);
    // the logger's line is still shown beside it
    expect(d.classification.evidence.map((e) => e.line)).toContain(1);
  });

  it('gives the root to the exception after a warning the program went on from', () => {
    const d = diagnoseText(
      tb(
        "WARNING 01-30 20:57:18 _custom_ops.py:14] Failed to import from vllm._C with ImportError('/x/vllm/_C.abi3.so: undefined symbol: _ZN3c10')",
        "ImportError: cannot import name '__version_tuple__' from 'vllm' (/x/vllm/__init__.py)",
      ),
    );
    expect(d.classification.category).toBe('import_error');
    expect(d.classification.evidence[0]?.line).toBe(5);
  });

  it('keeps the root on an error line that says more than the exception after it', () => {
    const d = diagnoseText(
      tb(
        'CUDA Error: CUDA_ERROR_ILLEGAL_ADDRESS /workspace/include/flashinfer/trtllm/fmha/fmhaKernels.cuh 257',
        'torch.AcceleratorError: CUDA error: an illegal memory access was encountered',
      ),
    );
    expect(d.classification.category).toBe('illegal_memory_access');
    expect(d.classification.evidence[0]?.line).toBe(1);
  });
});

describe("a record that wraps an exception's message, then the exception's own line", () => {
  it('gives the root to the exception line; a record that only shares some words keeps it', () => {
    const message =
      'The server socket has failed to listen on any local network address. port: 12345, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use';
    const d = diagnoseText(
      [
        `2025-09-13 07:52:58 | run-2 | worker_1 | ERROR | worker.py:243 | Error while running run_fit for run 2 and chunk 0: ${message}`,
        '.',
        `torch.distributed.DistNetworkError: ${message}`,
        '',
      ].join('\n'),
    );
    expect([d.classification.category, d.classification.evidence[0]?.line]).toEqual(['port_in_use', 3]);
    const other = diagnoseText(
      [
        '2025-09-13 07:52:58 | ERROR | worker.py:243 | bind failed: address already in use',
        `torch.distributed.DistNetworkError: ${message}`,
        '',
      ].join('\n'),
    );
    expect(other.classification.evidence[0]?.line).toBe(1);
  });
});
