// Reading one SGLang log line: the wrappers other tools put in front of it, SGLang's own `[time rank]` prefix,
// the TP rank, Python traceback structure, and the normalised text used for dedup keys.

import { unwrapRanks } from './normalise.ts';

// SGLang: `[2026-02-19 00:17:24 DP0 PP0 TP3 EP3] msg` (the rank tokens are optional); torch: `[rank6]:[E1113 ...] msg`.
// Older releases print the time only: `[23:17:01 TP7] msg`.
const SGLANG_PREFIX = /^\[((?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:[.,]\d+)?)((?: [A-Z_]+\d+)*)\] ?/;
// glog-style `[E1113 12:00:00.123 file.cpp:42] `; c10 prints the month unpadded (`[W416 02:35:51.4 ...]`).
const GLOG = /^\[[IWEF]\d{3,4} \d\d:\d\d:\d\d[.\d]*[^\]]*\] ?/;

export interface LinePrefix {
  /** TP rank from the prefix, or null (tp=1, or a line without a prefix). */
  rank: number | null;
  /** True when the line starts a new SGLang log record. */
  record: boolean;
  body: string;
}

export function readPrefix(line: string): LinePrefix {
  const { rank, body: s } = unwrapRanks(line);
  const m = SGLANG_PREFIX.exec(s);
  if (m) {
    const tp = /(?:^| )TP(\d+)/.exec(m[2] ?? '');
    return { rank: tp ? Number(tp[1]) : rank, record: true, body: s.slice(m[0].length) };
  }
  // The payload after `[rank3]:` (and a glog-style `[E1113 12:00:00.123 ProcessGroupNCCL.cpp:42] `) is what the
  // rank printed: an exception line there is one. The label is on every line the rank printed, frames and
  // exception lines included, so only a glog line behind it starts a new record.
  if (rank !== null) {
    const g = GLOG.exec(s);
    return { rank, record: g !== null, body: g ? s.slice(g[0].length) : s };
  }
  // a glog-style record prefix is one with or without a rank label in front (the label only says whose it is)
  const g = GLOG.exec(s);
  if (g) return { rank: null, record: true, body: s.slice(g[0].length) };
  return { rank: null, record: false, body: s };
}

/**
 * A request's own text in a line that logs the request: what a user sent (a prompt that asks about `CUDA out of
 * memory`) or what the model answered is no line of the server's. vLLM's RequestLogger (vllm/entrypoints/logger.py:
 * `Received request %s: prompt: %r, params: %s, ...`; older, vllm/engine/async_llm_engine.py: `...,
 * sampling_params: %s`; `Request %s details: prompt: %r, prompt_token_ids: ...`; `Generated response %s: output: %r,
 * output_token_ids: ...`) ends the text where the next field starts (the repr's closing quote). SGLang's tokenizer
 * manager with `--log-requests` (python/sglang/srt/managers/tokenizer_manager.py: `Receive: obj=...`, `Finish:
 * obj=..., out=...`) logs the request's repr, which ends where its brackets close. A repr keeps a prompt's newlines
 * escaped, so the text never runs onto the next line.
 */
