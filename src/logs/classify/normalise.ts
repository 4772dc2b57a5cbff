// Layer 1 of the classifier: take off what other programs put in front of a line, so the rest reads the payload as
// SGLang or Python wrote it. Real logs arrive through docker compose, Ray, vLLM's logger, Python's logging module,
// Kubernetes (CRI) and journald timestamps, mpirun/srun/torchrun rank labels, and Markdown quoting when pasted into
// an issue; several can stack (`sglang-1  | (SGLangEngine pid=7) ...`). Only a line's start is touched: the payload,
// its indentation included (traceback frames are indented), is kept exactly. ANSI escapes and `\r` progress bars are
// taken off earlier, when bytes become lines (../lines.ts).

const WRAPPERS: RegExp[] = [
  // Markdown / e-mail quoting: `> `, `>> `, `>  > ` (a quoted blank line run into the next); inline code around a
  // pasted line: `` `ValueError: ...` ``
  /^>(?:\s*>)*\s?/,
  /^`{1,3}(?=\S)/,
  // Kubernetes CRI log lines and `docker logs -t`: `2025-11-05T12:19:32.123456789Z stdout F `
  /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? (?:(?:stdout|stderr) [FP] )?/,
  // CI runners that stamp each line with an ISO time in brackets (Jenkins' timestamper, buildkite): `[2025-11-06T02:10:00.702Z] `
  /^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\] /,
  // Kubernetes: `kubectl logs --prefix` puts `[pod/<pod>/<container>] ` in front (kubernetes/kubernetes#76471); stern's
  // default template, `<pod> <container> `, for a Deployment's pod: its name ends in the ReplicaSet's pod-template
  // hash and a 5-character suffix, both in the alphabet Kubernetes generates names from (apimachinery
  // util/rand.SafeEncodeString, `bcdfghjklmnpqrstvwxz2456789`), so it is told apart from a word of a message
  /^\[pod\/[\w.-]{1,253}\/[\w.-]{1,63}\] ?/,
  /^[a-z0-9](?:[a-z0-9-]{0,200}[a-z0-9])?-[bcdfghjklmnpqrstvwxz2456789]{5,10}-[bcdfghjklmnpqrstvwxz2456789]{5} [a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])? /,
  // docker compose v1/v2: `sglang-1  | `, `vllm_server_1 | `; the same column with the name cut off: `  | `
  /^[A-Za-z][\w.-]* +\| ?/,
  /^ +\| /,
  // Ray and vLLM worker processes: `(RayWorkerWrapper pid=123) `, `(EngineCore_DP0 pid=1) `, `(pid=5, ip=10.0.0.2) `,
  // vLLM's multiprocessing workers with their rank: `(VllmWorker rank=3 pid=1090) `; a paste can indent the whole
  // block, label and all (` (SGLangEngine pid=12589)   File ...`): the blanks before the label are no indentation of
  // the line it labels (that is after the label), so they go with it
  /^ {0,8}\((?:[A-Za-z_][\w-]* )?(?:[a-z_]+=\w+ )*pid=\d+(?:, ip=[^)]*)?\) ?/,
  /^\((?:raylet|autoscaler|monitor|dashboard)[^)]*\) ?/,
  // vLLM's logger: `ERROR 11-05 12:19:32 [core.py:708] ` (V1), `INFO 08-19 07:51:03 model_runner.py:732] ` (V0);
  // servers built on it print the year too: `ERROR 2025-07-21 14:34:24.934 factory.py:62] `; as with the process
  // label above, blanks before it are a paste's indentation of the whole block (a launcher that indents its workers'
  // output), not the message's: the record's level is behind them
  /^ {0,8}(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./-]+:\d+\] ?/,
  // Python logging's default format: `ERROR:root:`, `WARNING:sglang.srt.server:`
  /^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:/,
  // Common logging formats with a date: `2025-01-05 12:19:32,123 - name - ERROR - `, loguru `... | ERROR | mod:fn:12 - `;
  // a program's tag in front of the first (torchtitan's `[titan] %(asctime)s - %(name)s - %(levelname)s - `,
  // torchtitan/tools/logging.py)
  /^(?:\[[\w.-]{1,40}\] )?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? - (?:[\w.]+ - )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - /,
  /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? \| (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) +\| [\w.:<>-]+ - /,
  // Shell and process wrappers that put a time stamp and a source before each line: `[ts] [/bin/sh@<0,0>]: `,
  // `[ts] ERROR: `; uvicorn pads its level to align the messages (`ERROR:    Exception in ASGI application`,
  // uvicorn/logging.py: the level, a colon and spaces up to 8 characters, then the format's space): the padding goes
  // with it, or the message would read as indented
  /^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[^\]]*\] \[[^\]]*\]: ?/,
  /^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[^\]]*\] (?:ERROR|WARNING|INFO): {1,8}/,
  // a format that brackets each field after the time, the level first (`[%(asctime)s] [%(levelname)s]
  // [%(threadName)s] [%(name)s] >>> %(message)s`): the level and the fields after it, with the format's marker
  /^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[^\]]*\] \[(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\](?: \[[\w.:-]{1,60}\]){1,3}(?: >>>)? ?/,
  // journald / syslog: `Dec 01 12:00:00 gpu-box python3[1234]: `
  /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]+ [\w./@-]+(?:\[\d+\])?: /,
  // Markdown bold around a pasted line: `**ImportError: ...**`
  /^\*\*(?=\S)/,
  // pytest's failure report puts `E` and spaces in front of the exception lines: `E       RuntimeError: ...`
  /^E {3,}(?=\S)/,
  // the test runners of accelerate and transformers stream a child's output with its stream's name in front,
  // `print(label, line)` (accelerate/test_utils/testing.py and transformers/testing_utils.py, tee in
  // _stream_subprocess): `stderr:     raise ChildFailedError(`; print's separator is the label's, the indentation after
  // it the line's
  /^std(?:out|err): /,
  // mpirun `[1,0]<stderr>:`, srun --label `3: ` (in front of indented frame lines too)
  /^\[\d+,\d+\]<std(?:out|err)>:/,
  /^\d{1,4}: /,
];

