// A serving process logs errors it survives by design: a request that failed or was aborted, a client that went away,
// a count of zero failures, a warning (Python's warnings format too), a download it resumes, a library's error logged
// while it was loaded. None of these, as the last lines of a healthy server's log, is a crash; crashed() and result()
// say the same; and a failure record alone from a process that exited 0 by itself is no crash either.
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { catalogDiagnoser } from '../../src/lifecycle/classifier.ts';
import { createClassifier, diagnoseText, loadCatalog } from '../../src/logs/classify/index.ts';
import { crashedBeforeExit, showsCrash } from '../../src/logs/diagnosis.ts';

const READY = [
  '[2025-11-05 12:00:00] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16',
  '[2025-11-05 12:00:05] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)',
  '[2025-11-05 12:00:06] The server is fired up and ready to roll!',
];

/** The classification and what crashed() says, streamed line by line as a follower reads it. */
function follow(lines: string[], exit?: { code: number | null; signal: string | null }) {
  const c = createClassifier(exit ? { exit } : {});
  lines.forEach((l, i) => {
    c.push(l, i + 1);
  });
  return { category: c.result().category, crashed: c.crashed(), root: c.result().evidence[0]?.text };
}

describe("a healthy server's error records, as its last lines, are no crash", () => {
  it.each([
    ['an aborted request', ['[2025-11-05 12:01:00] Abort request 9f1c2e']],
    ['a client that went away', ['[2025-11-05 12:01:00] Client disconnected, aborting request 9f1c2e']],
    [
      'a request body that did not parse',
      ['[2025-11-05 12:01:00] ERROR:    Failed to parse request body: Expecting value: line 1 column 1 (char 0)'],
    ],
    [
      'a request refused with the exception it names',
      [
        "[2025-11-05 12:01:00] Error in request: ValueError: The input (40000 tokens) is longer than the model's context length (32768 tokens).",
      ],
    ],
    ['a grammar for one request', ['[2025-11-05 12:01:00] Failed to compile grammar for request 12: invalid regex']],
    ['a request that timed out', ['[2025-11-05 12:01:00] Request 12 timed out after 600s']],
    [
      'a download it resumes',
      [
        '[2025-11-05 12:01:00] Error while downloading from https://cdn-lfs.hf.co/x: HTTPSConnectionPool: Read timed out.',
        'Trying to resume download...',
      ],
    ],
    [
      "a benchmark's table of zero failures",
      [
        '============ Serving Benchmark Result ============',
        'Successful requests:                     1000',
        'Failed requests:                         0',
        'Errors:                                  0',
        '==================================================',
      ],
    ],
    ['metrics counting zero failures', ['[2025-11-05 12:01:00] #running-req: 0, #failed-req: 0, errors: 0']],
    ['a warning in lower case', ['[2025-11-05 12:01:00] warning: cannot find flashinfer cubin cache, compiling']],
    [
      "Python's warnings format",
      ['/x/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: libc10_cuda.so'],
    ],
    ["Python's warning with its place cut off", ['UserWarning: cannot import flash_attn, falling to torch sdpa']],
    [
      "Slurm's report of a step's end (the backend reads the job's ending)",
      [
        'slurmstepd: error: *** JOB 1234 ON n1 CANCELLED AT 2025-11-05T13:00:00 DUE TO TIME LIMIT ***',
        'srun: Job step aborted: Waiting up to 32 seconds for job step to finish.',
      ],
    ],
    [
      "a library's error logged while it was loaded (absl before InitializeLog)",
      [
        'WARNING: All log messages before absl::InitializeLog() is called are written to STDERR',
        'E0000 00:00:1733486123.456789  123 cuda_fft.cc:477] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered',
      ],
    ],
    // what SGLang's and vLLM's serving processes log and serve on after (records.ts names the sources)
    ['a request refused for its sampling parameters', ['[2025-11-05 12:01:00] Error: invalid sampling params']],
    [
      "a request's asyncio task cancelled",
      ['[2025-11-05 12:01:00] Exception in TokenizerManager: asyncio.exceptions.CancelledError'],
    ],
    ["asyncio's report of a task nobody awaited", ['[2025-11-05 12:01:00] Task exception was never retrieved']],
    [
      'a client error answered with a 4xx',
      ['ERROR 11-05 12:01:00 [serving_chat.py:200] Error in chat completion: BadRequestError: the prompt is too long'],
    ],
    ["a shutdown's report of the children it killed", ['[2025-11-05 12:01:00] Killed 3 child processes']],
    [
      "vLLM's report of a prompt it could not preprocess",
      ['ERROR 11-05 12:01:00 [serving_chat.py:222] Error in preprocessing prompt inputs'],
    ],
    [
      'a request logged with its traceback (logger.exception), answered 500',
      [
        '[2025-11-05 12:01:00] Error in request: list index out of range',
        'Traceback (most recent call last):',
        '  File "/x/sglang/srt/entrypoints/openai/serving_base.py", line 12, in handle_request',
        '    return await self._handle_non_streaming_request(',
        'IndexError: list index out of range',
      ],
    ],
    [
      "uvicorn's report of an application's exception in one request, answered 500",
      [
        '[2025-11-05 12:01:00] ERROR:    Exception in ASGI application',
        'Traceback (most recent call last):',
        '  File "/x/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi',
        '    result = await app(  # type: ignore[func-returns-value]',
        'KeyError: 3',
      ],
    ],
  ])('%s', (_name, tail) => {
    const whole = diagnoseText([...READY, ...tail, ''].join('\n'));
    expect(whole.classification.category, whole.reason).toBe('none');
    expect(follow([...READY, ...tail])).toMatchObject({ category: 'none', crashed: false });
  });

  it('a failure of one request before the server serves (its warm-up request) is still a failure record', () => {
    const line = '[2025-11-05 12:00:03] Failed to process the warmup request: start out of range';
    const d = diagnoseText(['[2025-11-05 12:00:00] Load weight begin.', line, ''].join('\n'));
    expect(d.classification.category).toBe('other');
    expect(d.classification.evidence[0]?.text).toBe(line);
  });

  it("a request's traceback before the server serves, or one that names a crash, is still a crash", () => {
    const tb = (exc: string) => [
      `[2025-11-05 12:01:00] Error in request: ${exc}`,
      'Traceback (most recent call last):',
      '  File "/x/sglang/srt/entrypoints/openai/serving_base.py", line 12, in handle_request',
      '    return await f(',
      `RuntimeError: ${exc}`,
    ];
    const before = diagnoseText([READY[0], ...tb('start out of range'), ''].join('\n'));
    expect(before.classification.category).toBe('other');
    const named = diagnoseText(
      [...READY, ...tb('CUDA error: an illegal memory access was encountered'), ''].join('\n'),
    );
    expect(named.classification.category).toBe('illegal_memory_access');
  });

  it('the kernel killing a process is no count of children killed', () => {
    const d = diagnoseText([...READY, 'Out of memory: Killed process 4242 (python3)', ''].join('\n'));
    expect(d.classification.category).toBe('other');
  });

  it('a count of failures that is not zero still states a failure', () => {
    const d = diagnoseText(['[2025-11-05 12:00:00] Load weight begin.', 'Errors: 3', ''].join('\n'));
    expect(d.classification.category).toBe('other');
  });
});

