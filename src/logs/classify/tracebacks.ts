// Python tracebacks as SGLang prints them: a header (often `[... TP3] Scheduler hit an exception: Traceback ...`),
// frames, then the exception line. Several ranks print one each; chained exceptions print several in a row. Only
// what the classifier needs is kept, bounded: the header, up to MAX_FRAMES frames and the exception line.

import { parseExceptionAtEnd, parseExceptionLine, pydanticError, type RaisedException } from './exceptions.ts';
import {
  decorationOnly,
  fenceLine,
  type LinePrefix,
  type LineShape,
  readPrefix,
  statesNothing,
  TRACEBACK_START,
} from './lineinfo.ts';
import type { Frame } from './phase.ts';
import {
  excusesTraceback,
  failureRecord,
  loggedAtErrorLevel,
  ncclReturnTrace,
  ncclWarn,
  ownErrorLevel,
  requestHandler,
  serverLoop,
  warning,
} from './records.ts';
import type { Evidence, Phase } from './types.ts';

const MAX_FRAMES = 200;
/** The phases of a server still starting (its milestones say so). */
const STARTING: ReadonlySet<Phase> = new Set(['startup', 'weight_load', 'kv_alloc', 'cuda_graph_capture', 'warmup']);
/** Tracebacks kept for `other` since the last sign of life; later ones only matter if a root points at them. */
const MAX_KEPT = 16;
/**
 * Unprefixed lines right after the exception line still belong to it (CUDA prints its hints there); a message can
 * be a list: xformers' `NotImplementedError: No operator found for memory_efficient_attention_forward with inputs:`
 * lists the inputs, then each operator it tried and why not (xformers/ops/fmha/dispatch.py, _run_priority_list).
 */
const CONTINUATION_LINES = 20;
/** Python's underline of the failing expression under a frame's source line (3.11+): carets and tildes. */
const CARET_LINE = /^\s+[~^]+\s*$/;
/** An exception message read with its continuation lines, bounded. */
const MAX_MESSAGE = 2000;
/** A frame's source line as kept for rules that read the call it made. */
const MAX_SOURCE = 400;

export interface Traceback {
  header: Evidence;
  rank: number | null;
  frames: Frame[];
  exc: Evidence | null;
  /** The exception's type and message, parsed from `exc` (null when it does not read as one). */
  raised: RaisedException | null;
  open: boolean;
  /** Started at a frame: the excerpt began mid-traceback (no header seen). */
  headless: boolean;
  /** The last line of the exception's message (its own line, or a continuation of it). */
  messageEnd: number;
  /** Its frames read as a Python traceback's (`line N, in f`), not as a faulthandler dump's (`line N in f`). */
  pythonFrames: boolean;
  /** The source line shown under the innermost frame so far. */
  lastSource: Evidence | null;
  /** Milestone phase when the traceback started. */
  phaseAt: Phase;
  /**
   * The error record logged on the line right before the header: `logger.exception(msg)` and `exc_info=True`
   * print the message, then the traceback. It stands in for an exception line the excerpt lost.
   */
  logged: Logged | null;
  /** The traceback this one is chained to ("During handling of the above exception, ..."), or null. */
  chainedTo: Traceback | null;
  /**
   * The first validator's error a pydantic ValidationError's message carries (`  Value error, Model architectures
   * [...] are not supported`): the exception a validator raised while the config was built, on its own line.
   */
  validator: { ev: Evidence; raised: RaisedException } | null;
}

/**
 * A line of Python code as a frame shows it: a statement (`raise X(...)`, `return f(`, `x = y`, `with a:`, `assert`)
 * or a call (`name(`, `a.b.c(`), or the line of a statement over several lines that the frame stands at, which can
 * open with the brackets closing the lines before it (`] = self.core_worker.get_objects(`, ray/_private/worker.py's
 * annotated assignment). An exception's message (`Distributed package doesn't have NCCL built in`) is neither.
 * The annotation's words are separated by single runs of spaces: a class holding the space next to `\s*` backtracked
 * in time cubic in a run of spaces (`value:` and 8,000 spaces took two minutes).
 */
const SOURCE_LINE =
  /^(?:(?:raise|return|assert|with|for|if|elif|while|yield|await|del|import|from)\b|[)\]}]+\s*(?:[-+*/|&]?=(?!=)|\.\w|[,:)]|$)|[\w.]+(?:\[[^\]]*\])?(?:\s*,\s*[\w.]+)*\s*(?::\s*[\w.[\],]+(?: +[\w.[\],]+)*)?\s*[-+*/|&]?=(?!=)|[\w.]+\()/;

