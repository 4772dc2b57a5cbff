// Failure records: a crash printed without a Python traceback. A process that fails often says so in one log record:
// vLLM-Omni's `ERROR:vllm_omni...:Stage 0 error on request ...: list index out of range`, TensorRT-LLM's `[E] Failed
// to initialize executor on rank 0: ...`, Triton's glog `E1216 ... model.py:248] "Failed to start engine"`, a Rust
// runner's `TypeError("...")` in its error text. Such a record is a terminal failure only when the server did not
// carry on after it (healthy servers log ERROR records for a failed request or a retried download, then serve on): the
// engine keeps records until the next sign of progress: a milestone or a serving line (tracebacks.ts,
// `survived`/`carriedOn`).
//
// A record is read the way a traceback's exception line is: the exception it names (`SomeError: message`, embedded
// after the record's own words or as a repr `SomeError("message")`) decides by the exception rules; without one, the
// record's message is all there is, and the crash is `other` with that line as its root.

import { parseExceptionLine, pydanticError, type RaisedException } from './exceptions.ts';
import type { LinePrefix } from './lineinfo.ts';
import { markdownRow } from './normalise.ts';
import type { Anchor } from './types.ts';

/** A level that says the record is an error, in the wrapper or prefix taken off a line (`ERROR 07-21 ...] `). */
const ERROR_LEVEL = /\b(?:ERROR|CRITICAL|FATAL)\b|^\[?E\d{4} /;
// Memory that ran out states a failure in a record whose own prefix logs it at an error level: a device allocator's
// `[rank0]:[E1204 ... compiler_depend.ts:444] NPU out of memory. NPUWorkspaceAllocator tried to allocate ...`
// (torch_npu logs it through c10's glog-style logger at its error level before the c10::Error it throws, `Exception
// raised from malloc` after it), or a level in its own text. Without one it can be a server's notice of what it does
// about it: SGLang's scheduler logs `Decode out of memory happened. #retracted_reqs: 1, ...` when it retracts requests
// to free KV cache and serves on (python/sglang/srt/managers/scheduler.py, older releases; `KV cache pool is full.
// Retract requests.` in newer ones), and a wrapper's level (one for every line a process prints) says nothing of it.
const OUT_OF_MEMORY = /\b[Oo]ut of memory\b/;
const GLOG_ERROR_PREFIX = /\[E\d{4} [^\]]{0,200}\] ?$/;

// The level where no wrapper took it off, in the formats servers and their launchers use:
// - a bare level word: Rust's tracing (`ERROR sglang_router: ...`, after a timestamp wrapper), `[ERROR] ...`, `FATAL: `;
// - glog without brackets (Triton, gRPC): `E1216 02:12:49.624646 179 model.py:248] ` (E = error, F = fatal; glog's
//   format is documented in its README: `Lyyyymmdd hh:mm:ss.uuuuuu threadid file:line] msg`, the year left out by
//   default);
// - a bracketed level tag after other bracketed fields: TensorRT-LLM's `[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [E] `,
//   `[TensorRT-LLM][ERROR] `.
const BODY_LEVEL =
  /^(?:(?:\[(?:ERROR|CRITICAL|FATAL)\]|ERROR|CRITICAL|FATAL)(?=[: ])|[EF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\s\]]{1,80}:\d+\] |(?:\[[^\]]{1,40}\] ?){1,4}\[(?:E|ERROR|F|FATAL)\] )/;