describe('crashed() and result() agree: one notion of a log that shows a crash', () => {
  const record = '[2025-11-05 12:00:41 TP0] Failed to allocate the radix cache: start out of range';
  it.each([
    ['a failure record alone', ['[2025-11-05 12:00:00] Load weight begin.', record]],
    [
      'a traceback with no death after it',
      [
        'Traceback (most recent call last):',
        '  File "/x/sglang/srt/managers/scheduler.py", line 12, in run',
        'RuntimeError: start out of range',
      ],
    ],
    ['a healthy server', READY],
  ])('%s', (_name, lines) => {
    const f = follow(lines);
    expect(f.crashed).toBe(f.category !== 'none');
  });

  it('a failure record alone from a process that exited 0 by itself is no crash; a failed exit or a signal is', () => {
    const lines = ['[2025-11-05 12:00:00] Load weight begin.', record];
    expect(follow(lines, { code: 0, signal: null })).toMatchObject({ category: 'none', crashed: false });
    expect(follow(lines, { code: 1, signal: null })).toMatchObject({ category: 'other', crashed: true, root: record });
    expect(follow(lines, { code: null, signal: 'SIGKILL' })).toMatchObject({ category: 'other', crashed: true });
    expect(follow(lines)).toMatchObject({ category: 'other', crashed: true });
  });

  it('a traceback is a crash though the process exited 0 (a launcher can exit 0 after its server died)', () => {
    const lines = [
      'Traceback (most recent call last):',
      '  File "/x/sglang/srt/managers/scheduler.py", line 12, in run',
      'RuntimeError: start out of range',
    ];
    expect(follow(lines, { code: 0, signal: null })).toMatchObject({ category: 'other', crashed: true });
  });
});