// Every wrapper at once: most lines have none, and one failed match says so instead of one per wrapper (the
// classifier unwraps each line it reads). When it matches, the wrappers are taken off one by one as below. (A
// wrapper with flags could not join it: then every line takes the slow way.)
const ANY_WRAPPER = WRAPPERS.every((re) => re.flags === '')
  ? new RegExp(WRAPPERS.map((re) => `(?:${re.source})`).join('|'))
  : /(?:)/;

// torch.distributed `[rank6]:`, torchrun's `--tee` labels `[default0]:`; people who paste one rank's lines often
// put a placeholder for its number (`[rankx]:`, `[rankN]:`): still the label, naming no rank. Not a wrapper: the
// reader takes the rank from it (lineinfo.ts).
export const TORCH_RANK = /^\[(?:rank|default)(\d+|[xXnN*?])\]: ?/;

// What other programs put after a line: Ray's `[repeated 2x across cluster]` (its log deduplication), the closing
// `**` of Markdown bold.
const SUFFIXES = / \[repeated \d+x across cluster\]\s*$|(?<=\S)\*\*\s*$/;

/** The line without any wrapper in front of it (repeatedly: wrappers stack) or the few that follow it. */
export function stripWrappers(line: string): string {
  // the suffixes end in `]` or `*`: most lines end otherwise, and skip the search
  const end = line.trimEnd().slice(-1);
  const bare = end === ']' || end === '*' ? line.replace(SUFFIXES, '') : line;
  if (!ANY_WRAPPER.test(bare)) return bare;
  let s = bare;
  for (let changed = true; changed; ) {
    changed = false;
    for (const re of WRAPPERS) {
      const m = re.exec(s);
      if (m && m[0].length > 0) {
        s = s.slice(m[0].length);
        changed = true;
      }
    }
  }
  return s;
}