/**
 * An error record logged right before a traceback's header. `states`: it says in words what failed (records.ts) or
 * its own text carries its error level, so it can be the root whatever wrapper marks a level in front of it; a record
 * known by a wrapper's level only is read by the rules alone.
 */
export interface Logged {
  ev: Evidence;
  message: string;
  states: boolean;
}

/** A log record that states a failure with no traceback (records.ts), kept until the server carries on. */
export interface FailureRecord {
  ev: Evidence;
  raised: RaisedException;
  rank: number | null;
  phaseAt: Phase;
}

export class TracebackTracker {
  current: Traceback | null = null;
  /** Tracebacks since the server last showed progress, oldest first (the earliest failing rank comes first). */
  unsurvived: Traceback[] = [];
  private chainedFrom: Traceback | null = null;
  /**
   * The stacks of the threads py-spy found running, since the server last showed progress, outermost frame first
   * (py-spy prints the innermost first). Not tracebacks: a dump says what a thread was doing, not that it failed.
   */
  dumps: Frame[][] = [];
  private dumping: Frame[] | null = null;
  /** Python's `Exception ignored in: ...` (a failing __del__ or callback): the traceback after it is not fatal. */
  private ignoreUntil = 0;
  /** Length of the exception line (or its last continuation) just read: a hard wrap fills the line. */
  private lastBodyLength = 0;
  /** The last unindented text line outside a traceback (an error record if a header follows it). */
  private lastText: { prefix: LinePrefix; ev: Evidence } | null = null;
  /** The last text line outside a traceback whatever its rank (decoration aside). */
  private prevText: { prefix: LinePrefix; ev: Evidence } | null = null;
  /** The last line read as text outside a traceback (lastText's, or another rank's after it). */
  private lastTextEnd = 0;
  /** The last line that was another rank's record printed inside this rank's traceback. */
  private interleaved = 0;
  /** Failure records since the server last carried on (a milestone or a serving line), oldest first. */
  records: FailureRecord[] = [];
  /** The last exception read without frames (native): an indented line right after it continues its message. */
  private lastNative: Traceback | null = null;
  /** The caret line (`    ^^^^`) right after the innermost frame's source line, or 0. */
  private caretsAt = 0;
  /** The last line read as the continuation of an exception's message. */
  private continuedAt = 0;
  /** The exception whose message the line at continuedAt continued. */
  private continuedTb: Traceback | null = null;
  /** True when that continuation went on inside a word the line before was cut in (one line, hard-wrapped). */
  private continuedInWordFlag = false;
  /** Tracebacks a serving process logged for a failure it survives (excuse), and those chained to them. */
  private readonly excused = new WeakSet<Traceback>();

  /**
   * The traceback is one a serving process survives: not fatal, nor is any traceback chained to it. One through the
   * server's own loop is not excused, unless `evenALoop` (a loop cancelled while the server shuts down).
   */
  excuse(tb: Traceback, evenALoop = false): void {
    if (!evenALoop && tb.frames.some((f) => serverLoop(f.func))) return;
    this.excused.add(tb);
    this.unsurvived = this.unsurvived.filter((t) => t !== tb);
    // the record logged with it (`logger.exception(msg)`) is the same failure
    if (tb.logged) this.dropRecordAt(tb.logged.ev.line);
  }

  /** Forgets the failure record read at `line`: it turned out to be no failure of its own. */
  dropRecordAt(line: number): void {
    this.records = this.records.filter((r) => r.ev.line !== line);
  }

  /** The traceback turned out to be a serving process's own loop dying (records.ts, serverLoop): fatal after all. */
  private unexcuse(tb: Traceback): void {
    this.excused.delete(tb);
    if (!this.unsurvived.includes(tb) && this.unsurvived.length < MAX_KEPT) this.unsurvived.push(tb);
  }

  /**
   * The traceback's exception line was read: one the server dies of (diesWithServer: a SystemExit with a failing
   * status) is fatal whatever record excused it (uvicorn's `Exception in ASGI application` logs any BaseException).
   */
  exceptionRead(tb: Traceback): void {
    if (this.excused.has(tb) && diesWithServer(tb)) this.unexcuse(tb);
  }

  /** A failure record (records.ts) was read. */
  record(r: FailureRecord): void {
    if (this.records.length < MAX_KEPT) this.records.push(r);
  }