// What a failure record says in words: something failed, errored, aborted, died, crashed or could not be done. The
// words decide, not the level: SGLang's log format has none (`[%(asctime)s TP0] %(message)s`), and a wrapper can put
// one level on every line of a process (vLLM's logger prints a whole traceback at ERROR, a container runtime marks all
// of stderr ERROR), so a level would make the answer depend on the wrapper. Read in lower case or capitalised
// (`Failed to ...`); the pre-filter lets through every line with one (RECORD_ANCHORS).
// Error-code constants say it too, by the convention C libraries name them (`MPI_ERR_OTHER`, `NIXL_ERR_BACKEND`,
// `CUDA_ERROR_OUT_OF_MEMORY`, ROCm's `HSA_STATUS_ERROR_EXCEPTION`), and so does a wait that timed out.
// A word that is one part of a dotted name is a name, not a statement: Python's logging prints the logger's name
// (`%(name)s`), and uvicorn logs its server's own messages through the logger `uvicorn.error` (uvicorn/config.py
// LOGGING_CONFIG: `Uvicorn running on ...`, `Started server process` at INFO), a module path (`x.errors`) the same.
const FAILURE_WORDS =
  /\b[A-Z][A-Z0-9_]*_ERR(?:OR)?_[A-Z0-9_]+\b|(?<!\w\.)\b(?:[Tt]imed out|[Ff]ail(?:s|ed|ure)|[Ee]rrors?|[Ee]rrored|[Ee]xceptions?|[Ff]atal|[Aa]bort(?:ed|ing)?|[Cc]rash(?:ed)?|[Kk]illed|[Cc]annot|[Cc]an not|[Cc]ould not|[Uu]nable to)\b(?!\.\w)/;
/**
 * The literal text of FAILURE_WORDS and OUT_OF_MEMORY, lower case: the pre-filter adds each capitalised too. Each is five bytes or
 * more: the byte pre-filter skips ahead by as much as its shortest literal allows (bytegate.ts).
 */
const FAILURE_ANCHORS = [
  'fails',
  'failed',
  'failure',
  'error',
  'exception',
  'fatal',
  'abort',
  'crash',
  'killed',
  'cannot',
  'can not',
  'could not',
  'unable to',
  'timed out',
  'out of memory',
];
/** Literals of FAILURE_WORDS' error-code form and of NCCL's WARN, as they are written. */
const FAILURE_CODE_ANCHORS = ['_ERR', 'NCCL WARN'];

/**
 * What the pre-filter must let through for this reader: every word FAILURE_WORDS reads, in lower case or
 * capitalised, and the error-code and NCCL forms. Case matters, so a wrapper's level (`ERROR`) lets no line through
 * that its payload would not.
 */