// A log whose line breaks were lost (an issue's formatting joined its lines with a space, or with nothing, into one or
// a few long lines) is split again where a line or a frame starts, so the reader sees lines again. Only what starts a
// line in the output of SGLang, vLLM, Ray, Python, PyTorch, NCCL and tqdm counts: a process label or log-record
// prefix, a traceback's header, frames and chain markers, an exception line, the end of a progress bar's update.
const MIN_JOINED = 40;
// Docker's json-file logging driver writes each line as `{"log":"<line>\n","stream":"stderr","time":"..."}`
// (moby daemon/logger/jsonfilelog): the quote after `"log":` opens the line itself.
const DOCKER_JSON_LOG = /\{\s?"log"\s?:\s?"$/;
// Process labels and log-record prefixes, where a line of a program's log starts (every quantifier bounded, so a long
// line without them is read once).
const RECORD_STARTS: string[] = [
  String.raw`\((?:[A-Za-z_][\w-]{0,60} )?(?:[a-z_]{1,20}=\w{1,20} ){0,4}pid=\d+(?:, ip=[^)]{0,60})?\)`,
  // Ray's own daemons label the lines it streams from them to the driver by their name, not a pid: `(raylet) `,
  // `(raylet, ip=10.0.0.5) ` (ray/_private/worker.py, print_worker_logs; the wrapper WRAPPERS takes off)
  String.raw`(?<!\S)\((?:raylet|autoscaler|monitor|dashboard)(?:, ip=[^)\n]{0,60})?\) `,
  // SGLang's `[2025-11-05 12:00:00 TP0]` and `[23:17:01 TP7]`; its diffusion runtime's `[12-16 14:27:08]` (month-day)
  String.raw`\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[^\][]{0,40}\]|\[\d\d:\d\d:\d\d(?: [A-Z]{2,4}\d+)+\]|\[\d\d-\d\d \d\d:\d\d:\d\d\]|\[rank\d+\]:`,
  String.raw`(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d`,
  String.raw`\b(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)(?: \([\w.]{1,40}\))?: {2,}`,
  // Python logging's default format, BASIC_FORMAT `%(levelname)s:%(name)s:%(message)s` (logging.basicConfig;
  // https://docs.python.org/3/library/logging.html#logging.basicConfig): `ERROR:torch.distributed...:failed`
  String.raw`(?<![\w.:])(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]{1,80}:(?=\S)`,
  // (a record's date with its fraction of a second: Python logging's `,123`, loguru's and kserve's `.629`)
  // (Ray's driver logs `%(asctime)s\t%(levelname)s ...`, a tab after the date: ray/_private/ray_constants.py LOGGER_FORMAT)
  // (an ISO 8601 date may carry its UTC offset, `04:37:58.559317+08:00`: a formatter that prints the aware time)
  String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d{3,6}(?:[+-]\d\d:?\d\d)?[ \t]`,
  // a logging format's `date - LEVEL - ` (Python logging's common `%(asctime)s - %(levelname)s - `), with the
  // bracketed name some put in front (SGLang's router: `[Router (Rust)] 2025-03-18 14:17:58 - WARN - `)
  String.raw`(?:\[[^\]\n]{1,40}\] )?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d - (?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL) - `,
  // TensorRT-LLM's logger `[06/21/2025-03:55:04] [TRT-LLM]` and its numbered backtrace `32      0x5db1e4 f + 8`;
  // Python's threading `Exception in thread Thread-4 (name):`, multiprocessing's `Process SpawnProcess-1:` (the
  // line its _bootstrap prints before a child's traceback, `Process %s:` with the process's name: the default one,
  // or one its parent gave it, as vLLM V1 names its engine core `EngineCore_0`, vllm/v1/engine/utils.py)
  String.raw`\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\]|(?<![\w.])\d{1,3} {2,}0x[0-9a-f]{4,16} |Exception in thread [^:\n]{1,80}:|Process [A-Z][\w-]{0,40}[-_](?:[A-Z]{1,4})?\d{1,6}:`,

  // glog / c10 `[E1113 12:00:00.123 ...]`, NCCL `host:pid:tid [dev] `, c10's backtrace, C++'s terminate; older
  // PyTorch's c10 logger without glog, `[E socket.cpp:957] ` (its level letter, the file and line only)
  String.raw`\[[IWEF] [\w.-]{1,80}\.(?:cpp|cc|cu|h):\d{1,6}\] |\[?[IWEF]\d{3,4} \d\d:\d\d:\d\d\.\d+|(?<![\w.-])[\w.-]{1,64}:\d+:\d+ \[\d+\] |frame #\d+: |Exception raised from |terminate called after throwing`,
  // THC's check (older PyTorch, aten/src/THC/THCGeneral.cpp, __THCudaCheck) prints its failure as a line of its own
  // to stderr: `THCudaCheck FAIL file=... line=202 error=701 : too many resources requested for launch`
  String.raw`THCudaCheck FAIL file=`,
  // ROCm's HSA runtime prints a GPU's page fault as a line of its own to stderr before it aborts the process:
  // `Memory access fault by GPU node-3 (Agent handle: 0x...) on address 0x.... Reason: Unknown.` (ROCR-Runtime
  // src/core/runtime/runtime.cpp, Runtime::VMFaultHandler)
  String.raw`Memory access fault by GPU node-\d`,
  // Ray's C++ terminate handler logs the exception on one line, `Unhandled exception: St13runtime_error. what():
  // msg` (src/ray/util/logging.cc, TerminateHandler); a C++ signal handler's `Signal (6) received.` and the
  // boost::stacktrace frames it prints after it, `N# name in lib` / `N# 0x... in lib` (Triton's server does both)
  String.raw`Unhandled exception: [\w:<>]{1,200}\. what\(\): |Signal \(\d{1,3}\) received\.|(?<![\w#])\d{1,3}# (?=\S{1,300} (?:in|at) )`,
  // argparse's failure: `usage: prog [-h] ...` then `prog: error: message` (CPython Lib/argparse.py,
  // ArgumentParser.error: print_usage, then exit(2, '%(prog)s: error: %(message)s')); `usage: ` starts that line
  // only before a program's name and the error it leads to (`token usage: 0.43` is a number)
  String.raw`(?<![\w-])usage: (?=[A-Za-z][\w./-]{0,80}(?: |$))(?=[^\n]{0,600}?: error: )`,
  // UCX's fatal-signal handler (ucs/debug/debug.c, ucs_handle_error / ucs_debug_show_backtrace), which the NCCL
  // and MPI stacks load: `[host:pid:thread:tid] Caught signal 7 (Bus error: ...)`, then `==== backtrace (tid:
  // 7025) ====` and one line per frame, `N 0x<16 hex digits> func() file:line`; each is a line of its own
  String.raw`\[[\w.-]{1,64}:\d{1,10} {0,8}:\d{1,6}:\d{1,10}\] (?=Caught signal )|={2,8} backtrace \(tid: {0,10}\d{1,10}\) ={2,8}|(?<![\w.])\d{1,3} 0x[0-9a-f]{16} (?=\S{1,300}\(\))`,
];