  /**
   * The server reached a milestone: records before it were survived (a retried download, a failed request). An
   * ordinary line is no such sign: a failing process goes on printing (its shutdown, another rank's lines, a
   * launcher's report). Tracebacks are kept: a worker's traceback can print before the main process
   * reaches its next step and dies.
   */
  carriedOn(): void {
    this.records = [];
  }

  /** True when `line` comes right before `next`, another rank's record printed in between left out. */
  private follows(line: number, next: number): boolean {
    return line === next - 1 || (this.interleaved === next - 1 && line === next - 2);
  }

  ignoreNext(lineNo: number): void {
    this.ignoreUntil = lineNo + 2;
  }

  /** Feed one processed line; returns the traceback that started on it, if any. */
  observe(shape: LineShape, prefix: LinePrefix, ev: Evidence, phase: Phase, serving = false): Traceback | null {
    const cur = this.current;
    if (shape.kind !== 'blank' && shape.kind !== 'dump_thread' && !(shape.kind === 'indented' && shape.dump)) {
      this.dumping = null;
    }
    switch (shape.kind) {
      case 'dump_thread':
        if (cur?.open) cur.open = false;
        this.dumping = shape.active && this.dumps.length < MAX_KEPT ? [] : null;
        if (this.dumping) this.dumps.push(this.dumping);
        return null;
      case 'traceback_start': {
        if (cur?.open) cur.open = false;
        return this.start(ev, prefix, phase, false);
      }
      case 'frame': {
        // An excerpt that starts mid-traceback (or a header lost to a wrapper): its first frame opens one.
        const tb = cur?.open ? cur : this.start(ev, prefix, phase, true);
        if (shape.python) tb.pythonFrames = true;
        if (tb.frames.length < MAX_FRAMES) {
          tb.frames.push({ line: ev.line, text: ev.text, file: shape.file, func: shape.func });
        }
        // the server's own loop died in it: no record logged before it excuses that
        if (serverLoop(shape.func) && this.excused.has(tb)) this.unexcuse(tb);
        // raised while one request was handled (records.ts, requestHandler): answered with an error, the server
        // serves on. Only when the server is known to serve (`serving`: its ready line or a request answered read, or
        // the caller says so), or no milestone was read (an excerpt that starts at the failure), or the record logged
        // with the traceback says it was one request's (SGLang's `Error in request: ...` above handle_request's frames). While the
        // milestones show it starting, the request is its warm-up, which it does not outlive. Never through the
        // server's own loop either (excuse: vLLM V0's run_engine_loop under serving_chat.py's generator).
        else if (
          (serving || tb.phaseAt === 'unknown' || (tb.logged !== null && excusesTraceback(tb.logged.message))) &&
          requestHandler(shape.file, shape.func) &&
          !STARTING.has(tb.phaseAt) &&
          !this.excused.has(tb)
        ) {
          this.excuse(tb);
        }
        tb.lastSource = null;
        return tb === cur ? null : tb;
      }
      case 'chain':
        if (cur) {
          cur.open = false;
          this.chainedFrom = cur;
        }
        return null;
      case 'indented':
        if (shape.dump && this.dumping) {
          if (this.dumping.length < MAX_FRAMES) this.dumping.unshift({ line: ev.line, text: ev.text, ...shape.dump });
          return null;
        }
        if (cur?.open && cur.frames.length > 0 && (cur.lastSource === null || shape.current)) {
          cur.lastSource = ev;
          const last = cur.frames[cur.frames.length - 1] as Frame;
          last.source = prefix.body.slice(0, MAX_SOURCE);
          return null;
        }
        // An indented line right after an exception's message is more of it: Python prints a message's own newlines
        // as they are, and the next lines of one (pydantic's `  Value error, ...` under its ValidationError) or an
        // author's hard wrap aligned under it are indented (`ValueError: ... is not` then `    divisible by ...`).
        // After a traceback's frames it is a source line (above), so this reads only a closed one or a bare line.
        // (not a record or a label behind the indentation: `(pid=1)  [rank0]:[W816 ...] ...` is another line)
        if (!cur?.open && !wrappedAgain(prefix.body)) {
          const owner = [cur, this.lastNative].find((t) => t?.exc && t.messageEnd === ev.line - 1);
          if (owner && this.continues(owner, prefix, ev)) return null;
        }
        // A frame shows one source line; an indented line after it that reads as an exception is the exception
        // line, indented with the rest of a pasted excerpt (`  KeyError: b''`), never more source.
        // (Python 3.11+ underlines the failing expression with carets on the line after the source: the exception
        // line comes after them)
        if (
          cur?.open &&
          cur.lastSource !== null &&
          this.follows(cur.lastSource.line, ev.line) &&
          CARET_LINE.test(prefix.body)
        ) {
          this.caretsAt = ev.line;
          return null;
        }
        if (
          cur?.open &&
          cur.lastSource !== null &&
          !shape.current &&
          (this.follows(cur.lastSource.line, ev.line) || this.follows(this.caretsAt, ev.line))
        ) {
          const raised = parseExceptionLine(prefix.body);
          if (raised) {
            cur.open = false;
            cur.exc = ev;
            cur.raised = raised;
            cur.messageEnd = ev.line;
            this.lastBodyLength = prefix.body.length;
          }
        }
        // outside a traceback, a line a paste indented is a line of text: the record logged before a header, too
        if (!cur?.open) this.textRead(prefix, ev);
        return null;
      case 'text':
        // read as an error record only if a traceback's header follows it (most lines are followed by none); another
        // rank's record printed in between leaves it the line before the header
        if (!cur?.open) {
          // decoration between a record and its traceback (a paste's `--` or Markdown fence) leaves the record the
          // line before the header
          if (decorationOnly(ev.text) && this.lastTextEnd === ev.line - 1) {
            this.lastTextEnd = ev.line;
            return null;
          }
          this.textRead(prefix, ev);
        }
        // (a bare exception line is a traceback whose frames were cut: its message continues the same way)
        if (!cur?.open) {
          const owner = [cur, this.lastNative].find((t) => t?.exc && t.messageEnd === ev.line - 1);
          if (owner && this.continues(owner, prefix, ev)) return null;
        }
        // Another rank's log record printed while this one's traceback is written (ranks share the terminal):
        // neither its end nor its exception. A record that names no rank still ends it (the excerpt was cut).
        if (cur?.open && prefix.record && prefix.rank !== null && prefix.rank !== cur.rank) {
          this.interleaved = ev.line;
          return null;
        }
        // A paste's closing fence ends the traceback it holds: what follows is the reporter's text (`Any idea how to
        // fix this?`), not the exception line an excerpt cut before.
        if (cur?.open && fenceLine(ev.text)) {
          cur.open = false;
          return null;
        }
        if (cur?.open) {
          // A frame line hard-wrapped at a fixed width (`..., in _initialize_k` + `v_caches`): the next line is
          // the rest of the function's name, not the exception.
          const last = cur.frames[cur.frames.length - 1];
          if (last && this.follows(last.line, ev.line) && cur.lastSource === null && /^[\w.<>]+$/.test(prefix.body)) {
            last.func += prefix.body;
            return null;
          }
          // A line that lost its indentation right after a frame is its source when it reads as code and not as an
          // exception (`raise RuntimeError(f"NCCL error: {error_str}")`, `super().__init__(`): Python prints the
          // source under its frame, indented, and an issue's formatting or a joined paste loses that indentation for
          // some lines or all (a frame behind a line break keeps it, the source line after it not).
          if (last && this.follows(last.line, ev.line) && cur.lastSource === null) {
            if (!parseExceptionLine(prefix.body) && SOURCE_LINE.test(prefix.body)) {
              cur.lastSource = ev;
              last.source = prefix.body.slice(0, MAX_SOURCE);
              return null;
            }
          }
          // Decoration (a Markdown marker, an underline) or a path alone between the frames and the exception line
          // says nothing: the exception is still to come.
          if (statesNothing(ev.text)) return null;
          cur.open = false;
          // The first unindented line after the frames is the exception; a new log record means it was cut off.
          // Without a header, frames in Python's traceback format still say so; after faulthandler's stack dumps
          // (which look like frames too) only a line that reads as an exception counts.
          if (cur.frames.length > 0 && !prefix.record) {
            const raised = cur.pythonFrames ? parseExceptionAtEnd(prefix.body) : parseExceptionLine(prefix.body);
            if (raised || !cur.headless || cur.pythonFrames) {
              cur.exc = ev;
              cur.raised = raised;
              cur.messageEnd = ev.line;
              this.lastBodyLength = prefix.body.length;
            }
          }
        }
        return null;
      default:
        return null;
    }
  }