export const RECORD_ANCHORS: Anchor[] = [
  ...FAILURE_ANCHORS.flatMap((w) => [w, w.charAt(0).toUpperCase() + w.slice(1)]),
  ...FAILURE_CODE_ANCHORS,
].map((text) => ({ text, ci: false }));
// Level words are the record's form, not what it says: `| ERROR | stderr | Loading ...` says nothing failed. Nor does
// the name of a stream: a launcher's `Shard complete standard error output:` introduces what its child printed there.
const LEVEL_WORDS = /\b(?:ERROR|CRITICAL|FATAL|WARNING|WARN|INFO|DEBUG)\b|\b[Ss]tandard error\b/g;
// A record that says the program went on after the error states it survived it: it ignored or skipped something, will
// retry, fell back to another way (`Ignore import error when loading sglang.srt.models.x`, SGLang's model registry,
// logged as a warning; `Exception ignored in: ...`, Python's report of an error in a finaliser).
// A retry or resume announced after a failure says the same: `Trying to resume download...` after huggingface_hub's
// `Error while downloading ...: Read timed out.`.
// Words, not identifiers: `func=resume` or `skip_layers` names code (a function, a key), not what the program did.
// A default it goes on with says the same: SGLang's get_ip logs `Failed to get the IP address, using 0.0.0.0 by
// default.` (python/sglang/srt/utils.py) and serves on that address.
const SURVIVED =
  /(?<![=_./:-])\b(?:ignor(?:e|es|ed|ing)|skip(?:s|ped|ping)?|retry(?:ing)?|retries|resum(?:e|es|ed|ing)|fall(?:s|ing)? ?back|fell back|falling back)\b(?![_(=.]\w)|\busing [^\s,;]{1,60} by default\b|\bdefaulting to\b/i;
const INTRODUCES = /[:：]\s*$/;
/** A record at warning level or below is never a failure (`WARNING ... [core.py] Failed to ...` is survivable). */
const MILD_LEVEL = /\b(?:WARNING|WARN|INFO|DEBUG)\b|^\[?[IW]\d{4} /;
/**
 * A warning's (or milder) level at the start of its own text: `WARNING: ...`, `[WARN] ...`, glog's bracketed `[W1203
 * ...]`, a bracketed level tag after other bracketed fields (TensorRT-LLM's `[TensorRT-LLM][WARNING] `, `[TRT-LLM]
 * [RANK 0] [I] `), Rust's tracing (tracing-subscriber's fmt: `2025-10-07 23:31:33 DEBUG target::path: ...`, the time
 * stamp in the format SGLang's router sets).
 */
const BODY_WARNING =
  /^(?:\[[WI] [\w.-]{1,80}:\d{1,6}\] |\[?(?:WARNING|WARN)\]?[: ]|(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d{1,9})?Z? {1,4})?(?:TRACE|DEBUG|INFO|WARN) {1,4}[\w:]{1,200}: |\[?[Ww]arn(?:ing)?\]?:|\[W\d{4} |(?:\[[^\]]{1,40}\] ?){1,4}\[(?:W|WARN|WARNING|I|INFO|D|DEBUG|V|VERBOSE)\] ?)/;
// Python's warnings module prints `{filename}:{lineno}: {category}: {message}` (warnings.formatwarning), the category
// a Warning subclass (`UserWarning`, `FutureWarning`): `/x/torchvision/io/image.py:13: UserWarning: Failed to load
// image Python extension` is a warning whatever its message says.
// The category and message alone (`UserWarning: cannot import flash_attn, ...`) are the same warning, its place cut off.
const PYTHON_WARNING = /^(?:[^\s:]{1,300}:\d{1,7}: )?(?:[A-Za-z_]\w{0,60}\.){0,6}[A-Za-z_]\w{0,60}?[Ww]arning: /;
// absl's log lines printed before the program called absl::InitializeLog() carry no date and the time as seconds since
// the epoch (`E0000 00:00:1733486123.456789  123 cuda_fft.cc:477] `; absl's own WARNING line says they go to stderr
// before it): a library logging while it is loaded (TensorFlow's and JAX's plugin registrations at import), before its
// program set logging up and went on. An error it logs then is no failure of the program (a fatal one aborts, which
// the signatures read).
const ABSL_BEFORE_INIT = /^E0000 00:00:\d{6,}\.\d+ +\d+ [^\s\]]{1,80}:\d+\] /;
// A failure a sentence predicts, not one it reports: transformers' tokenizer warns `Token indices sequence length is
// longer than the specified maximum sequence length for this model (8318 > 8192). Running this sequence through the
// model will result in indexing errors` (tokenization_utils_base.py, _eventual_warn_about_too_long_sequence, at
// WARNING; a wrapper that prints no level leaves only the words). What will, may or can cause an error is a
// warning of one; taken out of the text before its words are read, to the end of its sentence.
const PREDICTED =
  /\b(?:will|would|may|might|can|could)(?: (?:likely|probably|possibly|eventually|also|then))? (?:result in|cause|lead to|produce|trigger)\b[^.;!?]*/g;
// A count of failures that is zero states none: a benchmark's `Failed requests:   0`, `Errors: 0`, SGLang's metrics
// `#failed-req: 0`. Taken out of the text before its words are read.
const ZERO_COUNT =
  /#?\b[\w-]{0,40}?(?:[Ff]ail(?:s|ed|ures?)?|[Ee]rrors?|[Ee]xceptions?|[Aa]bort(?:s|ed)?|[Cc]rash(?:es|ed)?|[Tt]imeouts?)[\w-]{0,40}(?: [\w-]{1,40}){0,3}:\s{0,80}0(?![\d.])/g;