const BOUNDARY = new RegExp(
  [
    `(?<rec>${RECORD_STARTS.join('|')})`,
    // TensorRT-LLM's C++ logger (cpp/tensorrt_llm/common/logger.cpp): `[TensorRT-LLM][INFO] `, and FasterTransformer's,
    // which LMDeploy's TurboMind kept (`[FT][ERROR] `, `[TM][ERROR] `); after a colon it is the cause a message quotes
    // (`Failed to initialize executor on rank 0: [TensorRT-LLM][ERROR] ...`), not a line
    String.raw`(?<trt>\[(?:TensorRT-LLM|FT|TM)\]\[[A-Z]{4,7}\] )`,
    String.raw`(?<tb>Traceback \(most recent call last\):?)`,
    // (an excerpt that starts mid-line can start inside a frame's path: `vllm/engine/arg_utils.py", line 963, in f`)
    // (a frame the copier cut to `File "x.py", ...` is one too: lineinfo.ts, FRAME_ELIDED)
    String.raw`(?<frame>File "[^"\n]{1,400}", (?:line \d+, in [\w.<>]{1,200}|(?:\.{3}|…)(?= |$))|(?<!\S)[^\s"]{0,400}\.py", line \d+, in [\w.<>]{1,200}|<ipython-input-[^>]{1,60}> in [\w.<>]{1,200}\(\))`,
    // IPython < 8 names a frame by its file and the call with its arguments, `/x/auto_gptq/utils/exllama_utils.py in
    // f(model, max_input_length)` (IPython/core/ultratb.py, VerboseTB): the line starts there, its arguments are its own
    String.raw`(?<ipy>(?<!\S)/[^\s"]{0,400}\.py in [\w.<>]{1,200}\()`,
    String.raw`(?<chain>During handling of the above exception, another exception occurred:|The above exception was the direct cause of the following exception:)`,
    // an exception's name as parseExceptionLine reads one, then its message (or the end); a bare `Error:` (a Rust or Go
    // launcher's line) only inside a traceback
    // (Ray names a task's exception with its cause: `ray.exceptions.RayTaskError(TimeoutError): ...`)
    // (`raise NotImplementedError` is the source line naming it, not the exception line Python prints after it)
    // (a binding's class may start in lower case, `nixl._bindings.nixlNotFoundError`: taken when a module path names
    // it and its name goes on in camel case, so a word of prose before a colon is none)
    String.raw`(?<exc>(?<![\w.])(?<!\braise )(?:[A-Za-z_]\w{0,60}\.){0,6}(?:Exception|StopIteration|OutOfResources|(?:[A-Z]\w{0,60}?|(?<=\.)[a-z][a-z\d]{0,20}[A-Z]\w{0,40}?)(?:Error|Exception|Exit|Interrupt|Failure|Timeout|OutOfResources))(?:\([A-Za-z_]\w{0,60}\)(?=: )|(?=: |$)))`,
    String.raw`(?<bare>(?<![\w.])Error(?=: ))`,
    // the shell's report that its job was killed (SIGKILL: the kernel's OOM killer, a limit) is a line of its own,
    // `Killed`, the last a killed process's log shows (the shell's word alone, not a sentence's: `was already Killed`)
    String.raw`(?<killed>(?<= )(?<!\b(?:was|were|been|be|is|are|got|get|already) )Killed(?=\s*$))`,
    // tqdm ends each update with its timing: `[00:23<00:00,  1.38s/it]`; past an hour the elapsed time has its hours,
    // `[1:12:34<24:31:08, 66.57s/it]` (tqdm/std.py format_interval: `{h:d}:{m:02d}:{s:02d}`)
    String.raw`(?<tqdm>\[(?:\d{1,4}:)?\d\d:\d\d<[^\]\n]{0,40}\])`,
  ].join('|'),
  'g',
);
/** What an exception's name without a message ends with, right before a line's start (a cheap test first). */
const BARE_TAIL = /(?:Error|Exception|Exit|Interrupt)\s+$/;
const BARE_BEFORE =
  /(?<![\w.])(?<!\braise )(?:[A-Za-z_]\w{0,60}\.){0,6}[A-Z]\w{0,60}?(?:Error|Exception|Exit|Interrupt)\s+$/;