describe('a failure record and a death: the process did not serve on', () => {
  // The lifecycle's view (the adapter a follower uses), and whether it tells the crash before the exit is known.
  const diagnoser = catalogDiagnoser(loadCatalog(), systemClock);
  const record = '[2025-11-05 12:01:00] Failed to push metrics to the collector: connection refused';
  const named = '[2025-11-05 12:01:00] ERROR: Failed to join the rendezvous: the store on 10.0.0.1:29555 refused it';
  it.each([
    ['the kernel killed it', record, 'Killed'],
    [
      'a child sent SIGQUIT',
      record,
      '[2025-11-05 12:01:01] Received sigquit from a child process. It usually means the child failed.',
    ],
    [
      'its scheduler is dead',
      record,
      '[2025-11-05 12:01:01] Rank 0 scheduler is dead. Please check if there are relevant logs.',
    ],
    ['a record an exception rule names, then killed', named, 'Killed'],
  ])('%s: not survivable, told before the exit, the death beside the record', (_name, rec, death) => {
    const d = diagnoser();
    [...READY, rec, death].forEach((l, i) => {
      d.push(l, i + 1);
    });
    const r = d.result();
    expect(r.survivable).toBeUndefined();
    expect(crashedBeforeExit(d)).toBe(true);
    expect(showsCrash(r, 0)).toBe(true);
    expect(r.evidence.map((e) => e.text)).toEqual([rec, death]);
  });

  it('the record alone stays survivable: told only at an exit that says so', () => {
    const d = diagnoser();
    [...READY, record].forEach((l, i) => {
      d.push(l, i + 1);
    });
    expect(d.result().survivable).toBe(true);
    expect(crashedBeforeExit(d)).toBe(false);
  });
});