// A failure that concerns one request: its id (`req`, `rid`), the word itself (`Abort request 9f1c2e`, `Failed to
// parse request body`, `Request 12 timed out`), a client that went away. A serving process survives it by design (it
// answers that request with an error and serves on), so once the server serves it is no failure of the server.
// `requests.` is the HTTP library's module (`requests.exceptions.ConnectionError`), not a request.
// A request's own parameters and prompt are that request's: SGLang's SamplingParams.verify() raises a ValueError for
// a request's bad sampling parameters, which its HTTP server logs (`[http_server] Error: {e}`,
// python/sglang/srt/entrypoints/http_server.py) and answers with an error; vLLM's OpenAI server logs `Error in
// preprocessing prompt inputs` and answers 400 (vllm/entrypoints/openai/serving_chat.py). A chat completion or
// completion is one call of the OpenAI API an engine serves. A prompt is one request's only where the words say so
// (`prompt inputs`, `the prompt is too long`): `Error while processing prompt batch` is the server's own loop, which
// handles every request's prompt.
const ONE_REQUEST =
  /\b(?:[Rr]equests?|REQUEST|req|rid)\b(?!\.\w)|\b[Cc]lient (?:disconnected|closed|went away)\b|\b[Ss]ampling[ _]?[Pp]arams?\b|\b[Ss]ampling parameters?\b|\b[Pp]rompt inputs?\b|\b(?:[Tt]he|[Tt]his|[Yy]our|[Ii]ts) prompt\b|\b[Pp]rompt (?:is|was) too\b|\b[Cc]hat[ _]?[Cc]ompletions?\b|\b[Cc]ompletions? (?:request|stream|generator)\b/;
// An error a server answers with a 4xx status is the client's: openai-python's classes for them (BadRequestError 400,
// AuthenticationError 401, PermissionDeniedError 403, NotFoundError 404, ConflictError 409, UnprocessableEntityError
// 422, RateLimitError 429: openai/_exceptions.py), which SGLang's and vLLM's OpenAI servers also name their error
// responses after (`err_type="BadRequest"`), and FastAPI's RequestValidationError (a body that fails its schema, 422).
const CLIENT_ERROR =
  /\b(?:BadRequest|Authentication|PermissionDenied|NotFound|Conflict|UnprocessableEntity|RateLimit|RequestValidation)Error\b|\bBadRequest\b/;
// uvicorn's report that an application raised while it handled one request (uvicorn/protocols/http/h11_impl.py and
// httptools_impl.py, run_asgi: `Exception in ASGI application`, logged with the traceback, then a 500 for that
// request): the server serves on.
const REQUEST_HANDLER = /\bException in ASGI application\b/;
// asyncio's own reports (CPython Lib/asyncio/futures.py, base_events.py default_exception_handler): `Task exception
// was never retrieved` (a task failed and nobody awaited it) and `Exception in callback ...`, each followed by the
// task's or handle's repr (`future: <Task finished ...>`, `handle: <Handle ...>`); the event loop runs on after them.
// A CancelledError is a task that was cancelled (a request's task when its client went away, the loop's tasks at
// shutdown), not one that failed.
const ASYNC_TASK =
  /\b(?:Task|Future) exception was never retrieved\b|\bException in callback\b|^(?:future|handle): <(?:Task|Future|Handle|TimerHandle)\b|\bCancelledError\b/;
// A process that reports how many processes it killed is cleaning up its own tree (a launcher's or a server's
// shutdown killing the children psutil's Process.children() lists, as SGLang's kill_process_tree in
// python/sglang/srt/utils/common.py kills them; the releases read log no count, the wrappers that log one say
// `Killed 3 child processes`); the kernel's `Killed` and its OOM killer's `Killed process N` name the process that
// was killed, not a count. Taken out before the words are read.
const OWN_KILL = /\b[Kk]illed \d{1,6} (?:child |worker |sub)?process(?:es|\(es\))?\b/g;