const MAX_BARE = 500;
/** IPython's header: the exception's name, then spaces, then `Traceback (most recent call last)`. */
const IPYTHON_HEADER = /(?:^|[^\w.])[\w.]*(?:Error|Exception)\s{2,}$/;

const RAY_REPEATED = / ?\[repeated \d+x across cluster\]/g;

type Cut = 'line' | 'frame' | 'source';

/**
 * The lines a joined line was made of, or null when it reads as one line. Pieces keep their text exactly; a frame
 * and the source after it get the indentation Python gave them when nothing else (a wrapper) is in front. An
 * exception's name right after a colon is the cause a message names (`failed: ImportError: ...` in a warning), not
 * a line of its own, outside a traceback. A quoted paste (`> ` in front) starts each line with `> ` again.
 */
// A Markdown table's row of short cells (`| model | requests | errors | tok/s |`, a benchmark's report): one line of
// its own, that names what is counted and states nothing. A log line pasted in a table is one cell, with its own `:`.
const MARKDOWN_ROW = /^\|(?:[^|:\n]{1,40}\|){3,32}\s*$/;

/** True when `body` is a Markdown table's row of short cells (MARKDOWN_ROW). */
export function markdownRow(body: string): boolean {
  return MARKDOWN_ROW.test(body.trim());
}