// A record that names no request (asyncio's `Task exception was never retrieved`, SGLang's `Error while processing
// prompt batch`) says nothing about whose failure the traceback after it is; a traceback through the server's own loop
// (TokenizerManager.handle_loop, the scheduler's event loop, vLLM's engine core busy loop) is the server dying.
describe("a serving server's own loop dying is a crash, whatever record was logged with its traceback", () => {
  const loopTraceback = (func: string, exc: string) => [
    'Traceback (most recent call last):',
    `  File "/sgl/python/sglang/srt/managers/tokenizer_manager.py", line 900, in ${func}`,
    '    recv_obj = await self.recv_from_detokenizer.recv_pyobj()',
    exc,
  ];
  it.each([
    [
      'a prompt batch',
      [
        '[2025-11-05 12:01:00] ERROR: Error while processing prompt batch',
        ...loopTraceback('handle_loop', 'RuntimeError: detokenizer output queue closed'),
      ],
      'RuntimeError: detokenizer output queue closed',
    ],
    [
      "asyncio's task nobody awaited, the tokenizer's loop",
      [
        '[2025-11-05 12:01:00] ERROR: Task exception was never retrieved',
        "future: <Task finished name='Task-3' coro=<TokenizerManager.handle_loop() done> exception=RuntimeError('zmq socket closed')>",
        ...loopTraceback('handle_loop', 'RuntimeError: zmq socket closed'),
      ],
      'RuntimeError: zmq socket closed',
    ],
    [
      'a request named in the record, the scheduler loop in the frames',
      [
        '[2025-11-05 12:01:00] Error in request: queue closed',
        ...loopTraceback('event_loop_overlap', 'RuntimeError: queue closed'),
      ],
      'RuntimeError: queue closed',
    ],
    [
      "asyncio's task nobody awaited with a chained traceback",
      [
        '[2025-11-05 12:01:00] Task exception was never retrieved',
        "future: <Task finished name='Task-12' coro=<TokenizerManager.handle_loop() done> exception=ValueError('x')>",
        ...loopTraceback('handle_loop', 'ValueError: x'),
        '',
        'During handling of the above exception, another exception occurred:',
        '',
        ...loopTraceback('handle_loop', 'KeyError: 3'),
      ],
      'ValueError: x',
    ],
  ])('%s', (_name, tail, root) => {
    const whole = diagnoseText([...READY, ...tail, ''].join('\n'));
    expect(whole.classification.category, whole.reason).toBe('other');
    expect(whole.classification.evidence[0]?.text).toBe(root);
    expect(follow([...READY, ...tail])).toMatchObject({ category: 'other', crashed: true, root });
  });

  it("asyncio's report naming the loop's task, alone, is a failure record; a request's task is survived", () => {
    const loop =
      "future: <Task finished name='Task-3' coro=<TokenizerManager.handle_loop() done> exception=RuntimeError('zmq socket closed')>";
    expect(follow([...READY, loop]).crashed).toBe(true);
    const request =
      "future: <Task finished name='Task-9' coro=<OpenAIServingChat.handle_request() done> exception=ValueError('x')>";
    expect(follow([...READY, request]).crashed).toBe(false);
  });
});