// An exception named inside a record's text: after the record's own words (`Failed to initialize Python stub:
// TypeError: ...`, `with exception KVTransferError(bootstrap_room=1): Failed ...`) or as its repr (`TypeError("...")`,
// how Rust's pyo3 shows a Python exception). Names are read as parseExceptionLine reads them; every quantifier is
// bounded so a long line is read in one pass.
const EMBEDDED = /(?<![\w.])((?:[A-Za-z_]\w{0,60}\.){0,6}[A-Z]\w{0,60}?(?:Error|Exception))(?=[:(])/g;
const REPR = /^\((["'])(.{0,2000}?)\1\)/;
const CALL_ARGS = /^\([^()]{0,400}\)/;

/**
 * The exception a record names: `Type: message` (the record's text after it), `Type(args): message`, or a repr
 * `Type("message")`; null when it names none.
 */
export function embeddedException(body: string): RaisedException | null {
  const pyd = pydanticError(body);
  if (pyd) return pyd;
  EMBEDDED.lastIndex = 0;
  for (let m = EMBEDDED.exec(body); m; m = EMBEDDED.exec(body)) {
    const name = m[1] ?? '';
    const rest = body.slice(m.index + m[0].length);
    const repr = REPR.exec(rest);
    if (repr) return { ...(parseExceptionLine(name) as RaisedException), message: repr[2] ?? '' };
    const args = CALL_ARGS.exec(rest);
    const after = args ? rest.slice(args[0].length) : rest;
    if (!after.startsWith(': ')) continue;
    const raised = parseExceptionLine(`${name}: ${after.slice(2)}`);
    if (raised) return raised;
  }
  return null;
}

/** The front of a line (wrappers and prefix) that readPrefix took off, for the level it shows. */
function frontOf(prefix: LinePrefix, text: string): string {
  const body = prefix.body.trim();
  const at = body === '' ? -1 : text.indexOf(body.slice(0, 40));
  return at > 0 ? text.slice(0, at) : '';
}

/**
 * The level nearest the payload in a front (`ERROR:root:INFO 11-05 ...`: INFO): wrappers stack outside the record, so
 * the innermost level is the record's own.
 */
function ownLevel(front: string): string {
  let last = '';
  for (const m of front.matchAll(ANY_LEVEL)) last = m[0];
  return last;
}
const ANY_LEVEL = /\b(?:ERROR|CRITICAL|FATAL|WARNING|WARN|INFO|DEBUG)\b|^\[?[EFIW]\d{4} /g;

/** True when the line was logged at an error level (in its wrapper, its prefix or its own first words). */
export function loggedAtErrorLevel(prefix: LinePrefix, text: string): boolean {
  const front = frontOf(prefix, text);
  if (ERROR_LEVEL.test(front)) return true;
  return BODY_LEVEL.test(prefix.body.trimStart());
}

// PyTorch's advice under every CUDA error it raises (c10/cuda/CUDAException.cpp, c10_cuda_check_implementation:
// `CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be
// incorrect.`, then how to debug it): more of the error above it, never a failure of its own.
const CUDA_ERROR_ADVICE = /^CUDA kernel errors might be asynchronously reported\b/;

/**
 * The failure a record states, read as an exception (type and message; an untyped record has an empty type), or
 * null when the line is no failure record: it names an exception in its text or says in words that something failed,
 * and it is not a warning (or milder) nor a report of an error it went on from (unless `tracebackFollows`: the
 * traceback printed right after it).
 */
export function failureRecord(prefix: LinePrefix, text: string, tracebackFollows = false): RaisedException | null {
  const body = prefix.body.trim();
  if (
    body === '' ||
    warning(body) ||
    ABSL_BEFORE_INIT.test(body) ||
    CUDA_ERROR_ADVICE.test(body) ||
    markdownRow(body)
  ) {
    return null;
  }
  // a traceback right after a record that says it went on says it did not
  if (!tracebackFollows && SURVIVED.test(body)) return null;
  // A line of prose that ends in a colon introduces the lines after it (a reporter's `I get this error:`, `报错信息：`,
  // a launcher's `Root Cause (first observed failure):`): they state the failure, and are read; it states none itself.
  // A log record is the program's own statement, whatever it puts after it: one at an error level (`ERROR: Failed to
  // load the model, the server cannot start:` then the reason on the next line) states the failure.
  if (
    INTRODUCES.test(body) &&
    !prefix.record &&
    !loggedAtErrorLevel(prefix, text) &&
    embeddedException(body) === null
  ) {
    return null;
  }
  if (MILD_LEVEL.test(ownLevel(frontOf(prefix, text)))) return null;
  const named = embeddedException(body);
  if (named) return named;
  const words = body.replace(LEVEL_WORDS, '').replace(ZERO_COUNT, '').replace(OWN_KILL, '').replace(PREDICTED, '');
  const ownError = () => GLOG_ERROR_PREFIX.test(frontOf(prefix, text)) || ownErrorLevel(body);
  if (!FAILURE_WORDS.test(words) && !(OUT_OF_MEMORY.test(words) && ownError())) return null;
  return { type: '', short: '', message: body };
}

// NCCL's debug lines name their level after the `host:pid:tid [dev]` they start with (src/debug.cc, ncclDebugLog:
// `NCCL INFO ...`, `NCCL WARN ...`): an INFO line is a notice NCCL goes on from (`NCCL INFO NET/Plugin: Failed to
// find ncclNetPlugin_v8 symbol.`), except its return trace (NCCL_RETURN_TRACE), which reads with the WARN before it.
const NCCL_INFO = /^[\w.-]{1,64}:\d+:\d+ \[\d+\] NCCL INFO\b(?! [\w./-]{1,200}\.(?:cc|c|cu|h):\d)/;

// Go's structured loggers write the level as a key (log/slog's TextHandler: `time=2025-01-01T10:00:00.000Z
// level=WARN source=gpu.go:61 msg="..." error="..."`, Ollama's format; logrus's text formatter: `time="..."
// level=warning msg=...`): a record at a warning level or below is a notice, whatever its `error=` value says.
const LOGFMT_MILD = /^(?:time=(?:"[^"\n]{0,60}"|\S{1,60}) )?level=(?:WARN|WARNING|INFO|DEBUG|TRACE)\b/i;

/**
 * A warning's text: a warning level at its start (c10's older logger writes it `[W socket.cpp:464] `,
 * c10/util/Logging.cpp), Python's warnings format, a Go logger's mild `level=`, or an NCCL INFO line.
 */
export function warning(body: string): boolean {
  return BODY_WARNING.test(body) || PYTHON_WARNING.test(body) || NCCL_INFO.test(body) || LOGFMT_MILD.test(body);
}

/** True when a line was logged at warning level or below (in its own text, or in the wrapper or prefix before it). */
export function mildRecord(prefix: LinePrefix, text: string): boolean {
  const body = prefix.body.trim();
  return body !== '' && (warning(body) || MILD_LEVEL.test(ownLevel(frontOf(prefix, text))));
}

// A record's message hard-wrapped onto the next line (a terminal's or an issue's width, a log viewer's): the line
// before runs on past the width without ending its sentence, and this one goes on in lower case with nothing of its own
// in front (no wrapper, prefix or level). It is more of that record, at that record's level.
const WRAP_WIDTH = 60;
const SENTENCE_END = /[.!?:;)\]}>"'`]\s*$/;

// A line longer than this is no screen line that wrapped: every reader (line by line, the file scan's line before)
// judges the whole line before against it, so they agree.
export const WRAP_MAX_LINE = 4096;
// Where the wrapped sentence ends in the next line (`errors. See https://...`): what follows is that line's own.
const FIRST_SENTENCE = /^.*?[.!?;](?:\s|$)/;
// A line that opens with its own label (`error: ...`, `fatal: ...`): a record of its own, whatever its case.
const OWN_LABEL = /^[a-z][\w-]{0,30}: /;

/**
 * True when `body` (its line with nothing in front) continues the message of `before`, a line hard-wrapped: and states
 * no failure of its own (no label of its own that says one, and no failure word after the sentence it finishes).
 */
export function wrappedOnto(before: string, body: string): boolean {
  if (before.trimEnd().length < WRAP_WIDTH || SENTENCE_END.test(before) || !/^[a-z]/.test(body)) return false;
  const own = OWN_LABEL.test(body) ? body : body.replace(FIRST_SENTENCE, '');
  return !FAILURE_WORDS.test(own);
}

// The serving processes' own loops, which every request goes through: SGLang's TokenizerManager.handle_loop
// (python/sglang/srt/managers/tokenizer_manager.py), the scheduler's event_loop_normal/_overlap/_pp and its process
// entry run_scheduler_process (managers/scheduler.py), the detokenizer's event_loop and run_detokenizer_process
// (managers/detokenizer_manager.py), the data-parallel controller's run_data_parallel_controller_process; vLLM's
// engine core's busy loop, EngineCoreProc.run_busy_loop and its process entry run_engine_core (vllm/v1/engine/core.py);
// vLLM V0's AsyncLLMEngine.run_engine_loop (vllm/engine/async_llm_engine.py), the background task that steps the
// engine for every request (its done-callback _log_task_completion raises AsyncEngineDeadError when it ends), and
// V0's MQLLMEngineClient.run_heartbeat_loop (vllm/engine/multiprocessing/client.py), the API server's watch on its
// engine process: an exception there (`RuntimeError: Engine loop has died`, `Engine process (pid N) died`) is the
// client marking itself errored (_set_errored), after which every request fails and the launcher stops the server.
// A traceback through one of them is that loop dying, and the server with it, whatever record was logged before it.
const SERVER_LOOPS = new Set([
  'handle_loop',
  'event_loop',
  'event_loop_normal',
  'event_loop_overlap',
  'event_loop_pp',
  'run_scheduler_process',
  'run_detokenizer_process',
  'run_data_parallel_controller_process',
  'run_busy_loop',
  'run_engine_core',
  'run_engine_loop',
  'run_heartbeat_loop',
]);
/** A call of one of SERVER_LOOPS in a record's text (asyncio's `coro=<TokenizerManager.handle_loop() running ...>`). */
const SERVER_LOOP_CALL = new RegExp(`(?<![\\w])(?:${[...SERVER_LOOPS].join('|')})\\(`);

/**
 * True when a record states a failure a serving process survives by design: one request's (ONE_REQUEST), a client's
 * answered with a 4xx (CLIENT_ERROR), a request handler's answered with a 500 (REQUEST_HANDLER), or an asyncio task's
 * (ASYNC_TASK), which the event loop runs on after.
 */
export function servingSurvives(body: string): boolean {
  if (SERVER_LOOP_CALL.test(body)) return false;
  return ONE_REQUEST.test(body) || CLIENT_ERROR.test(body) || REQUEST_HANDLER.test(body) || ASYNC_TASK.test(body);
}

/**
 * True when a record logged with a traceback says the traceback is one request's, which a serving process answers
 * with an error and serves on after: it names a request or a client (ONE_REQUEST), a 4xx answer (CLIENT_ERROR), or is
 * uvicorn's report of one request's handler (REQUEST_HANDLER). asyncio's own reports say only that some task failed
 * (`Task exception was never retrieved`): the task can be the server's own loop, so its traceback decides.
 */
export function excusesTraceback(body: string): boolean {
  if (SERVER_LOOP_CALL.test(body)) return false;
  return ONE_REQUEST.test(body) || CLIENT_ERROR.test(body) || REQUEST_HANDLER.test(body);
}

/** True when the text names an error the server answered with a 4xx, the client's (CLIENT_ERROR). */
export function clientError(body: string): boolean {
  return CLIENT_ERROR.test(body);
}

// The OpenAI-compatible servers handle each request in a function that answers that request's failure and serves on:
// SGLang's OpenAIServingBase.handle_request catches any Exception, logs `Error in request: {e}` and answers 500
// (python/sglang/srt/entrypoints/openai/serving_base.py), and every endpoint's handler runs under it (serving_chat.py,
// serving_completions.py, ...); vLLM's handlers (vllm/entrypoints/openai/serving_chat.py, chat_completion/serving.py)
// answer an error response, and its tool-call parsers catch what fails in parsing one response, log `Error in
// extracting tool call from response.` with its traceback and return the text as content
// (entrypoints/openai/tool_parsers/hermes_tool_parser.py, extract_tool_calls). Their constructors run once at start-up
// (OpenAIServingChat.__init__ loads the chat template and the tool parser): a failure there is the server's. So does
// the import of their modules: a `<module>` frame is the module's top level run while it is imported, and a frame
// named after a class (PEP 8's CapWords; Python names a class body's frame after its class) is that class's body run
// as its module is imported (`class OpenAIServingChat(...)` then a `str | None` annotation failing on Python 3.9).
const REQUEST_HANDLER_FILE = /entrypoints[/\\]openai[/\\](?:serving\w*\.py$|\w+[/\\]serving\.py$|tool_parsers[/\\])/;
const CONSTRUCTOR = /^(?:__init__|__new__|_?init(?:_\w*)?)$/;
const IMPORT_TIME = /^(?:<module>|[A-Z][A-Za-z0-9]*)$/;

/** True when a frame is in an OpenAI-compatible server's handling of one request (REQUEST_HANDLER_FILE). */
export function requestHandler(file: string, func: string): boolean {
  return REQUEST_HANDLER_FILE.test(file) && !CONSTRUCTOR.test(func) && !IMPORT_TIME.test(func);
}

/** True when a frame's function is one of the serving processes' own loops (SERVER_LOOPS). */
export function serverLoop(func: string): boolean {
  return SERVER_LOOPS.has(func);
}

// NCCL's check macros print the error's way back up the calls, one `NCCL INFO file.cc:line -> code` line per frame
// (src/include/checks.h, NCCLCHECK): part of the failure the WARN before them reported, not a sign it went on. Its
// other INFO lines never start with a source file (`NCCL INFO Channel 00/02 : 0 1`), so the file and line are enough
// (an excerpt can cut the line after them).
const NCCL_RETURN_TRACE = /\bNCCL INFO [\w./-]{1,200}\.(?:cc|c|cu|h):\d+/;

// An item of a list (`2. Fallback pattern: /x/common_ops.* - found files: []`) is a detail of the record that
// introduced the list: sgl-kernel's loader lists the `Attempted locations:` it tried under the failure it raises
// (sgl_kernel/load_utils.py), and a fallback it tried is no fallback it went on with.
const LIST_ITEM = /^\s*(?:\d{1,2}[.)]|[-*\u2022]) /;

/** True when a line says the program goes on after an error (it ignores, skips, retries or falls back). */
export function goesOn(body: string): boolean {
  return !LIST_ITEM.test(body) && SURVIVED.test(body);
}

// A failure logged at DEBUG or TRACE level is one the program expects and handles as a matter of course (the levels of
// diagnostic detail; nothing fatal is logged there): SGLang's router polls each worker's health while it waits for
// them to come up and logs `DEBUG ...: Worker grpc://... health check failed: Connection failed ...` for every try
// that fails (after the gRPC client's own ERROR that it cannot connect yet), then tries again. The failures before it
// are handled, as a retry announced after them says.
const ROUTINE_LEVEL = /\b(?:DEBUG|TRACE)\b/;
const BODY_ROUTINE = /^(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d{1,9})?Z? {1,4})?(?:TRACE|DEBUG) {1,4}[\w:]{1,200}: /;

/** True when a line states a failure at DEBUG or TRACE level: one the program handles routinely (ROUTINE_LEVEL). */
export function routineFailure(prefix: LinePrefix, text: string): boolean {
  const body = prefix.body.trim();
  const routine = BODY_ROUTINE.test(body) || ROUTINE_LEVEL.test(ownLevel(frontOf(prefix, text)));
  return routine && FAILURE_WORDS.test(body.replace(LEVEL_WORDS, ''));
}

// What a routine failure is about: the addresses it names (`grpc://localhost:20000`, `10.0.0.2:30000`).
const TARGET = /\b[a-z][a-z0-9+.-]{0,20}:\/\/[^\s/:,]{1,200}(?::\d{1,5})?|\b\d{1,3}(?:\.\d{1,3}){3}:\d{1,5}\b/g;

/** True when the failure record `text` names an address that the routine failure `routine` names too. */
export function sameTarget(text: string, routine: string): boolean {
  const named = new Set(routine.match(TARGET) ?? []);
  return named.size > 0 && (text.match(TARGET) ?? []).some((t) => named.has(t));
}

/** A line of NCCL's error-return trace. */
export function ncclReturnTrace(body: string): boolean {
  return NCCL_RETURN_TRACE.test(body);
}

// NCCL's `WARN` (src/include/debug.h): its check macros print one where a call it made failed, then the return trace
// above. A WARN alone can be a setting it complains about and goes on from (`NCCL_SOCKET_IFNAME set to eth9 but no
// interface matches`); a WARN whose error NCCL then returns up its calls is a failure.
const NCCL_WARN = /\bNCCL WARN\b/;

/** An NCCL WARN line: a failure record once NCCL's return trace follows it (continuesFailure). */
export function ncclWarn(body: string): boolean {
  return NCCL_WARN.test(body);
}

/** True when the record's level is in its own text (not in a wrapper that may mark every line so). */
export function ownErrorLevel(body: string): boolean {
  return BODY_LEVEL.test(body.trimStart());
}