  /**
   * A line the pre-filter passed over, read only because a traceback's header follows it: the record logged with that
   * traceback, when no traceback is open.
   */
  textBefore(prefix: LinePrefix, ev: Evidence): void {
    if (!this.current?.open) this.textRead(prefix, ev);
  }

  /** A line of text outside a traceback: the header's rank's last one, the last one whatever its rank. */
  private textRead(prefix: LinePrefix, ev: Evidence): void {
    // NCCL's return trace (`NCCL INFO init.cc:1263 -> 2`, one line per call its check macros unwind, src/include/
    // checks.h NCCLCHECK) is the WARN before it still being reported: the record a traceback's header follows is
    // that WARN, however many trace lines (of one process or several) came in between.
    const last = this.lastText;
    if (last && ncclWarn(last.prefix.body) && ncclReturnTrace(prefix.body)) {
      this.prevText = last;
      this.lastTextEnd = ev.line;
      return;
    }
    // (a line before that is no record, a reporter's `I get this error:` above a rank's lines, is no rank's record for
    // another rank's to be kept out of: the first rank's line after it is read as any line the ranks start with is)
    const other =
      last !== null &&
      prefix.rank !== null &&
      prefix.rank !== last.prefix.rank &&
      loggedAsError(last.prefix, last.ev) !== null;
    if (!other) this.lastText = { prefix, ev };
    this.prevText = { prefix, ev };
    this.lastTextEnd = ev.line;
  }