describe("an OpenAI-compatible server's handling of one request, by its frames", () => {
  const handlerTraceback = (exc: string) => [
    'Traceback (most recent call last):',
    '  File "/x/sglang/srt/entrypoints/openai/serving_base.py", line 45, in handle_request',
    '    return await self._handle_non_streaming_request(',
    '  File "/x/sglang/srt/entrypoints/openai/serving_chat.py", line 740, in _build_chat_response',
    '    raise ValueError(',
    exc,
  ];
  it('is survived with the record that names one request logged with it (an excerpt), or the server known to serve', () => {
    const lines = [
      '[2025-11-05 12:01:00] Error in request: the reply held three messages where two were expected',
      '--',
      ...handlerTraceback('ValueError: the reply held three messages where two were expected'),
    ];
    expect(diagnoseText(`${lines.join('\n')}\n`).classification.category).toBe('none');
    expect(follow(lines)).toMatchObject({ category: 'none', crashed: false });
    expect(diagnoseText(`${lines.join('\n')}\n`, { serving: true }).classification.category).toBe('none');
    expect(diagnoseText(`${[...READY, ...lines].join('\n')}\n`).classification.category).toBe('none');
  });

  it("is a crash when the handler's module is imported (`<module>` frames), even with the serving option", () => {
    const lines = [
      'INFO 03-04 10:00:01 [__init__.py:239] Automatically detected platform cuda.',
      'Traceback (most recent call last):',
      '  File "/x/vllm/entrypoints/openai/api_server.py", line 62, in <module>',
      '    from vllm.entrypoints.openai.serving_chat import OpenAIServingChat',
      '  File "/x/vllm/entrypoints/openai/serving_chat.py", line 31, in <module>',
      '    from vllm.entrypoints.openai.tool_parsers import ToolParser, ToolParserManager',
      '  File "/x/vllm/entrypoints/openai/tool_parsers/abstract_tool_parser.py", line 10, in <module>',
      '    from transformers import PreTrainedTokenizerFast',
      "AttributeError: module 'transformers' has no attribute 'PreTrainedTokenizerFast'",
    ];
    expect(diagnoseText(`${lines.join('\n')}\n`).classification.category).not.toBe('none');
    expect(diagnoseText(`${lines.join('\n')}\n`, { serving: true }).classification.category).not.toBe('none');
    expect(follow(lines).crashed).toBe(true);
  });

  it('is a crash in a class body run at import (the frame named after the class), even with the serving option', () => {
    const lines = [
      'Traceback (most recent call last):',
      '  File "/opt/sglang/python/sglang/srt/entrypoints/http_server.py", line 58, in <module>',
      '    from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat',
      '  File "/opt/sglang/python/sglang/srt/entrypoints/openai/serving_chat.py", line 60, in <module>',
      '    class OpenAIServingChat(OpenAIServingBase):',
      '  File "/opt/sglang/python/sglang/srt/entrypoints/openai/serving_chat.py", line 75, in OpenAIServingChat',
      '    def _request_id_prefix(self) -> str | None:',
      "TypeError: unsupported operand type(s) for |: 'type' and 'type'",
    ];
    expect(diagnoseText(`${lines.join('\n')}\n`, { serving: true }).classification.category).not.toBe('none');
  });

  it("is a crash through vLLM V0's engine loop (run_engine_loop), the server serving", () => {
    const lines = [
      'Traceback (most recent call last):',
      '  File "/x/vllm/entrypoints/openai/serving_chat.py", line 254, in chat_completion_stream_generator',
      '    async for res in result_generator:',
      '  File "/x/vllm/engine/async_llm_engine.py", line 865, in run_engine_loop',
      '    result = task.result()',
      '  File "/x/vllm/worker/model_runner.py", line 1450, in execute_model',
      '    hidden_or_intermediate_states = model_executable(',
      "RuntimeError: shape '[-1, 28, 128]' is invalid for input of size 0",
    ];
    expect(diagnoseText(`${[...READY, ...lines].join('\n')}\n`).classification.category).not.toBe('none');
    expect(follow([...READY, ...lines]).crashed).toBe(true);
  });

  it("a tool-call parser's error, logged with its traceback after a request answered 200, is survived", () => {
    const lines = [
      '(APIServer pid=7) INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
      '(APIServer pid=7) ERROR 10-09 09:39:54 [my_tool_parser.py:15] Error in extracting tool call from response.',
      '(APIServer pid=7) ERROR 10-09 09:39:54 [my_tool_parser.py:15] Traceback (most recent call last):',
      '(APIServer pid=7) ERROR 10-09 09:39:54 [my_tool_parser.py:15]   File "/x/vllm/entrypoints/openai/tool_parsers/my_tool_parser.py", line 9, in extract_tool_calls',
      '(APIServer pid=7) ERROR 10-09 09:39:54 [my_tool_parser.py:15]     calls = json.loads(text)',
    ];
    expect(diagnoseText(`${lines.join('\n')}\n`).classification.category).toBe('none');
  });

  it('is a crash in its constructor (start-up), or while the milestones show the server starting', () => {
    const init = [
      'Traceback (most recent call last):',
      '  File "/x/vllm/entrypoints/openai/api_server.py", line 12, in init_app_state',
      '    state.openai_serving_chat = OpenAIServingChat(',
      '  File "/x/vllm/entrypoints/openai/serving_chat.py", line 80, in __init__',
      '    self.tool_parser = ToolParserManager.get_tool_parser(tool_parser)',
      'KeyError: the tool parser named is not registered',
    ];
    expect(diagnoseText(`${init.join('\n')}\n`).classification.category).not.toBe('none');
    const starting = ['[2025-11-05 12:00:00] Load weight begin.', ...handlerTraceback('ValueError: x')];
    expect(diagnoseText(`${starting.join('\n')}\n`).classification.category).toBe('other');
  });
});