export function splitJoined(joined: string): string[] | null {
  if (joined.length < MIN_JOINED || !mayBeJoined(joined) || markdownRow(stripWrappers(joined))) return null;
  // Ray's deduplication note ends a line; inside a joined one it would sit in front of the next line's wrappers.
  const line = joined.replace(RAY_REPEATED, '');
  /** [where a piece starts, what it is, whether it starts exactly there (else after the blanks there)] */
  const cuts: Array<[number, Cut, boolean?]> = [];
  let inTraceback = false;
  BOUNDARY.lastIndex = 0;
  for (let m = BOUNDARY.exec(line); m; m = BOUNDARY.exec(line)) {
    const g = m.groups ?? {};
    const end = m.index + m[0].length;
    const before = line.slice(Math.max(0, m.index - 80), m.index);
    // An exception with no message (`NotImplementedError`) is a line of its own after a traceback's last source
    // line; joined, nothing follows its name to say so but the next line's start, which this match is.
    if (inTraceback && BARE_TAIL.test(before)) {
      const tail = line.slice(Math.max(0, m.index - MAX_BARE), m.index);
      const bare = BARE_BEFORE.exec(tail);
      if (bare) cuts.push([m.index - tail.length + bare.index, 'line']);
    }
    if (g.tb !== undefined) {
      // `Scheduler hit an exception: Traceback ...` and IPython's `ValueError   Traceback ...` are one header
      if (!/:\s*$/.test(before) && !IPYTHON_HEADER.test(before)) cuts.push([m.index, 'line']);
      cuts.push([end, 'line']);
      inTraceback = true;
    } else if (g.chain !== undefined) {
      cuts.push([m.index, 'line'], [end, 'line']);
      inTraceback = true;
    } else if (g.frame !== undefined) {
      cuts.push([m.index, 'frame'], [end, 'source']);
      inTraceback = true;
    } else if (g.ipy !== undefined) {
      cuts.push([m.index, 'line']);
      inTraceback = true;
    } else if (g.exc !== undefined || g.bare !== undefined) {
      // torch._dynamo's BackendCompilerFailed prints `backend='inductor' raised:` and the inner exception on the next
      // line (torch/_dynamo/exc.py): there the colon does end a line.
      // A name in quotes is one a message quotes (vLLM's ulimit warning: ``fd limit errors like `OSError: [Errno 24]
      // Too many open files` ``, a warning's `error='RuntimeError: ...'`), not the start of a line; only Docker's
      // json-file log opens a record's own text with a quote (`{"log":"ValueError: ...\n",...}`)
      const quoted = /[`'"\u2018\u201c]$/.test(before) && !DOCKER_JSON_LOG.test(before);
      if (inTraceback || (g.exc !== undefined && !quoted && (!/:\s*$/.test(before) || /\braised:\s*$/.test(before)))) {
        cuts.push([m.index, 'line']);
      }
      inTraceback = false;
    } else if (g.trt !== undefined) {
      if (!/:\s*$/.test(before)) cuts.push([m.index, 'line']);
      inTraceback = false;
    } else if (g.tqdm !== undefined) {
      cuts.push([end, 'line']);
    } else {
      cuts.push([m.index, 'line']);
      inTraceback = false;
    }
  }
  // A container's column (docker compose's `service-1  | `) in front of the joined line is in front of each of its
  // lines: a cut right after one is where that line starts, the label with it.
  const label = COMPOSE_LABEL.exec(line)?.[0].trimEnd();
  if (label) {
    for (const c of cuts) {
      let q = c[0];
      while (q > 0 && line[q - 1] === ' ') q--;
      if (q > label.length && line.startsWith(label, q - label.length)) c[0] = q - label.length;
    }
  }
  // A quoted or tabled paste (`> `, `  | ` in front) starts each of its lines with that mark again, also behind the
  // wrappers of the program that printed the paste (`3:   |   | ...`).
  const lead = leadMark(line);
  if (lead) {
    const mark = ` ${lead.mark} `;
    // `  | ` keeps its space (the column it marks starts with one); `> ` starts the line
    const at = lead.mark === '|' ? 0 : 1;
    for (let p = line.indexOf(mark, lead.end); p >= 0; p = line.indexOf(mark, p + 3)) {
      cuts.push([p + at, 'line', true]);
    }
    cuts.sort((a, b) => a[0] - b[0]);
  }
  // A test runner's stream label (`stderr: `, WRAPPERS) in front of the joined line is in front of each of its lines.
  const stream = STREAM_LABEL.exec(line)?.[0];
  if (stream) {
    for (let p = line.indexOf(` ${stream}`, 1); p >= 0; p = line.indexOf(` ${stream}`, p + stream.length)) {
      cuts.push([p + 1, 'line', true]);
    }
    cuts.sort((a, b) => a[0] - b[0]);
  }
  const pieces: string[] = [];
  let from = 0;
  // How far this piece is known to hold only wrappers: a cut first checks only what came after that, so a run of
  // thousands of labels (`(pid=1) (pid=1) ...`) costs one pass, not one re-read of the growing piece per cut. A
  // wrapper cut in two (`[date] ` + `ERROR:   `) reads as one only whole, so a part that is not empty alone is
  // checked with the piece's start again, unless the piece is already longer than any run of wrappers in front of
  // a line.
  let emptyTo = 0;
  let kind: Cut = 'line';
  const exactAt = new Set(cuts.filter((c) => c[2]).map((c) => c[0]));
  for (const [at, k, exact] of cuts) {
    let to = at;
    while (!exact && to < line.length && line[to] === ' ' && !exactAt.has(to)) to++;
    if (to >= line.length) break;
    // A cut with only wrappers, a log prefix or blanks before it is where this piece's payload starts, not a new
    // line; two cuts at one place (an exception right after a frame's header): what starts there names the piece.
    // (each check reads at most MAX_WRAPPER_RUN characters: a longer stretch is no run of wrappers, and reading it
    // whole at every cut made a line of `[]` or `[x] ` repeated, then an exception, take seconds)
    if (
      to <= emptyTo ||
      (to - emptyTo <= MAX_WRAPPER_RUN && payloadEmpty(line.slice(emptyTo, to))) ||
      (emptyTo > from && to - from <= MAX_WRAPPER_RUN && payloadEmpty(line.slice(from, to)))
    ) {
      emptyTo = Math.max(emptyTo, to);
      kind = k;
      continue;
    }
    pieces.push(indent(line.slice(from, to).trimEnd(), kind));
    from = to;
    emptyTo = to;
    kind = k;
  }
  if (from === 0) return null;
  pieces.push(indent(line.slice(from).trimEnd(), kind));
  return pieces;
}

/** A test runner's stream label in front of a line (WRAPPERS has the same). */
const STREAM_LABEL = /^std(?:out|err): /;

/** docker compose's column in front of a line (WRAPPERS has the same). */
const COMPOSE_LABEL = /^[A-Za-z][\w.-]{0,60} +\| ?/;

/** Wrappers stack: few lines carry more than this many. */
const MAX_WRAPPERS = 8;

/**
 * The line without its wrappers and torch.distributed's `[rank3]:` / torchrun's `[default3]:` labels, which can sit
 * outside or inside the other wrappers (`[default0]:sglang-1  | ...`, `sglang-1  | [rank0]: ...`), with the rank the
 * last label named. At most MAX_WRAPPERS labels are taken off: each pass reads the whole rest of the line, so a line
 * of nothing but labels would cost its length squared.
 */
export function unwrapRanks(line: string): { rank: number | null; body: string } {
  let s = stripWrappers(line);
  let rank: number | null = null;
  for (let i = 0, t = TORCH_RANK.exec(s); t && i < MAX_WRAPPERS; i++, t = TORCH_RANK.exec(s)) {
    if (/^\d+$/.test(t[1] ?? '')) rank = Number(t[1]);
    s = stripWrappers(s.slice(t[0].length));
  }
  return { rank, body: s };
}

/**
 * The mark a quoted or tabled paste starts its lines with (`> `, `| `), in front of the line or behind the wrappers
 * outside it, and where it ends; null when the line starts with none.
 */
function leadMark(line: string): { mark: string; end: number } | null {
  let s = line;
  for (let i = 0; i < MAX_WRAPPERS; i++) {
    const m = /^\s*([>|]) /.exec(s);
    if (m) return { mark: m[1] as string, end: line.length - s.length + m[0].length };
    const w = [...WRAPPERS, TORCH_RANK].map((re) => re.exec(s)?.[0] ?? '').find((x) => x.length > 0);
    if (w === undefined) return null;
    s = s.slice(w.length);
  }
  return null;
}

/**
 * Cheap test before the full scan: a joined line holds a second line's start somewhere after its first character
 * (most lines a server prints hold none, and this runs on every line that is read whole).
 */
function mayBeJoined(line: string): boolean {
  // read past the wrappers in front: a process label there is this line's own, not a second line's start
  const body = unwrapRanks(line).body;
  // the payload's length decides, as the line without its wrappers would be judged: a wrapper in front of a short
  // line (`sglang-1  |     raise NotImplementedError`) makes it no more likely to hold two lines
  if (body.length < MIN_JOINED) return false;
  for (const mark of JOIN_MARKS) if (body.indexOf(mark, 1) > 0) return true;
  // an exception line without a message ends the joined line (`... assert x AssertionError`), or the shell's `Killed`
  return ENDS_IN_EXCEPTION.test(body);
}
const ENDS_IN_EXCEPTION = / (?:[A-Za-z_][\w.]{0,120}(?:Error|Exception)|Killed)\s*$/;
const JOIN_MARKS = [
  'File "',
  'Traceback (',
  'pid=',
  'Error: ',
  'Exception: ',
  'Error(',

  '[20',
  ' INFO ',
  ' WARNING ',
  ' ERROR ',
  'INFO:  ',
  'ERROR:  ',
  '[rank',
  'frame #',
  'terminate called',
  '] NCCL ',
  ' > ',
  ' | ',
  '<ipython-input',
  '[TRT-LLM]',
  '[TensorRT-LLM][',
  '[FT][',
  '[TM][',
  '0x',
  'Exception in thread',
  'Z ',
  'it/s]',
  's/it]',
  'above exception',
  'Unhandled exception: ',
  'Signal (',
  '# ',
  'usage: ',
  'THCudaCheck FAIL',
  '(raylet',
  '(autoscaler',
  '(monitor',
  '(dashboard',
  '\tINFO ',
  '\tWARNING ',
  '\tERROR ',
  'Memory access fault by GPU',
  '] Caught signal ',
  ' backtrace (tid:',
  // c10's logger without glog (`[E socket.cpp:957] `) and glog's file field (`... ProcessGroupNCCL.cpp:1785] `,
  // Triton's and gRPC's `... main.cc:244] `)
  '.cpp:',
  '.cc:',
];

/** Longer than this, what stands before a cut is not only wrappers and labels in front of one line. */
const MAX_WRAPPER_RUN = 1024;

function payloadEmpty(text: string): boolean {
  // wrappers, rank labels, log prefixes, or the markup a paste put in front (`**`, `> `, a backtick), in any order
  let t = text;
  for (let prev = ''; t !== prev; ) {
    prev = t;
    t = stripWrappers(t)
      .replace(TORCH_RANK, '')
      .replace(/^\s*\[[^\]]{0,80}\]:?/, '')
      .replace(/^[\s*`>|]+/, '');
  }
  return t === '';
}

function indent(text: string, kind: Cut): string {
  // a rank label is a wrapper too: the frame's indentation is behind it (`[rank0]:   File ...`)
  if (kind === 'line' || stripWrappers(text) !== text || TORCH_RANK.test(text)) return text;
  const s = text.trimStart();
  return kind === 'frame' ? `  ${s}` : `    ${s}`;
}