  /**
   * A multi-line exception message (Python prints the message's own newlines as they are; excerpts hard-wrap long
   * lines at a fixed width): unprefixed lines right after the exception line extend its message, so rules read the
   * whole of it. A wrap inside a word (`... KV cach` + `e is needed`) joins without a space.
   */
  private continues(tb: Traceback, prefix: LinePrefix, ev: Evidence): boolean {
    const r = tb.raised;
    if (!r || !tb.exc || ev.line !== tb.messageEnd + 1) return false;
    // another rank's record printed between the lines of this one's message (ranks share the terminal, as in a
    // traceback: observe's `interleaved`) is not more of it, nor its end: the message may go on after it
    if (prefix.record) {
      if (prefix.rank !== null && prefix.rank !== tb.rank && ev.line - tb.exc.line <= CONTINUATION_LINES) {
        tb.messageEnd = ev.line;
      }
      return false;
    }
    const body = prefix.body.trimStart();
    if (ev.line - tb.exc.line > CONTINUATION_LINES || parseExceptionLine(body)) return false;
    // a line that opens with a log record's date and time (`2023-06-07T16:07:50.177973Z ERROR launcher: ...`) or as a
    // warning (`/x/main.py:145: UserWarning: ...`, `WARNING: ...`) is a record of its own: no message's next line
    if (RECORD_STAMP.test(body) || warning(body) || PROCESS_HEADER.test(body) || CXX_TERMINATE.test(body)) {
      return false;
    }
    // a message's next lines carry the front its first line did (vLLM's logger repeats its prefix on every line of a
    // record, vllm/logger.py NewLineFormatter), or part of it (Python's logging prefixes only a record's first line,
    // and the wrappers outside, a container's column, are on every line): a front of another kind, or another
    // process's label, is another record (`INFO ... Killing local vLLM worker processes` after a bare exception line,
    // `(VllmWorker rank=2 pid=9) ERROR ...` after rank 0's)
    // (blanks at a front's end are the line's indentation or a label's separator, no front of their own)
    // (a code span the message's line opens with, `` `flshattF` is not supported because: `` in xformers' list of
    // the operators it tried, is its text, not a front: the wrappers take a pasted line's opening backticks off)
    const front = stampless(frontText(prefix.body, ev.text))
      .trimEnd()
      .replace(/`{1,3}$/, '')
      .trimEnd();
    if (front !== '' && !stampless(frontText(readPrefix(tb.exc.text).body, tb.exc.text)).startsWith(front)) {
      return false;
    }
    // (an upper-case word cut the same way, `name: EAD` + `DRINUSE, message: ...`: only where the cut word is in
    // capitals on both sides, as an errno or constant name is, and the message fills a screen line)
    const inWord =
      (this.lastBodyLength >= 60 && /\w$/.test(r.message) && /^[a-z]/.test(body)) ||
      (r.message.length >= 100 && /\b[A-Z]+$/.test(r.message) && /^[A-Z]+\b/.test(body));
    r.message = `${r.message}${inWord ? '' : ' '}${body}`.slice(0, MAX_MESSAGE);
    if (r.short === 'ValidationError' && !tb.validator) {
      const inner = pydanticError(body);
      if (inner) tb.validator = { ev, raised: inner };
    }
    tb.messageEnd = ev.line;
    this.lastBodyLength = body.length;
    this.continuedAt = ev.line;
    this.continuedTb = tb;
    this.continuedInWordFlag = inWord;
    return true;
  }

  private start(ev: Evidence, prefix: LinePrefix, phase: Phase, headless: boolean): Traceback {
    const tb: Traceback = {
      header: ev,
      // A chained traceback repeats no prefix: it belongs to the rank of the one it follows.
      rank: prefix.rank ?? this.chainedFrom?.rank ?? null,
      frames: [],
      exc: null,
      raised: null,
      open: true,
      headless,
      pythonFrames: false,
      messageEnd: 0,
      lastSource: null,
      phaseAt: this.chainedFrom?.phaseAt ?? phase,
      // An excerpt that starts at a frame can have the wrapper's own line, naming the exception, right before it
      // (`Scheduler hit an exception: IndexError: ...` with no `Traceback` header).
      logged:
        (this.lastTextEnd === ev.line - 1 ? this.loggedBefore(headless) : null) ??
        (headless ? null : loggedOnHeader(prefix, ev)),
      chainedTo: this.chainedFrom,
      validator: null,
    };
    const excused = this.chainedFrom !== null && this.excused.has(this.chainedFrom);
    this.chainedFrom = null;
    this.current = tb;
    if (excused) this.excused.add(tb);
    else if (ev.line > this.ignoreUntil && this.unsurvived.length < MAX_KEPT) this.unsurvived.push(tb);
    return tb;
  }

  /**
   * The record logged right before a header: the last text line of the header's rank (another rank's ordinary line
   * printed in between left out), else, when that line states no error (a reporter's `I get this error:` above a
   * rank's record), the text line right before the header.
   */
  private loggedBefore(headless: boolean): Logged | null {
    const read = (t: { prefix: LinePrefix; ev: Evidence } | null) =>
      t === null ? null : headless ? namingException(t.prefix, t.ev) : loggedAsError(t.prefix, t.ev);
    return read(this.lastText) ?? (this.prevText !== this.lastText ? read(this.prevText) : null);
  }

  /**
   * An exception without frames: a C++ exception (`terminate called after throwing an instance of 'T'` + `what():
   * msg`) or an exception line printed alone. It joins the unsurvived list but does not become `current`: a root
   * printed before its traceback (a CUDA error line above "Exception in ModelTpServer") still borrows that one.
   */
  native(header: Evidence, what: Evidence, raised: RaisedException, rank: number | null, phase: Phase): void {
    const tb = frameless(header, what, raised, rank, phase);
    tb.messageEnd = what.line;
    this.lastNative = tb;
    if (this.unsurvived.length < MAX_KEPT) this.unsurvived.push(tb);
  }

  /** True when the line was read as more of an exception's message (continues). */
  continued(lineNo: number): boolean {
    return this.continuedAt === lineNo;
  }

  /** The exception whose message the line continued (continues), or null. */
  continuing(lineNo: number): Traceback | null {
    return this.continuedAt === lineNo ? this.continuedTb : null;
  }

  /** True when the line continuing an exception's message goes on inside the word the line before was cut in. */
  continuedInWord(lineNo: number): boolean {
    return this.continuedAt === lineNo && this.continuedInWordFlag;
  }

  /** The traceback a line belongs to: the open one, or the one whose exception line it is or continues. */
  owning(lineNo: number, prefix: LinePrefix): Traceback | null {
    const cur = this.current;
    if (!cur) return null;
    if (cur.open) return cur;
    if (cur.exc && !prefix.record && lineNo - cur.exc.line <= CONTINUATION_LINES) return cur;
    return null;
  }

  /**
   * A traceback cut off before its exception line, whose innermost source line is an `assert`: the condition is
   * what failed (an AssertionError prints nothing more), so it stands in for the missing exception line.
   */
  cutAssert(tb: Traceback): { exc: Evidence; raised: RaisedException } | null {
    if (tb.exc || !tb.lastSource) return null;
    const m = /^\s*assert\s+(.*)$/.exec(tb.lastSource.text.replace(/^.*?(?=\s*assert\s)/, ''));
    if (!m) return null;
    return { exc: tb.lastSource, raised: { type: 'AssertionError', short: 'AssertionError', message: m[1] ?? '' } };
  }

  /**
   * A traceback cut off before its exception line, logged by `logger.exception(msg)` (an error record right before
   * its header): the record's message stands in for the missing exception line. It has no type, so only rules that
   * read the message can name it.
   */
  cutLogged(tb: Traceback): { exc: Evidence; raised: RaisedException } | null {
    if (tb.exc || !tb.logged) return null;
    return { exc: tb.logged.ev, raised: { type: '', short: '', message: tb.logged.message } };
  }

  /**
   * The server logged progress after these tracebacks: they were not fatal, except those the server dies of whatever
   * it still answers (diesWithServer), unless `restarted`: the server got ready again.
   */
  survived(restarted = false): void {
    this.unsurvived = restarted ? [] : this.unsurvived.filter((t) => diesWithServer(t) && !this.excused.has(t));
    this.records = [];
    this.dumps = [];
    this.dumping = null;
    this.chainedFrom = null;
  }

  /**
   * The earliest traceback since the last progress, preferring one whose exception line was seen and is a cause
   * rather than a consequence (`RuntimeError: Initialization failed. Please see the error messages above.`), then one
   * cut before its exception line whose error record was logged with it (`logger.exception(msg)`), over a task's
   * cancellation: asyncio raises CancelledError in a task another one cancelled (Task.cancel(); uvicorn's lifespan
   * task when the server's start-up failed), so it is what the failure did, not what failed.
   */
  firstFatal(isConsequence: (text: string) => boolean): Traceback | null {
    // (an exception line that reads as no exception, a line the excerpt garbled where the frames end, names less
    // than a later traceback's that does)
    const raised = (t: Traceback) => t.exc !== null && t.raised !== null && t.raised.short !== 'CancelledError';
    const logged = (t: Traceback) => t.exc === null && t.logged?.states === true;
    const cause = (text: string | undefined) => text !== undefined && !isConsequence(text);
    return (
      this.unsurvived.find((t) => raised(t) && cause(t.exc?.text)) ??
      this.unsurvived.find((t) => logged(t) && cause(t.logged?.ev.text)) ??
      this.unsurvived.find(raised) ??
      this.unsurvived.find(logged) ??
      this.unsurvived.find((t) => t.exc !== null) ??
      this.unsurvived[0] ??
      null
    );
  }
}

/**
 * A traceback the server does not live through whatever it answers after it: one through the serving processes' own
 * loops (records.ts, serverLoop: SGLang's scheduler sends its parent SIGQUIT when its event loop raises, vLLM's engine
 * core dies and every request is answered EngineDeadError; the HTTP front end, a process of its own, goes on answering
 * `GET /health` 200 by itself meanwhile), or a SystemExit with a failing status: the program called `sys.exit(n)`
 * (`exit(1)`) to stop, a decision no request makes (uvicorn answers the request it ran in with a 500 and logs it, as
 * it does any BaseException, so the 500 and the 200s after it say only that the HTTP server was still up).
 */
function diesWithServer(tb: Traceback): boolean {
  if (tb.frames.some((f) => serverLoop(f.func))) return true;
  const r = tb.raised;
  // `SystemExit: 1`; a bare `raise SystemExit` or `sys.exit(0)` ends with status 0 (the status is the message's first
  // word: the lines read as its continuation can follow it)
  return r?.short === 'SystemExit' && !/^(?:0|None)?(?:\s|$)/.test(r.message.trim());
}

/**
 * True when a line's payload, its indentation taken off, still has a wrapper, a rank label or a record prefix, or
 * starts with a date and time: a log record's own stamp (`2026-02-11 02:15:04.629 1 kserve ERROR ...`), which no
 * message's next line starts with.
 */
function wrappedAgain(body: string): boolean {
  const s = body.trimStart();
  const again = readPrefix(s);
  return again.record || again.rank !== null || again.body !== s || RECORD_STAMP.test(s);
}
const RECORD_STAMP = /^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d/;
// multiprocessing's line before a child process's traceback, `Process %s:` with the process's name (CPython
// Lib/multiprocessing/process.py, BaseProcess._bootstrap): the start of a new report, not more of a message
const PROCESS_HEADER = /^Process [A-Z][\w-]{0,40}[-_](?:[A-Z]{1,4})?\d{1,6}:\s*$/;
// the C++ runtime's report of an exception nothing caught (libstdc++'s verbose terminate handler, vterminate.cc:
// `terminate called after throwing an instance of 'T'`, then `  what():  message`): a report of its own
const CXX_TERMINATE = /^(?:terminate called\b|what\(\): )/;

/** What stands in front of a line's payload `body` (its wrappers and prefix); '' when the line is its payload. */
function frontText(body: string, text: string): string {
  const b = body.trimEnd();
  return b !== '' && text.endsWith(b) ? text.slice(0, text.length - b.length) : '';
}

// A time stamp in a line's wrappers (`2025-11-05T12:19:01.123Z`, `12-01 10:00:00`, glog's `W1201`): the one place
// two lines of one process differ in their fronts.
const TIME_STAMP = /\d{4}-\d\d-\d\d(?=[ T])|\b\d\d[-/]\d\d(?= )|\d\d:\d\d:\d\d(?:[.,]\d{1,9})?|\b[IWEF]\d{4}(?= )/g;

/** `front` with the digits of its time stamps zeroed (TIME_STAMP). */
export function stampless(front: string): string {
  return front.replace(TIME_STAMP, (t) => t.replace(/\d/g, '0'));
}

/** An exception read without frames (a C++ exception, a bare exception line, a failure record) as a traceback. */
export function frameless(
  header: Evidence,
  what: Evidence,
  raised: RaisedException,
  rank: number | null,
  phase: Phase,
): Traceback {
  return {
    header,
    rank,
    frames: [],
    exc: what,
    raised,
    open: false,
    headless: false,
    pythonFrames: false,
    messageEnd: 0,
    lastSource: null,
    phaseAt: phase,
    logged: null,
    chainedTo: null,
    validator: null,
  };
}

/**
 * The line as an error record, or null: logged at an error level (in the wrapper or prefix taken off it, or its own
 * first words), or a record that states a failure in words (records.ts).
 */
function loggedAsError(prefix: LinePrefix, ev: Evidence): Logged | null {
  const body = prefix.body.trim();
  // a line whose own text names a mild level (NCCL's `host:pid:tid [dev] NCCL INFO ...`, src/debug.cc ncclDebugLog;
  // c10's `[W ...]`; Python's warnings format) was written at that level by the program that printed it: a wrapper that
  // relays every line at ERROR (a logger or supervisor around its stderr) does not make it the error record
  if (body === '' || warning(body)) return null;
  const states = failureRecord(prefix, ev.text, true) !== null || ownErrorLevel(body) || exceptionRepr(body);
  return states || loggedAtErrorLevel(prefix, ev.text) ? { ev, message: body, states } : null;
}

// An exception's repr alone (`AssertionError()`, `ValueError('x')`), logged with its traceback by
// `logger.exception(repr(e))`: vLLM's multiprocessing engine and its client log a failure so
// (vllm/engine/multiprocessing/engine.py MQLLMEngine.start, client.py _set_errored). It names the exception, which an
// excerpt cut after the frames does not show again.
const REPR_LINE = /^((?:[A-Za-z_]\w{0,60}\.){0,6}[A-Za-z_]\w{0,60})\(.{0,2000}\)$/;

function exceptionRepr(body: string): boolean {
  const m = REPR_LINE.exec(body);
  return m !== null && parseExceptionLine(m[1] ?? '') !== null;
}

/**
 * A record whose own line ends in the traceback's header: vLLM V0's multiprocessing worker logs a failed call as
 * `Exception in worker <name> while processing method <m>: <error>, Traceback (most recent call last):` and the
 * frames after it (vllm/executor/multiproc_worker_utils.py, _run_worker_process: the exception and its formatted
 * traceback in one message). A wrapper's own words before the header (`Scheduler hit an exception:`) state nothing.
 */
function loggedOnHeader(prefix: LinePrefix, ev: Evidence): Logged | null {
  const at = prefix.body.indexOf(TRACEBACK_START);
  if (at <= 0) return null;
  const before = prefix.body.slice(0, at).replace(/[\s,;:]+$/, '');
  if (before === '' || statesNothing(before)) return null;
  return loggedAsError({ ...prefix, body: before }, ev);
}

/** The line before a traceback that starts at a frame, when it names an exception (records.ts), or null. */
function namingException(prefix: LinePrefix, ev: Evidence): Logged | null {
  const raised = failureRecord(prefix, ev.text, true);
  return raised && raised.type !== '' ? { ev, message: prefix.body.trim(), states: true } : null;
}