const REQUEST_TEXT = /\b(?:(?:prompt|output): (?=['"])|(?:Receive|Finish): obj=)/;
const REQUEST_HEAD = /\b(?:Received request|Request \S{1,200} details|Generated response)\b|\b(?:Receive|Finish): obj=/;

/** Where the Python string literal that opens at `from` (its quote) ends, after its closing quote; -1 if it does not. */
function literalEnd(s: string, from: number): number {
  const quote = s[from];
  for (let i = from + 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === quote) return i + 1;
  }
  return -1;
}

/**
 * Where the bracketed repr that starts at `from` (`Name(`, `{`, `[`) closes, its string literals skipped; -1 when the
 * line ends first.
 */
function reprEnd(s: string, from: number): number {
  let i = from;
  while (i < s.length && /[\w.]/.test(s[i] as string)) i++;
  if (!'({['.includes(s[i] ?? '')) return -1;
  let depth = 0;
  for (; i < s.length; i++) {
    const c = s[i] as string;
    if (c === "'" || c === '"') {
      const e = literalEnd(s, i);
      if (e < 0) return -1;
      i = e - 1;
    } else if ('({['.includes(c)) depth++;
    else if (')}]'.includes(c)) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** `line` without the request text it logs (REQUEST_TEXT); the line itself when it logs none. */
export function withoutRequestText(line: string): string {
  if (
    !line.includes('Receive') &&
    !line.includes('Request ') &&
    !line.includes('response ') &&
    !line.includes('Finish')
  )
    return line;
  const head = REQUEST_HEAD.exec(line);
  if (!head) return line;
  const m = REQUEST_TEXT.exec(line.slice(head.index));
  if (!m) return line;
  const start = head.index + m.index + m[0].length;
  // (a repr's quotes are Python's: an unescaped one ends it; one the excerpt cut ends with the line)
  if (m[0].endsWith('=')) {
    // SGLang's repr, `Cls(...)` or `{...}`, then more fields (`, out={...}`, `, headers={...}`): it ends where its
    // brackets close and no `, name=` follows; what a paste that lost its line breaks puts after it is another line
    let end = start;
    for (;;) {
      const e = reprEnd(line, end);
      if (e < 0) return line.slice(0, start);
      end = e;
      const more = /^, [a-z_]{1,40}=/.exec(line.slice(end, end + 50));
      if (!more) break;
      end += more[0].length;
    }
    return line.slice(0, start) + line.slice(end);
  }
  const end = literalEnd(line, start);
  return end < 0 ? line.slice(0, start) : line.slice(0, start) + line.slice(end);
}

/** The part of a line worth showing a person: wrappers and the log prefix removed, whitespace collapsed. */
export function displayText(line: string, max = 400): string {
  const body = readPrefix(line).body.replace(/\s+/g, ' ').trim();
  return body.length > max ? `${body.slice(0, max - 1)}…` : body;
}

/** Text with everything that changes between runs and ranks removed, for a dedup key that is stable. */
export function normaliseForKey(line: string): string {
  return displayText(line, 10_000)
    .replace(/0x[0-9a-fA-F]+/g, '0x?')
    .replace(/\/tmp\/[^\s'",)]+/g, '/tmp/*')
    .replace(/\b(?:rank|Rank|TP|DP|EP|PP)\s?\d+\b/g, 'R')
    .replace(/\b[0-9a-f]{12,}\b/gi, 'H')
    .replace(/\d+(?:\.\d+)?/g, '#')
    .replace(/\s+/g, ' ')
    .trim();
}

export const TRACEBACK_START = 'Traceback (most recent call last)';
// Frames are indented by Python; issue text sometimes loses the indentation, so it is optional here. A traceback
// logged inside a quoted string has its quotes escaped (Triton's glog: `E0728 ... model.py:106] "Traceback ...` then
// `File \"/x/model.py\", line 94, in execute`).
const FRAME = /^\s*File (?:"([^"]+)"|\\"([^"]+?)\\"), line \d+(,?) in (\S+)/;
// An excerpt that starts mid-line can start inside a frame's path: `vllm/engine/arg_utils.py", line 963, in f`.
const FRAME_TAIL = /^\s*([^\s"]*\.py)", line \d+, in (\S+)/;
// A frame whose line number and function the copier cut to `...` (`File ".../aiter/ops/moe.py", ...`): its file still
// says where the exception was raised.
const FRAME_ELIDED = /^\s*File "([^"]+)",\s*(?:\.{3}|…)\s*$/;
// Python 3.11+ underlines the failing expression with `^` and `~` on a line of its own.
const CARETS = /^\s*[~^]+\s*$/;
// IPython and Jupyter print frames their own way: `<ipython-input-7-98dbbe29edf5> in <module>()` and
// `/x/torch/functional.py in f(a, b)` (IPython < 8), `File ~/x/torch/functional.py:123, in f(a, b)` and
// `Cell In[3], line 4` (IPython 8). Their source lines are numbered, the failing one marked `----> 4 call(...)`.
const IPYTHON_FRAME = /^\s*(<ipython-input-[^>]+>|\S+\.py) in ([\w.<>]+)\(/;
const IPYTHON8_FRAME = /^\s*File (\S+?):\d+, in ([\w.<>]+)\(/;
// JupyterLab copies that frame with its path as a Markdown link to the file's line: `File
// [~/x/vllm/worker/cache_engine.py:64](http://host/lab/tree/x/cache_engine.py#line=63), in CacheEngine._allocate_kv_cache(self, ...)`.
const JUPYTER_LINK_FRAME = /^\s*File \[([^\]\s]{1,2000}?):\d+\]\([^)\s]{0,2000}\), in ([\w.<>]+)\(/;
const IPYTHON_CELL = /^\s*(Cell In\[\d+\]), line \d+/;
const IPYTHON_CURRENT = /^-*> ?\d+ /;
// py-spy's `dump` (SGLang runs it on a watchdog timeout): `Thread 309 (active+gil): "MainThread"`, then one line per
// frame, innermost first: `    run_batch (sglang/srt/managers/scheduler.py:1693)`.
const PYSPY_THREAD = /^Thread (?:0x[0-9A-Fa-f]+|\d+) \(([\w+ ]+)\): "/;
const PYSPY_FRAME = /^\s+([\w.<>]+) \(([^()\s]+):\d+\)\s*$/;
const CHAINED = /^(During handling of the above exception|The above exception was the direct cause)/;

export type LineShape =
  | { kind: 'traceback_start' }
  /** `python`: a traceback's frame (`line 12, in f`); faulthandler's stack dumps print `line 12 in f`. */
  | { kind: 'frame'; file: string; func: string; python: boolean }
  | { kind: 'chain' }
  /** A frame's source (or IPython's context) line; `current`: IPython's `---->` marks the line that failed. */
  | { kind: 'indented'; current?: boolean; dump?: { file: string; func: string } }
  /** A thread's header in py-spy's dump; `active`: it was running (not idle) when dumped. */
  | { kind: 'dump_thread'; active: boolean }
  | { kind: 'blank' }
  | { kind: 'text' };

/** How a line looks to a Python traceback reader (after wrappers). */
export function lineShape(line: string): LineShape {
  // torch.distributed prints whole tracebacks behind `[rank0]: `.
  const s = unwrapRanks(line).body;
  if (s.includes(TRACEBACK_START)) return { kind: 'traceback_start' };
  const f = FRAME.exec(s);
  if (f) return { kind: 'frame', file: f[1] ?? f[2] ?? '', func: f[4] ?? '', python: f[3] === ',' };
  const tail = FRAME_TAIL.exec(s);
  if (tail) return { kind: 'frame', file: tail[1] ?? '', func: tail[2] ?? '', python: true };
  const elided = FRAME_ELIDED.exec(s);
  if (elided) return { kind: 'frame', file: elided[1] ?? '', func: '', python: true };
  if (CARETS.test(s)) return { kind: 'indented' };
  const ip = IPYTHON_FRAME.exec(s) ?? IPYTHON8_FRAME.exec(s) ?? JUPYTER_LINK_FRAME.exec(s);
  if (ip) return { kind: 'frame', file: ip[1] ?? '', func: ip[2] ?? '', python: true };
  const cell = IPYTHON_CELL.exec(s);
  if (cell) return { kind: 'frame', file: cell[1] ?? '', func: '<module>', python: true };
  if (IPYTHON_CURRENT.test(s)) return { kind: 'indented', current: true };
  const thread = PYSPY_THREAD.exec(s);
  if (thread) return { kind: 'dump_thread', active: (thread[1] ?? '').startsWith('active') };
  const dumped = PYSPY_FRAME.exec(s);
  if (dumped) return { kind: 'indented', dump: { file: dumped[2] ?? '', func: dumped[1] ?? '' } };
  // `...` / `[...]` / `…`: the person who copied the excerpt left lines out; the traceback goes on after it.
  if (s.trim() === '' || /^\s*(?:\.{3,}|…|\[(?:\.{3}|…)\])\s*$/.test(s)) return { kind: 'blank' };
  if (CHAINED.test(s)) return { kind: 'chain' };
  if (/^\s/.test(s)) return { kind: 'indented' };
  return { kind: 'text' };
}

// What a line says once its decoration is gone: Markdown (`**`, `---`, fences), caret and tilde underlines, quoting.
const DECORATION = /[\s*`~^_=#>|-]+/g;
/** A process label an excerpt cut before it closed (`(VllmWor`, `(EngineCore_DP0 pid=`): the line it led is lost. */
const CUT_LABEL = /^\([A-Za-z_][\w-]{0,60}(?: pid=\d{0,10})?$/;
/** A path alone, or one cut off: `/x/sglang/srt/managers/sche`, `vllm/engine/arg_utils.py:963`. */
const PATH_ONLY = /^(?:[\w.~-]*\/)+[\w.-]*(?::\d+)?$|^[\w.-]+\.(?:py|so|cpp|cu|cuh|h|hpp|c)(?::\d+)?$/;
/**
 * A process's own line before the traceback it prints: `Scheduler hit an exception:`, `Error executing job:`, vLLM's
 * engine core's `EngineCore encountered a fatal error.` (vllm/v1/engine/core.py, run_engine_core: logger.exception).
 */
const WRAPPER_OWN =
  /^(?:[\w.:<> -]{0,80}\b)?(?:hit an exception|encountered an? (?:fatal )?(?:exception|error)\.?|exception occurred|error occurred|(?:the )?following (?:exception|error)|raised an exception|error executing [\w ]{0,40})s?:?$/i;

/**
 * A Markdown code fence (```` ``` ````, ```` ```log ````), wrappers or quoting in front or none: a paste's block starts or
 * ends there. (Read before the wrappers come off: one of them takes backticks off a pasted line's start.)
 */
export function fenceLine(line: string): boolean {
  const m = /`{3,}[\w+-]{0,20}\s*$/.exec(line);
  return m !== null && readPrefix(line.slice(0, m.index)).body.replace(/[\s>]+/g, '') === '';
}

/** True when a line is decoration only once its wrappers are off (Markdown, a rule, a caret underline, quoting). */
export function decorationOnly(line: string): boolean {
  const body = readPrefix(line).body;
  return body.trim() !== '' && body.replace(DECORATION, '') === '';
}

/**
 * True when a line states nothing an engineer would point at as a crash's cause: decoration only (Markdown, a caret
 * underline), a frame or a path, a traceback's header or a chain marker, or a wrapper's own "hit an exception:" whose
 * exception follows. The root chooser never picks such a line when another candidate says something.
 */
export function statesNothing(line: string): boolean {
  const shape = lineShape(line);
  if (shape.kind === 'frame' || shape.kind === 'traceback_start' || shape.kind === 'chain' || shape.kind === 'blank')
    return true;
  if (shape.kind === 'indented' && shape.dump) return true;
  if (decorationOnly(line) || readPrefix(line).body.trim() === '') return true;
  const body = readPrefix(line).body.trim();
  return PATH_ONLY.test(body) || WRAPPER_OWN.test(body) || CUT_LABEL.test(body);
}