describe('what the server dies of, whatever its HTTP front end answers after it', () => {
  const health = '[2025-11-05 12:01:05] INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK';
  const loop = [
    'Traceback (most recent call last):',
    '  File "/x/sglang/srt/managers/scheduler.py", line 2000, in run_scheduler_process',
    '    scheduler.event_loop_normal()',
    '  File "/x/sglang/srt/managers/scheduler.py", line 900, in event_loop_normal',
    '    raise RuntimeError(',
    'RuntimeError: Scheduler stopped after repeated errors',
  ];
  it('a traceback through the scheduler loop, then health checks answered 200, is a crash', () => {
    const d = diagnoseText(`${[...READY, ...loop, health, health].join('\n')}\n`).classification;
    expect([d.category, d.evidence[0]?.text]).toEqual([
      'other',
      'RuntimeError: Scheduler stopped after repeated errors',
    ]);
    expect(follow([...READY, ...loop, health, health])).toMatchObject({ category: 'other', crashed: true });
  });

  it('a server started again after it (ready again) survived it', () => {
    expect(follow([...READY, ...loop, ...READY, health]).category).toBe('none');
  });

  it('a SystemExit with a failing status, then a 500 and 200s, is a crash; with status 0 it is none', () => {
    const exit = (status: string) => [
      ...READY,
      'Traceback (most recent call last):',
      '  File "/x/engine/request.py", line 175, in wait_for_response',
      '    exit(1)',
      `SystemExit: ${status}`,
      '[2025-11-05 12:01:04] INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
      health,
    ];
    const failed = diagnoseText(`${exit('1').join('\n')}\n`).classification;
    expect([failed.category, failed.evidence[0]?.text]).toEqual(['other', 'SystemExit: 1']);
    expect(diagnoseText(`${exit('0').join('\n')}\n`).classification.category).toBe('none');
    // uvicorn logs any BaseException a request raised as `Exception in ASGI application`: it excuses no SystemExit(1)
    const asgi = exit('1').flatMap((l) =>
      l.startsWith('Traceback') ? ['[2025-11-05 12:01:03] ERROR:    Exception in ASGI application', l] : [l],
    );
    expect(diagnoseText(`${asgi.join('\n')}\n`).classification.category).toBe('other');
  });
});

describe('what a server serves past, or a shutdown cancels, is no crash', () => {
  const health =
    "[2025-11-05 12:01:00] ERROR: Health check failed. Server couldn't get a response from detokenizer for last 20 seconds.";
  it('a health check that failed, then batches served, was survived; as the last line it is a hang', () => {
    const decode =
      '[2025-11-05 12:01:30] Decode batch. #running-req: 1, #token: 100, token usage: 0.00, gen throughput (token/s): 50.0';
    const served = [...READY, health, decode];
    expect(diagnoseText([...served, ''].join('\n')).classification.category).toBe('none');
    expect(follow(served)).toMatchObject({ category: 'none', crashed: false });
    expect(follow([...READY, health])).toMatchObject({ category: 'watchdog_timeout', crashed: true });
  });

  it("a graceful shutdown's CancelledError, traceback or record, exit 0, is no crash; before the shutdown it is", () => {
    const sigterm = [
      '[2025-11-05 12:05:00] SIGTERM received. signum=15 frame=None. Draining requests and shutting down...',
      '[2025-11-05 12:05:01] Gracefully exiting... Remaining number of requests 0. Remaining requests remaining_rids=[].',
    ];
    const tb = [
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.10/asyncio/runners.py", line 44, in run',
      '    return loop.run_until_complete(main)',
      '  File "/sgl/python/sglang/srt/managers/tokenizer_manager.py", line 900, in handle_loop',
      '    recv_obj = await self.recv_from_detokenizer.recv_pyobj()',
      'asyncio.exceptions.CancelledError',
    ];
    const record = ['[2025-11-05 12:05:02] Exception in TokenizerManager: asyncio.exceptions.CancelledError'];
    const exit0 = { code: 0, signal: null };
    expect(follow([READY[2] as string, ...sigterm, ...tb], exit0)).toMatchObject({ category: 'none', crashed: false });
    expect(follow([READY[0] as string, ...sigterm, ...record], exit0)).toMatchObject({
      category: 'none',
      crashed: false,
    });
    expect(follow([READY[0] as string, ...sigterm, 'asyncio.exceptions.CancelledError'], exit0).crashed).toBe(false);
    expect(follow([READY[2] as string, ...tb], exit0)).toMatchObject({ category: 'other', crashed: true });
  });
});
