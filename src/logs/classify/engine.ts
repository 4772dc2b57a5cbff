// The classifier's state machine. Every line goes through `feed`; the fast file scan in scan.ts calls the same
// methods, so a log classified whole, streamed line by line or scanned from a file gives the same answer.
//
// Root cause, not last line: every line matching a root signature becomes a candidate; the best is the highest
// priority, ties going to the earliest line (the earliest failing rank). Consequences (sigquit, "hit an
// exception", Killed, ...) only mark the process as dead. A crash with a traceback but no known root is `other`,
// its root line the exception line of the earliest traceback since the server last made progress.

import { type Milestone, parseMilestone, stopSignalled } from '../milestones.ts';
import type { Catalog } from './catalog.ts';
import {
  cppException,
  cppExceptionOnOneLine,
  cppExceptionType,
  type ExceptionRule,
  matchException,
  matchingFrame,
  parseExceptionLine,
  pydanticError,
  type RaisedException,
  whatMessage,
} from './exceptions.ts';
import { UnknownFronts } from './front.ts';
import { type LinePrefix, lineShape, readPrefix, TRACEBACK_START, withoutRequestText } from './lineinfo.ts';
import { splitJoined } from './normalise.ts';
import {
  applyFrequent,
  applyMilestone,
  CAPTURE_PROGRESS,
  type FrequentKind,
  fileBase,
  initialPhase,
  lastFrequent,
  type PhaseState,
  phaseByRule,
  reportedCall,
} from './phase.ts';
import {
  clientError,
  embeddedException,
  excusesTraceback,
  failureRecord,
  goesOn,
  mildRecord,
  ncclReturnTrace,
  ncclWarn,
  routineFailure,
  sameTarget,
  servingSurvives,
  WRAP_MAX_LINE,
  wrappedOnto,
} from './records.ts';
import {
  buildEvidence,
  chooseRoot,
  classification,
  dedupKey,
  detailOf,
  evidenceLine,
  exitedClassification,
  formatDuration,
  MAX_EVIDENCE,
  shortHash,
} from './result.ts';
import { type FailureRecord, frameless, stampless, type Traceback, TracebackTracker } from './tracebacks.ts';
import type { Category, Classification, Diagnosis, Evidence, Phase, Signature } from './types.ts';

/** Lines processed one by one after anything crash-like, so tracebacks are read whole. */
const ATTENTION_LINES = 30;
/** A root printed before its traceback (CUDA device asserts) borrows rank and frames from one within this. */
const PENDING_LINES = 50;
const MAX_EXTRA_ROOT_LINES = 2;

export const DEFAULT_STALL_MS: Partial<Record<Phase, number>> = {
  unknown: 10 * 60_000,
  startup: 10 * 60_000,
  weight_load: 20 * 60_000,
  kv_alloc: 10 * 60_000,
  cuda_graph_capture: 10 * 60_000,
  warmup: 15 * 60_000,
  prefill: 15 * 60_000,
  decode: 15 * 60_000,
};

interface Candidate {
  sig: Signature;
  /** Other root signatures that matched the same line (a capture failure wrapping an OOM). */
  alsoMatched: Signature[];
  ev: Evidence;
  more: Evidence[];
  prefixRank: number | null;
  tb: Traceback | null;
  pendingUntil: number;
  phaseAt: Phase;
  /**
   * Every line it matched was logged at warning level or below (records.ts, mildRecord): a program that warns goes
   * on, so a server that then got ready or served a batch went past it, as past a `transient` signature's line.
   */
  mild: boolean;
  /** The first line's own words, its wrappers and log prefix taken off, and whether it was only a warning. */
  said: string;
  warned: boolean;
  /** The first line it matched that was not only a warning, when the first was. */
  firm: Evidence | null;
}

interface Hang {
  phase: Phase;
  ms: number;
  last: Evidence | null;
}

/** How the server process ended, when the caller knows (a crash is never `none` when it exited non-zero). */
/** The signals a stop sends (systemd, docker, kill(1), a scheduler): SIGTERM, then SIGKILL after its grace. */
const STOP_SIGNALS = new Set(['SIGTERM', 'SIGKILL', 'SIGINT']);
/** 128+N for those signals: what a shell reports for a process they ended (the lifecycle's judgeEnd reads it too). */
export const STOP_STATUSES: ReadonlySet<number> = new Set([137, 143, 130]);

/** A record logged at warning level or below that ends with a colon: the lines after it are its detail. */
function introducesDetail(line: string): boolean {
  return /:\s*$/.test(line) && mildRecord(readPrefix(line), line);
}

/** A KeyboardInterrupt: the process was interrupted by SIGINT, it did not fail (Python's default SIGINT handler). */
function interrupted(raised: RaisedException | null | undefined): boolean {
  return raised?.short === 'KeyboardInterrupt';
}

/** The traceback is a KeyboardInterrupt, or an exception raised while one was handled (chained to it). */
function interruptedIn(tb: Traceback): boolean {
  for (let t: Traceback | null = tb, n = 0; t && n < 8; t = t.chainedTo, n++) if (interrupted(t.raised)) return true;
  return false;
}

export interface ProcessExit {
  code: number | null;
  signal: string | null;
}

/** A C++ `terminate called after throwing` waiting for its `what():` line. */
interface PendingNative {
  type: string;
  header: Evidence;
  rank: number | null;
  until: number;
}

/** An exception whose class comes from an exception rule rather than a signature. */
interface RuledException {
  rule: ExceptionRule;
  tb: Traceback;
  exc: Evidence;
  raised: RaisedException;
}

/** How far after a ValidationError's line its first validator's error is (the line right after it). */
const VALIDATOR_LINES = 1;
/** A source line that raises, as a traceback shows it under its frame (indented). */
const RAISE_STATEMENT = /^\s+raise [A-Za-z_][\w.]*(?:\(|$)/;
/** A call whose argument is an f-string with a placeholder: source code, whatever error words its template has. */
const FSTRING_CALL = /\w\(f["'][^"'\n]{0,200}\{[A-Za-z_][\w.]{0,60}(?:![rsa])?(?::[^{}\n]{0,20})?\}/;
const WHAT_WITHIN = 3;
/** libstdc++'s `  what():  msg` (libstdc++-v3/libsupc++/vterminate.cc, __verbose_terminate_handler). */
const WHAT_ALONE = /^ {1,4}what\(\): {2}(\S.*)$/;
/** Joined lines split so far, remembered to give evidence the log's own line numbers back (bounded). */
const MAX_SPLITS = 10_000;

/**
 * A log line that was split into pieces (see splitJoined). The engine numbers each piece as a line of its own, so
 * the reader's "next line" logic holds inside it; `at` is the first piece's number there, `line` the log's own.
 */
interface Split {
  at: number;
  pieces: number;
  line: number;
}
const IGNORED = /^Exception ignored in\b/;
/**
 * How far after a notice's last line its own stack can start: NumPy's guard ends its banner with a blank line and
 * writes `Traceback (most recent call last):` right after it (numpy/core/_multiarray_umath.py, __getattr__).
 */
const NOTICE_STACK_LINES = 3;
interface Matched {
  benign: boolean;
  /** The benign signature that matched. */
  notice?: Signature;
  roots: Signature[];
  consequences: Signature[];
}
const NOTHING_MATCHED: Readonly<Matched> = { benign: true, roots: [], consequences: [] };
// c10::Error's what() is its message, then where it was raised and the C++ stack: `Exception raised from recvBytes at
// .../c10d/Utils.hpp:676 (most recent call first):` and `frame #0: c10::Error::Error(...) + 52 (0x... in libc10.so)`
// (pytorch c10/util/Exception.cpp, Error::compute_what; the frames from c10/util/Backtrace.cpp). Those lines belong to
// the message printed before them, at that message's level: they state no failure of their own (a frame's
// `c10::Error::Error` is the constructor's name), whatever level a wrapper puts in front of every line.
const C10_BACKTRACE = /^\s*(?:Exception raised from \S+ at \S+ \(most recent call first\):|frame #\d+: )/;
/** The lines a parent's report of one death spans. */
const DEATH_REPORT_LINES = 3;
/** A line that reports how a process exited (its code or signal), not what failed in it. */
const EXIT_REPORT =
  /\bexit(?:ed)? (?:with )?(?:exit )?(?:code|status)\b|\bnon-zero exit\b|\bexited on signal\b|\bsignal \d/i;

export interface EngineOptions {
  catalog: Catalog;
  exit?: ProcessExit;
  stallMs?: Partial<Record<Phase, number | null>>;
  clock?: () => number;
  /** Start as if the ready line had been read (classify.ts, ClassifierOptions.serving). */
  serving?: boolean;
}

// An excerpt starts where the copier's selection did, often mid-line (corpus/README.md). A first line that starts in
// lower case with no record prefix or `name: ` label of its own can be the rest of a line whose start was cut, and
// its level with it. When a later line states the same words whole, logged at warning level or below (the same
// message another process printed, as each rank and Ray worker prints its own), the cut line was that message: no
// failure record (`libnccl.so.2: cannot open shared object file: ...`, the rest of vLLM's `INFO ... Failed to import
// NCCL library: libnccl.so.2: cannot open ...`, which its Ray worker logs again at INFO). The same words means the same
// but for the numbers in them (a repeated warning names the next request, rank or block). A label of its own is a
// lower-case word (`error: `, `fatal: `); one in mixed case is a function's name, as C++ loggers put before their
// message, and can be the rest of one cut (`ntextBlocks: ` of `storeContextBlocks: `). A cut line no later line
// repeats keeps what its words state.
const CUT_REST = /^[a-z](?![a-z\d_-]{0,30}: )/;
/** A line's words with each run of digits the same, to compare a message printed again about another request. */
const sameWords = (s: string) => s.replace(/\d+/g, '0');
/** Shorter than this, a fragment is found inside too many lines to say which one it was cut from. */
const CUT_REST_MIN = 24;

/** True when the log's first line reads as the rest of a line cut at its start (CUT_REST). */
function cutAtStart(prefix: LinePrefix, lineNo: number): boolean {
  return lineNo === 1 && !prefix.record && CUT_REST.test(prefix.body) && prefix.body.trim().length >= CUT_REST_MIN;
}

export class ClassifierEngine {
  readonly catalog: Catalog;
  private readonly stallMs: Partial<Record<Phase, number | null>>;
  private readonly clock: () => number;
  private readonly phase: PhaseState = initialPhase();
  private readonly tracebacks = new TracebackTracker();
  private readonly candidates = new Map<string, Candidate>();
  private pending: Candidate[] = [];
  private death: Evidence | null = null;
  private deathPhase: Phase = 'unknown';
  private deathRank: number | null = null;
  /** The line right after `death` that says how that process ended (`Exit code: -9`), or null. */
  private deathExit: Evidence | null = null;
  /** The traceback whose line reported the death (vLLM's EngineDeadError is an exception line), or null. */
  private deathTb: Traceback | null = null;
  private attentionUntil = 0;
  private linesRead = 0;
  private lastProgressMs: number;
  private lastLine: Evidence | null = null;
  private hang: Hang | null = null;
  private native: PendingNative | null = null;
  /** The last line fed (the streaming reader feeds every line; the fast scan says which line came before). */
  private prev: { lineNo: number; text: string } | null = null;
  /** The last line the pre-filter let through (feed). */
  private gatedLine = 0;
  /** Wrappers learnt from the log itself (front.ts), taken off every line before it is read. */
  private readonly fronts = new UnknownFronts();
  /** The log line that continued a warning's message hard-wrapped onto it (records.ts, wrappedOnto), and its engine line. */
  private wrapLine = 0;
  private wrapAt = 0;
  /** The last NCCL WARN line, until the next line says whether NCCL returned its error (records.ts). */
  private ncclWarn: { prefix: LinePrefix; ev: Evidence } | null = null;
  /** The first line's words, when it read as the rest of a cut line that stated a failure (CUT_REST). */
  private cutFirst: string | null = null;
  private exit: ProcessExit | null;
  /**
   * The server's own line saying a stop signal reached it (SGLang's `SIGTERM received. signum=...`), or null: what it
   * does after it (its process tree killed, itself last; a peer's connection reset as it goes) is that stop's end.
   */
  private stopSignal: Evidence | null = null;
  /** The last line of a benign notice whose own stack follows it (schema.ts, stack_follows). */
  private noticeStackAt = -Infinity;
  /** The last traceback read as such a notice's own stack. */
  private noticeTb: Traceback | null = null;
  /** The line (engine numbering) right after a warning that introduces its detail (introducesDetail), or -1. */
  private detailAt = -1;
  /** Pieces beyond the first of every split line so far: the engine's line numbers run this far ahead of the log's. */
  private shift = 0;
  private readonly splits: Split[] = [];

  constructor(opts: EngineOptions) {
    this.catalog = opts.catalog;
    this.exit = opts.exit ?? null;
    this.stallMs = { ...DEFAULT_STALL_MS, ...opts.stallMs };
    this.clock = opts.clock ?? Date.now;
    this.lastProgressMs = this.clock();
    if (opts.serving) applyMilestone(this.phase, { kind: 'ready' });
  }

  /** Streaming entry point: a line just arrived (the clock says when). */
  push(line: string, lineNo: number): void {
    this.lastProgressMs = this.clock();
    this.hang = null;
    if (line.trim() !== '') this.lastLine = evidenceLine(lineNo, line);
    this.feed(line, lineNo);
  }

  /**
   * Classify one line. Lines that fail the pre-filter only move the prefill/decode/runtime phase. `before`: the line
   * before it, from a reader that did not feed that one (the fast scan skips lines); null when none was read.
   */
  feed(raw: string, lineNo: number, before?: string | null): void {
    if (lineNo > this.linesRead) this.linesRead = lineNo;
    let line = this.fronts.strip(raw);
    const given = before !== undefined ? before : this.prev?.lineNo === lineNo - 1 ? this.prev.text : null;
    const prior = given === null ? null : this.fronts.strip(given);
    this.prev = { lineNo, text: raw };
    if (this.inAttention(lineNo) || this.catalog.gate.test(line)) {
      // `logger.exception(msg)` prints its message, then the traceback: a message the pre-filter knows no word of is
      // still the record a cut traceback's missing exception line is read from (tracebacks.ts, cutLogged)
      if (prior !== null && this.gatedLine !== lineNo - 1 && line.includes(TRACEBACK_START)) {
        this.tracebacks.textBefore(readPrefix(withoutRequestText(prior)), {
          line: lineNo - 1 + this.shift,
          text: prior,
        });
      }
      this.gatedLine = lineNo;
      if (line === raw) this.fronts.learn(line);
      // a logged request's text is a user's or the model's, not the server's (a prompt can quote any error)
      line = withoutRequestText(line);
      const at = lineNo + this.shift;
      if (prior !== null && this.wrapsMild(prior, line, lineNo)) {
        this.wrapLine = lineNo;
        this.wrapAt = at;
      }
      // the detail a warning introduces (`... could not be loaded, using the triton kernels. Details:`) is that
      // warning's, at its level: an indented exception line under it is no exception of its own
      this.detailAt = prior !== null && introducesDetail(prior) ? at : -1;
      const pieces = this.splits.length < MAX_SPLITS ? splitJoined(line) : null;
      if (pieces) {
        this.splits.push({ at, pieces: pieces.length, line: lineNo });
        this.shift += pieces.length - 1;
        // a joined line's pieces carry the front of each line it was made of
        pieces.forEach((p, i) => {
          this.processLine(i === 0 ? p : this.fronts.strip(p), at + i);
        });
        return;
      }
      this.processLine(line, at);
      return;
    }
    const kind = lastFrequent(line);
    if (kind) this.frequent(kind);
  }

  /**
   * True when `line` goes on with the message of `before`, a record logged at warning level or below (or a line that
   * already went on with one), hard-wrapped onto it (records.ts, wrappedOnto): nothing of its own in front, only the
   * wrappers the program that printed both put in front of every line (the start of `before`'s front, exactly: only
   * a time stamp's digits may differ; another rank's or container's label is another process's line).
   */
  private wrapsMild(before: string, line: string, lineNo: number): boolean {
    if (before.length > WRAP_MAX_LINE) return false;
    const p = readPrefix(before);
    if (this.wrapLine !== lineNo - 1 && !mildRecord(p, before)) return false;
    const own = readPrefix(line);
    if (own.record || !line.endsWith(own.body)) return false;
    const front = stampless(line.slice(0, line.length - own.body.length));
    return stampless(before.slice(0, front.length)) === front && wrappedOnto(p.body, own.body);
  }

  /** `lineNo` is the log's own line number. */
  inAttention(lineNo: number): boolean {
    return lineNo + this.shift <= this.attentionUntil;
  }

  /** The log's own line number of the engine's line `n` (a piece of a split line is on the line it came from). */
  private logLine(n: number): number {
    let shiftBefore = 0;
    for (let i = this.splits.length - 1; i >= 0; i--) {
      const sp = this.splits[i] as Split;
      if (sp.at > n) continue;
      if (n < sp.at + sp.pieces) return sp.line;
      shiftBefore = sp.at - sp.line + sp.pieces - 1;
      break;
    }
    return n - shiftBefore;
  }

  /** Used by the fast scan for the frequent lines it skipped. */
  frequent(kind: FrequentKind): void {
    applyFrequent(this.phase, kind);
    // (vLLM's stats line is logged on the front end's own timer: the first one after a worker died still counts that
    // interval's tokens, so it goes past only what a server serves past, not a traceback)
    if (kind !== 'generated') this.tracebacks.survived();
    if (kind === 'prefill' || kind === 'decode' || kind === 'generated') this.servedPast();
  }

  /**
   * The scheduler ran a batch: what the server serves past (`transient`) was survived. A request answered 2xx is not
   * enough (one streamed since before the failure can end after it; a dev case's server answered one between two
   * failed health checks).
   */
  private servedPast(): void {
    // called for every batch line: nothing to do (and nothing allocated) while there is no candidate
    if (this.candidates.size === 0) return;
    this.wentPast((c) => c.sig.transient || c.mild);
  }

  /** Drops the candidates the server has shown it went past. */
  private wentPast(past: (c: Candidate) => boolean): void {
    for (const [id, c] of this.candidates) if (past(c)) this.candidates.delete(id);
    if (this.pending.length > 0) this.pending = this.pending.filter((c) => !past(c));
  }

  setLinesRead(n: number): void {
    if (n > this.linesRead) this.linesRead = n;
  }

  /** The process ended (the caller learnt it from the host): decides between `none` and a crash with no signature. */
  setExit(exit: ProcessExit): void {
    this.exit = exit;
  }

  private processLine(line: string, lineNo: number): void {
    const prefix = readPrefix(line);
    const shape = lineShape(line);
    const ev = evidenceLine(lineNo, line);
    // A frame, or a source line shown under one, is code, not an error that happened: `raise RuntimeError(f"NCCL
    // error ...")` names no cause. Such lines are read only as structure (the reader also takes an unindented line
    // right after a frame that lost its indentation as that frame's source).
    const openBefore = this.tracebacks.current?.open === true;
    // The server is known to serve: its ready line read, or a request answered 2xx with no start-up read (`runtime`).
    const serves = this.serving() || this.phase.phase === 'runtime';
    const started = this.tracebacks.observe(shape, prefix, ev, this.phase.phase, serves);
    const isExc = this.tracebacks.current?.exc?.line === lineNo;
    const codeLine =
      shape.kind === 'frame' ||
      (shape.kind === 'indented' && openBefore && !isExc) ||
      // an excerpt that starts at a frame's source line: an indented `raise X(...)` is a statement, never an
      // exception Python printed (that is `X: message`)
      (shape.kind === 'indented' && !isExc && RAISE_STATEMENT.test(prefix.body)) ||
      // (or whose start it cut: a call with an f-string, `r(f"NCCL error: {error_str}")`, is code wherever it stands)
      (!isExc && FSTRING_CALL.test(prefix.body)) ||
      (shape.kind === 'text' && this.tracebacks.current?.lastSource?.line === lineNo);
    if (started) this.attachPending(started, lineNo);
    // the stack a benign notice prints itself (NumPy's guard for a module built against NumPy 1.x): no crash
    if (started && lineNo - this.noticeStackAt <= NOTICE_STACK_LINES) {
      this.tracebacks.excuse(started, true);
      this.noticeStackAt = -Infinity;
      this.noticeTb = started;
    }
    // A serving process logs the traceback of a failure it survives with the record that says whose it was
    // (`logger.exception(f"Error in request: {e}")` in SGLang's OpenAI server, then a 500 for that request): that
    // traceback is no crash, unless its frames are the server's own loop (the tracker takes the excuse back then). A
    // signature its lines match, or a death, still names one.
    if (started && this.serving() && started.logged && excusesTraceback(started.logged.message)) {
      this.tracebacks.excuse(started);
    }
    // a graceful shutdown cancels the server's tasks, its loops too: their CancelledError is no failure
    if (isExc && this.tracebacks.current && this.cancelledInShutdown(this.tracebacks.current.raised)) {
      this.tracebacks.excuse(this.tracebacks.current, true);
    } else if (isExc && this.tracebacks.current && interruptedIn(this.tracebacks.current)) {
      // Ctrl-C (SIGINT): every process of the server prints its KeyboardInterrupt, and what failed while it was
      // handled (a closed event loop, a peer gone) is chained to it; the signal stopped it
      this.tracebacks.excuse(this.tracebacks.current, true);
      this.interruptedBy(ev);
    } else if (isExc && this.tracebacks.current) this.tracebacks.exceptionRead(this.tracebacks.current);
    let interesting = shape.kind !== 'text' && shape.kind !== 'blank' && this.tracebacks.current?.open === true;
    if (isExc) interesting = true;
    this.readNative(prefix, ev, lineNo);
    // (an indented line outside a traceback is no source line: an exception line a paste indented, ` ValueError: ...`)
    if (
      shape.kind === 'text' ||
      (shape.kind === 'indented' && !openBefore && !shape.dump && !shape.current && this.detailAt !== lineNo)
    )
      this.readBareException(prefix, ev, lineNo);
    this.readContinued(line, lineNo);
    if (codeLine) {
      if (interesting) this.attentionUntil = Math.max(this.attentionUntil, lineNo + ATTENTION_LINES);
      return;
    }

    const milestone = parseMilestone(line);
    if (milestone && milestone.kind !== 'prefill' && milestone.kind !== 'decode') this.milestone(milestone, line, ev);
    else if (!milestone && CAPTURE_PROGRESS.test(line)) this.milestone({ kind: 'graph_begin' });
    const kind = lastFrequent(line);
    if (kind) this.frequent(kind);

    // (the exception a notice's own stack ends in is the notice's too: xformers' `No module named 'triton'` under its
    // warning names no missing module the server needs)
    const ofNotice = this.noticeTb !== null && this.noticeTb.exc?.line === lineNo;
    const { benign, notice, roots, consequences } = ofNotice ? NOTHING_MATCHED : this.match(line);
    if (notice?.stackFollows) this.noticeStackAt = lineNo;
    if (!benign) {
      if (roots.length > 0) {
        this.addCandidate(roots, ev, prefix, lineNo, mildRecord(prefix, line));
        interesting = true;
      } else if (consequences.length > 0) {
        // a death reported over a few lines (`Rank 0 scheduler is dead.` then `Exit code: -9`): the first names what
        // died, the next how it ended (its exit code or signal); both are kept
        const d = this.death;
        if (
          d &&
          !this.deathExit &&
          lineNo - d.line <= DEATH_REPORT_LINES &&
          EXIT_REPORT.test(ev.text) &&
          !EXIT_REPORT.test(d.text)
        ) {
          this.deathExit = ev;
        }
        // (the shell's `Killed` after a stop signal reached the server is that stop's end: SGLang kills its own tree,
        // itself last; a child's failure reported then, `Received sigquit from a child process`, is still one)
        const stopsEnd = this.stopSignal !== null && consequences.every((c) => c.id === 'killed');
        if (!this.death && !stopsEnd) {
          this.death = ev;
          this.deathPhase = this.phase.phase;
          this.deathRank = prefix.rank;
          this.deathTb = this.tracebacks.owning(lineNo, prefix);
        }
        interesting = true;
      } else if (shape.kind === 'text' || (shape.kind === 'indented' && !openBefore)) {
        // (an indented line outside a traceback is no source line: a record whose line a paste indented)
        // (a warning's message hard-wrapped onto this line is more of that warning: feed, wrapsMild)
        if (this.wrapAt !== lineNo && this.readRecord(prefix, ev, lineNo)) interesting = true;
      }
    }
    if (interesting) this.attentionUntil = Math.max(this.attentionUntil, lineNo + ATTENTION_LINES);
  }

  /**
   * An exception line outside any traceback (the excerpt kept only it, or a logger printed it alone): read as a
   * traceback without frames, so its type and message decide as they would with them.
   */
  private readBareException(prefix: LinePrefix, ev: Evidence, lineNo: number): void {
    if (IGNORED.test(prefix.body)) {
      this.tracebacks.ignoreNext(lineNo);
      return;
    }
    const cur = this.tracebacks.current;
    if (cur?.exc?.line === lineNo || cur?.open) return;
    if (cur?.exc && lineNo - cur.exc.line <= 1) return;
    const raised = parseExceptionLine(prefix.body);
    // the exception a benign notice's own code prints right under it, its stack left out (schema.ts, stack_follows)
    if (raised && lineNo - this.noticeStackAt <= NOTICE_STACK_LINES) {
      this.noticeStackAt = -Infinity;
      return;
    }
    // a client's error a serving server answered with a 4xx (`openai.BadRequestError: Error code: 400 - ...`)
    if (raised && this.serving() && clientError(raised.type)) return;
    if (interrupted(raised)) {
      this.interruptedBy(ev);
      return;
    }
    if (raised && !this.cancelledInShutdown(raised)) {
      this.tracebacks.native(ev, ev, raised, prefix.rank, this.phase.phase);
      // the lines after it are read whole: one may continue its message (tracebacks.ts, continues)
      this.attentionUntil = Math.max(this.attentionUntil, lineNo + ATTENTION_LINES);
    }
  }

  /**
   * A line that continued an exception's message (Python prints a message's own newlines; a paste hard-wraps a long
   * one): the signatures read the message whole, as they read it when the lines were one (joined). A signature that
   * only the whole message matches names the exception line as the root; one that a line of it matches alone keeps
   * that line.
   */
  private readContinued(line: string, lineNo: number): void {
    const tb = this.tracebacks.continuing(lineNo);
    if (!tb?.exc || !tb.raised) return;
    const whole = tb.raised.type === '' ? tb.raised.message : `${tb.raised.type}: ${tb.raised.message}`;
    // a line cut inside a word (a hard wrap at the screen's width) is the exception line's own text: what it matches,
    // the exception line states
    const alone = new Set(this.tracebacks.continuedInWord(lineNo) ? [] : this.match(line).roots.map((s) => s.id));
    const roots = this.match(whole).roots.filter((s) => !this.candidates.has(s.id) && !alone.has(s.id));
    if (roots.length > 0) this.addCandidate(roots, tb.exc, readPrefix(tb.exc.text), tb.exc.line);
  }

  /**
   * Python raises KeyboardInterrupt in a process that SIGINT reached (Ctrl-C in its terminal, `kill -INT`): someone
   * stopped it, as a SIGTERM stops SGLang (`SIGTERM received`); what follows (its peers' errors as they go, an exit
   * by a signal) is that stop's end.
   */
  private interruptedBy(ev: Evidence): void {
    if (!this.stopSignal) this.stopSignal = ev;
    // (as a stop line does, milestone(): the failure records before it did not end it)
    this.tracebacks.carriedOn();
    applyMilestone(this.phase, { kind: 'shutdown' });
  }

  /**
   * An asyncio task's cancellation after the server said it shuts down (SGLang's `SIGTERM received` / `Gracefully
   * exiting...`): the shutdown cancelling its tasks, no failure (asyncio raises CancelledError in every task it cancels).
   */
  private cancelledInShutdown(raised: RaisedException | null | undefined): boolean {
    return this.phase.phase === 'shutdown' && raised?.short === 'CancelledError';
  }

  /**
   * A record that states a failure with no traceback (records.ts): kept until the server carries on. Lines that are
   * part of a traceback (its exception line and what continues it) or an exception line of their own are read there.
   */
  private readRecord(prefix: LinePrefix, ev: Evidence, lineNo: number): boolean {
    if (this.cutFirst !== null && lineNo > 1) this.readCutAgain(prefix, ev.text);
    if (
      this.tracebacks.owning(lineNo, prefix) ||
      this.tracebacks.continued(lineNo) ||
      parseExceptionLine(prefix.body) ||
      C10_BACKTRACE.test(prefix.body)
    )
      return false;
    // a failure of one request (or a client's, or an asyncio task's) is answered with an error by a server that
    // serves, which serves on
    const survives = this.serving() && servingSurvives(prefix.body);
    const read = survives ? null : failureRecord(prefix, ev.text);
    const raised = this.cancelledInShutdown(read) ? null : read;
    if (raised && cutAtStart(prefix, lineNo)) this.cutFirst = prefix.body.trim();
    if (!raised) {
      const warn = this.ncclWarn;
      this.ncclWarn = null;
      if (ncclReturnTrace(prefix.body)) {
        // NCCL returns the error its WARN reported: that WARN is the failure
        if (warn) this.recordFailure(warn.prefix, warn.ev, { type: '', short: '', message: warn.prefix.body.trim() });
        return true;
      }
      // `Retrying request after 1 failed attempts`: the failures before it are being retried, not the end
      if (goesOn(prefix.body)) this.tracebacks.carriedOn();
      // a failure the program logs at DEBUG or TRACE level is one it handles routinely (a health check it repeats):
      // no failure itself, and it handles the earlier failures of the same target (the worker it names), no other
      else if (routineFailure(prefix, ev.text)) {
        const tb = this.tracebacks;
        tb.records = tb.records.filter((r) => !sameTarget(r.ev.text, prefix.body));
      }
      if (!ncclWarn(prefix.body)) return false;
      this.ncclWarn = { prefix, ev };
      return true;
    }
    this.recordFailure(prefix, ev, raised);
    return true;
  }

  /** A later line that states the cut first line's words whole at a mild level: that line was its message (CUT_REST). */
  private readCutAgain(prefix: LinePrefix, text: string): void {
    const cut = sameWords(this.cutFirst as string);
    const body = sameWords(prefix.body.trim());
    if (body.length <= cut.length || !body.endsWith(cut) || !mildRecord(prefix, text)) return;
    this.cutFirst = null;
    this.tracebacks.dropRecordAt(1);
  }

  private recordFailure(prefix: LinePrefix, ev: Evidence, raised: RaisedException): void {
    this.tracebacks.record({ ev, raised, rank: prefix.rank, phaseAt: this.phase.phase });
  }

  /** `terminate called after throwing an instance of 'T'` then `what(): msg`: a C++ exception, read as one. */
  private readNative(prefix: LinePrefix, ev: Evidence, lineNo: number): void {
    // the type and its what() on one line (joined, or Ray's terminate handler): the exception is read whole
    const whole = prefix.body.includes('what():') ? cppExceptionOnOneLine(prefix.body) : null;
    if (whole) {
      this.native = null;
      this.tracebacks.native(ev, ev, whole, prefix.rank, this.phase.phase);
      return;
    }
    const type = cppExceptionType(prefix.body);
    if (type) {
      this.native = { type, header: ev, rank: prefix.rank, until: lineNo + WHAT_WITHIN };
      return;
    }
    const n = this.native;
    if (!n) {
      // the `what():` line alone, its terminate line cut off above it (an excerpt's start): libstdc++'s handler
      // prints it only there, indented and with two blanks after the colon (vterminate.cc); its type is unknown
      const alone = WHAT_ALONE.exec(prefix.body);
      if (alone) this.tracebacks.native(ev, ev, cppException('', alone[1] ?? ''), prefix.rank, this.phase.phase);
      return;
    }
    if (lineNo > n.until) {
      this.native = null;
      return;
    }
    const msg = whatMessage(prefix.body);
    if (msg === null) return;
    this.native = null;
    this.tracebacks.native(n.header, ev, cppException(n.type, msg), n.rank ?? prefix.rank, this.phase.phase);
  }

  private milestone(m: Milestone, line = '', ev?: Evidence): void {
    const wasReady = this.phase.ready;
    applyMilestone(this.phase, m);
    // got ready (SGLang's ready line, or a server whose ready line is uvicorn's): past its warnings, and past what it
    // serves past (`transient`: a supervisor's failed poll while it loaded)
    if (!wasReady && this.phase.ready) this.wentPast((c) => c.mild || c.sig.transient);
    if (ev && !this.stopSignal && m.kind === 'shutdown' && stopSignalled(line)) this.stopSignal = ev;
    // A run that starts after it (a service log with restarts) is no longer stopping.
    else if (this.stopSignal && this.phase.phase !== 'shutdown') this.stopSignal = null;
    // A failing process goes on to shut down: its own shutdown lines (uvicorn's `Shutting down` after a vLLM API
    // server's failure record) are no sign that it carried on past a failure. A stop signal's lines (SGLang's
    // `SIGTERM received`) are: the server ran on until someone stopped it.
    if (m.kind !== 'shutdown' || stopSignalled(line)) this.tracebacks.carriedOn();
    // ready again: a server that died of a traceback (diesWithServer) was started again
    if (m.kind === 'ready') this.tracebacks.survived(true);
  }

  private match(line: string): Matched {
    const roots: Signature[] = [];
    const consequences: Signature[] = [];
    const signatures = this.catalog.signatures;
    // Only the signatures with an anchor in the line can match it; their regexes run, in catalog order.
    for (const i of this.catalog.gate.candidates(line)) {
      const sig = signatures[i] as Signature;
      if (!sig.regexes.some((re) => re.test(line))) continue;
      if (sig.role === 'benign') return { benign: true, notice: sig, roots: [], consequences: [] };
      if (sig.role === 'root') roots.push(sig);
      else consequences.push(sig);
    }
    roots.sort((a, b) => b.priority - a.priority);
    return { benign: false, roots, consequences };
  }

  private addCandidate(roots: Signature[], ev: Evidence, prefix: LinePrefix, lineNo: number, mild = false): void {
    const [sig, ...alsoMatched] = roots as [Signature, ...Signature[]];
    const existing = this.candidates.get(sig.id);
    if (existing) {
      if (existing.more.length < MAX_EXTRA_ROOT_LINES) existing.more.push(ev);
      existing.mild &&= mild;
      if (existing.warned && !mild) existing.firm ??= ev;
      return;
    }
    const tb = this.tracebacks.owning(lineNo, prefix);
    const c: Candidate = {
      sig,
      alsoMatched,
      ev,
      more: [],
      prefixRank: prefix.rank,
      tb,
      pendingUntil: tb ? 0 : lineNo + PENDING_LINES,
      phaseAt: this.phase.phase,
      mild,
      said: prefix.body.trim(),
      warned: mild,
      firm: null,
    };
    this.candidates.set(sig.id, c);
    if (!tb) this.pending.push(c);
  }

  private attachPending(tb: Traceback, lineNo: number): void {
    for (const c of this.pending) if (lineNo <= c.pendingUntil) c.tb = tb;
    this.pending = [];
  }

  /** The server got ready or serves requests (the milestones say so). */
  private serving(): boolean {
    return this.phase.ready || this.phase.phase === 'prefill' || this.phase.phase === 'decode';
  }

  /**
   * True when the log shows a crash: exactly when result() names one (not `none`, and no hang). The cheap cases first
   * (a signature, a death, a failed exit always name a crash); a traceback or a failure record is read as result()
   * reads it.
   */
  crashed(): boolean {
    if (this.candidates.size > 0 || this.death !== null || this.exitedBadly()) return true;
    if (this.tracebacks.unsurvived.length === 0 && this.tracebacks.records.length === 0) return false;
    return this.crash() !== null;
  }

  /**
   * The process exited 0 by itself (no signal): a failure record alone is then a failure it survived. A traceback, a
   * signature or a death still name a crash (a launcher can exit 0 after its server died).
   */
  private exitedCleanly(): boolean {
    const e = this.exit;
    return e !== null && e.signal === null && e.code === 0;
  }

  private exitedBadly(): boolean {
    const e = this.exit;
    if (e === null) return false;
    // Ended by SIGKILL or SIGTERM after its log said a stop signal reached it: the stop's end (the shell's status
    // 128+N for signal N: 137, 143, 130 for the SIGINT of a Ctrl-C). An abort (134) or a segfault (139) during the drain is still a crash.
    if (this.stopSignal && (STOP_SIGNALS.has(e.signal ?? '') || STOP_STATUSES.has(e.code ?? -1))) return false;
    return e.signal !== null || (e.code !== null && e.code !== 0);
  }

  /** The best exception rule over the tracebacks since the server last made progress (ties: the earliest). */
  private ruled(): RuledException | null {
    let best: RuledException | null = null;
    for (const tb of this.tracebacks.unsurvived) {
      if (!tb.exc || !tb.raised) continue;
      const rule = matchException(this.catalog.exceptionRules, tb.raised, tb.frames, tb.phaseAt);
      if (rule && (!best || rule.priority > best.rule.priority)) best = { rule, tb, exc: tb.exc, raised: tb.raised };
      // a validator's error a ValidationError carries is that error, raised where the config was built: a rule that
      // reads it (an architecture the server does not support) says more than the validation that wrapped it, and
      // its line is the root
      const v = tb.validator ?? this.validatorAfter(tb);
      const inner = v ? matchException(this.catalog.exceptionRules, v.raised, tb.frames, tb.phaseAt) : null;
      if (v && inner && (!best || inner.priority > best.rule.priority)) {
        best = { rule: inner, tb, exc: v.ev, raised: v.raised };
      }
    }
    return best;
  }

  /** True when `b`'s class names the same failure more precisely than `a`'s (the catalog's `overlaps`). */
  private beats(b: Category, a: Category): boolean {
    return this.catalog.overlaps.get(a)?.has(b) ?? false;
  }

  /** A stall: no line for longer than the phase allows. Returns the hang classification when there is one. */
  checkStall(nowMs: number): Classification | null {
    if (this.crashed()) return null;
    const limit = this.stallMs[this.phase.phase];
    if (limit === undefined || limit === null) return null;
    const idle = nowMs - this.lastProgressMs;
    if (idle < limit) return null;
    this.hang = { phase: this.phase.phase, ms: idle, last: this.lastLine };
    return this.result();
  }

  private best(): Candidate | null {
    let best: Candidate | null = null;
    for (const c of this.candidates.values()) {
      if (
        !best ||
        c.sig.priority > best.sig.priority ||
        (c.sig.priority === best.sig.priority && c.ev.line < best.ev.line)
      ) {
        best = c;
      }
    }
    if (!best) return null;
    // A more precise class for the same failure wins over priority (an OOM that failed capture is an OOM).
    const chosen = best;
    const better = [...this.candidates.values()].filter((c) => this.beats(catOf(c), catOf(chosen)));
    better.sort((x, y) => y.sig.priority - x.sig.priority || x.ev.line - y.ev.line);
    return better[0] ?? best;
  }

  result(): Classification {
    return this.diagnosis().classification;
  }

  diagnosis(): Diagnosis {
    const d = this.diagnose();
    if (this.splits.length === 0) return d;
    const back = (n: number) => this.logLine(n);
    const lines = (t: string) => t.replace(/\bline (\d+)/g, (_m, n: string) => `line ${back(Number(n))}`);
    return {
      ...d,
      classification: {
        ...d.classification,
        ...(d.stopped && { summary: lines(d.classification.summary) }),
        evidence: d.classification.evidence.map((e) => ({ ...e, line: back(e.line) })),
      },
      reason: lines(d.reason),
      ...(d.stopped && { stopped: { ...d.stopped, line: back(d.stopped.line) } }),
    };
  }

  /** The crash the log shows (the root's signature, rule, traceback, record, death or exit), or null. */
  private crash(): Diagnosis | null {
    const c = this.best();
    const r = this.ruled();
    if (r && (!c || this.ruleWins(r.rule, c))) return this.fromRule(r);
    if (c) {
      const d = c.sig.wraps || c.sig.generic ? this.fromWrapper(c) : this.fromCandidate(c);
      // a cause logged at warning level is no crash yet: the server may go past it, and one that exits 0 did (not
      // with any other root beside it: an abort or a segfault after a CUDA warning is the process dying of it)
      const allMild = [...this.candidates.values()].every((x) => x.mild);
      return allMild && !this.death && !this.exitedBadly() ? { ...d, survivable: true } : d;
    }
    const cut = this.fromCutTraceback();
    if (cut) return cut;
    const tb = this.tracebacks.firstFatal((text) => this.match(text).consequences.length > 0);
    // A record logged once a stop signal reached the server is its shutdown's (a peer's connection reset as it goes).
    const stop = this.stopSignal;
    const records = stop ? this.tracebacks.records.filter((r) => r.ev.line < stop.line) : this.tracebacks.records;
    if (tb) {
      // A traceback cut off before its exception line (an excerpt's end) states no cause; a failure record printed
      // before its header in the same failure (NCCL's WARN that NCCL then returned, an error record) does: it is the
      // root, as the exception line would have been, and the traceback still says the process failed (no survival).
      const before =
        tb.exc || tb.logged?.states || this.death ? undefined : records.filter((r) => r.ev.line < tb.header.line).pop();
      if (!before) return this.fromUnknownCrash(tb);
      const { survivable: _survived, ...d } = this.fromRecord(before);
      return d;
    }
    const record = records.find((r) => r.raised.type !== '') ?? records[0];
    // a failure record alone, from a process that exited 0 by itself, was survived
    if (record && !this.exitedCleanly()) return this.fromRecord(record);
    if (this.death) return this.fromUnknownCrash(null);
    if (this.exitedBadly()) return this.fromExit(this.exit as ProcessExit);
    return null;
  }

  private diagnose(): Diagnosis {
    const crash = this.crash();
    if (crash) return crash;
    if (this.hang) return this.fromHang(this.hang);
    const phase = this.phase.phase;
    // A server that reached the ready line is known good; one still starting may yet crash.
    const confidence = this.phase.ready ? 0.95 : 0.8;
    const stop = this.stopSignal;
    return {
      classification: {
        category: 'none',
        phase,
        summary: stop
          ? `No crash: stopped by a signal (line ${stop.line}), ${this.linesRead} lines read`
          : `No crash: ${this.linesRead} lines read, last phase ${phase}`,
        evidence: [],
        rank: null,
        dedupKey: 'none',
        confidence,
      },
      signature: null,
      hang: false,
      linesRead: this.linesRead,
      reason: stop
        ? `a stop signal reached the server (line ${stop.line}) and no crash came before it (confidence ${confidence})`
        : `no crash signature, uncaught exception or failed exit in ${this.linesRead} lines (confidence ${confidence})`,
      ...(stop && { stopped: stop }),
    };
  }

  /**
   * A traceback cut off before its exception line, at an `assert` source line or after an error record logged with
   * it: the condition or the record is matched as the missing exception would be.
   */
  private fromCutTraceback(): Diagnosis | null {
    for (const tb of this.tracebacks.unsurvived) {
      const cut = this.tracebacks.cutAssert(tb) ?? this.tracebacks.cutLogged(tb);
      if (!cut) continue;
      const { roots } = this.match(cut.exc.text);
      const [sig, ...alsoMatched] = roots;
      if (sig) {
        const c: Candidate = {
          sig,
          alsoMatched,
          ev: cut.exc,
          more: [],
          prefixRank: tb.rank,
          tb,
          pendingUntil: 0,
          phaseAt: tb.phaseAt,
          mild: false,
          said: readPrefix(cut.exc.text).body.trim(),
          warned: false,
          firm: null,
        };
        return this.fromCandidate(c);
      }
      const rule = matchException(this.catalog.exceptionRules, cut.raised, tb.frames, tb.phaseAt);
      if (rule) return this.fromRule({ rule, tb, exc: cut.exc, raised: cut.raised });
    }
    return null;
  }

  /**
   * Where the failure happened, by the phase rule (phase.ts): the milestones before it (`at`), else the frames of its
   * own traceback, then of the other tracebacks of the same failure (a chained exception, the scheduler's traceback
   * printed after a worker's) and a hang's stack dump, else the phase its class has when it happens at one point
   * only (the signature's or rule's `phase`, else the catalog's `default_phases`).
   */
  private phaseOf(tb: Traceback | null, at: Phase, category: Category, named?: Phase, own?: string): Phase {
    // the call a worker's record says it was running goes outside its traceback's frames (phase.ts reportedCall);
    // `own`: the root line itself, when it is such a record (`Exception in worker VllmWorkerProcess while processing
    // method determine_num_available_blocks: CUDA out of memory ...`, with no traceback after it)
    const stack = (t: Traceback) => [...reportedCall(t.logged?.ev.text), ...t.frames];
    const mine = [...reportedCall(own), ...(tb ? stack(tb) : [])];
    const others = this.tracebacks.unsurvived.filter((o) => o !== tb).map(stack);
    const records = this.tracebacks.records.map((r) => reportedCall(r.ev.text));
    return phaseByRule({
      milestones: at,
      stacks: [mine, ...others, ...records, ...this.tracebacks.dumps],
      onePoint: named ?? this.catalog.defaultPhases[category],
    });
  }

  /** A signature wins ties: it was written for that message. Overlaps decide between classes either way. */
  private ruleWins(rule: ExceptionRule, c: Candidate): boolean {
    const sigCat = catOf(c);
    if (sigCat === rule.category) return false;
    if (this.beats(rule.category, sigCat)) return true;
    if (this.beats(sigCat, rule.category)) return false;
    return rule.priority > c.sig.priority;
  }

  /** `wrapperPhase`: the phase of the signature whose message wrapped this exception, where the rule names none. */
  private fromRule(r: RuledException, wrapperPhase?: Phase): Diagnosis {
    const { rule, tb, exc } = r;
    const phase = this.phaseOf(tb, tb.phaseAt, rule.category, rule.phase ?? wrapperPhase);
    const header = tb.header.line !== exc.line ? tb.header : null;
    const evidence = buildEvidence([exc], header, tb.frames);
    const confidence = this.death ? 0.8 : 0.7;
    const f = matchingFrame(rule, tb.frames);
    // (a frame the copier cut to `File "x.py", ...` names its file only)
    const fn = f?.func ? `${f.func} (${fileBase(f.file)})` : f ? fileBase(f.file) : '';
    const where = f ? ` ${rule.where === 'any' ? 'under' : 'raised in'} ${fn}` : '';
    return {
      classification: classification(
        rule.category,
        phase,
        tb.rank,
        `${rule.title}: ${detailOf(exc.text)}`,
        evidence,
        dedupKey(rule.category, rule.id, exc.text),
        confidence,
      ),
      signature: { id: rule.id, meaning: rule.meaning, nextSteps: rule.nextSteps, upstream: [], title: rule.title },
      hang: false,
      linesRead: this.linesRead,
      reason: `exception rule ${rule.id}: ${r.raised.type || 'a failure record'}${where}, line ${exc.line} (confidence ${confidence})`,
    };
  }

  /**
   * A generic signature whose message wraps its cause (`Capture cuda graph failed: <cause>`): the cause is read as an
   * exception line, and a class the overlaps rank above the signature's names the crash (its line still the root).
   * When nothing follows the match, or the signature only says how the process ended (`generic`: `Fatal Python error:
   * Aborted`), the exception or failure record printed just before it in the same failure is the cause, and the root.
   */
  private fromWrapper(c: Candidate): Diagnosis {
    const cause = c.sig.wraps ? wrappedCause(c.sig, c.ev.text) : '';
    if (cause !== '') {
      // the cause is read as a line of its own: by the signatures (`Assertion failed: ...` at a C++ source line), and
      // as an exception by the rules; a class the overlaps rank above the wrapper's names the crash, the signature
      // winning a tie as it does on any line (ruleWins)
      const bySig = this.match(cause)
        .roots.filter((s) => this.beats(s.category ?? 'other', catOf(c)))
        .map((sig): Candidate => ({ ...c, sig, alsoMatched: [c.sig] }))[0];
      const raised = parseExceptionLine(cause) ?? embeddedException(cause) ?? { type: '', short: '', message: cause };
      const rule = matchException(this.catalog.exceptionRules, raised, c.tb?.frames ?? [], c.phaseAt);
      if (rule && this.beats(rule.category, catOf(c)) && (!bySig || this.ruleWins(rule, bySig))) {
        const tb = c.tb ?? frameless(c.ev, c.ev, raised, c.prefixRank, c.phaseAt);
        return this.fromRule({ rule, tb, exc: c.ev, raised }, c.sig.phase);
      }
      return this.fromCandidate(bySig ?? c);
    }
    // the exceptions and failure records printed before it in the same failure (records as frameless tracebacks)
    const near = (line: number) => line < c.ev.line && c.ev.line - line <= PENDING_LINES;
    const before = [
      ...this.tracebacks.unsurvived.filter((t) => t !== c.tb && t.exc !== null && near(t.exc.line)),
      ...this.tracebacks.records
        // a record that itself reports an exit (a launcher's `a non-zero exit code ...`) is the same report, no cause
        .filter((r) => near(r.ev.line) && !EXIT_REPORT.test(r.raised.message))
        .map((r) => frameless(r.ev, r.ev, r.raised, r.rank, r.phaseAt)),
    ]
      .sort((a, b) => (a.exc?.line ?? 0) - (b.exc?.line ?? 0))
      .pop();
    if (!before?.exc) return this.fromCandidate(c);
    const raised = before.raised;
    const rule = raised ? matchException(this.catalog.exceptionRules, raised, before.frames, before.phaseAt) : null;
    if (rule && raised && this.beats(rule.category, catOf(c))) {
      return this.fromRule({ rule, tb: before, exc: before.exc, raised }, c.sig.phase);
    }
    return this.fromCandidate({ ...c, ev: before.exc, more: [], tb: before.frames.length > 0 ? before : c.tb });
  }

  private fromExit(e: ProcessExit): Diagnosis {
    const { reason, ...c } = exitedClassification(this.phase.phase, e, this.lastLine);
    return { classification: c, signature: null, hang: false, linesRead: this.linesRead, reason };
  }

  private fromCandidate(found: Candidate): Diagnosis {
    const c = stating(found);
    const category = c.sig.category ?? 'other';
    const frames = c.tb?.frames ?? [];
    const named = c.sig.phase ?? c.alsoMatched.find((s) => s.phase !== undefined)?.phase;
    const phase = this.phaseOf(c.tb, c.phaseAt, category, named, c.ev.text);
    const rank = c.prefixRank ?? c.tb?.rank ?? null;
    const header = c.tb && c.tb.header.line !== c.ev.line ? c.tb.header : null;
    const evidence = buildEvidence([c.ev, ...c.more].slice(0, MAX_EVIDENCE), header, frames);
    let confidence = c.sig.priority >= 80 ? 0.95 : c.sig.priority >= 60 ? 0.85 : c.sig.priority >= 40 ? 0.7 : 0.55;
    if (!this.death && !c.tb) confidence -= 0.1;
    const sig = c.sig;
    return {
      classification: classification(
        category,
        phase,
        rank,
        sig.title ?? detailOf(c.ev.text),
        evidence,
        dedupKey(category, sig.id, c.ev.text),
        confidence,
      ),
      signature: {
        id: sig.id,
        meaning: sig.meaning,
        nextSteps: sig.nextSteps,
        upstream: sig.upstream,
        ...(sig.source !== undefined && { source: sig.source }),
        ...(sig.title !== undefined && { title: sig.title }),
      },
      hang: false,
      linesRead: this.linesRead,
      reason: `signature ${sig.id} matched line ${c.ev.line} (confidence ${Math.round(confidence * 100) / 100})`,
    };
  }

  private fromUnknownCrash(tb: Traceback | null): Diagnosis {
    // An exception line cut off: the innermost frame says where it broke, better than the header.
    // Else the error record logged right before its header, a wrapper's line that states nothing never.
    const innermost = tb?.frames[tb.frames.length - 1];
    // a death reported before the traceback's own record (`Rank 2 scheduler is dead.` / `Exit code: -9`, then
    // `Stage initialization failed` and its traceback) came first: what failed after it is its consequence. Only a
    // death that says how the process ended (its exit code or signal): a server's notice that its engine is gone
    // (vLLM's `MQLLMEngine is already dead, terminating server process`) can come before the engine's own error,
    // which another process logs at the same moment.
    const ended = this.death !== null && (this.deathExit !== null || EXIT_REPORT.test(this.death.text));
    const deathFirst = ended && !tb?.exc && (this.death?.line ?? 0) < (tb?.logged?.ev.line ?? tb?.header.line ?? 0);
    // the first failure record a few lines before a traceback cut before its exception, with the record's own advice
    // after it (SGLang's `Piecewise CUDA Graph failed with error: ...`, then `To work around this error, add ...`,
    // then `Scheduler hit an exception:` and frames): it states what the cut exception line would have
    const header = tb?.header.line ?? 0;
    const recordBefore = tb
      ? (this.tracebacks.records.find((r) => r.ev.line < header && header - r.ev.line <= PENDING_LINES)?.ev ?? null)
      : null;
    const root = tb
      ? (chooseRoot([
          tb.exc,
          deathFirst ? this.death : null,
          tb.logged?.states ? tb.logged.ev : null,
          tb.exc ? null : recordBefore,
          // a launcher's report that a process died (`Rank 0 scheduler is dead.`) says more than a frame of its own
          // traceback
          this.death,
          innermost ? { line: innermost.line, text: innermost.text } : null,
          tb.header,
        ]) as Evidence)
      : (this.death as Evidence);
    // a death reported by an exception line (EngineDeadError): the frames of its own traceback say where it surfaced
    const phase = this.phaseOf(tb ?? this.deathTb, tb ? tb.phaseAt : this.deathPhase, 'other');
    const rank = tb ? tb.rank : this.deathRank;
    // a death reported over two lines: the line that says how the process ended (its exit code or signal) is the
    // root, as the corpus labels it; the one that names what died follows it in the evidence and leads the summary
    const exit = root === this.death ? this.deathExit : null;
    const roots = exit ? [exit, root] : [root];
    const evidence = tb ? buildEvidence(roots, tb.header, tb.frames) : roots;
    const confidence = tb && this.death ? 0.5 : 0.35;
    return {
      classification: classification(
        'other',
        phase,
        rank,
        exit ? `${detailOf(root.text)} (${detailOf(exit.text, 60)})` : detailOf(root.text),
        evidence,
        dedupKey('other', tb ? 'traceback' : 'process-death', (roots[0] as Evidence).text),
        confidence,
      ),
      signature: null,
      hang: false,
      linesRead: this.linesRead,
      reason: tb
        ? `${tb.raised ? `uncaught ${tb.raised.type}` : 'a traceback'} that no signature or exception rule names, line ${root.line} (confidence ${confidence})`
        : `the process died (line ${(roots[0] as Evidence).line}) with no cause printed (confidence ${confidence})`,
    };
  }

  /**
   * The validator's error on the line after a ValidationError's own that its message did not take as its next line
   * (the exception was a piece of a split line, its wrappers left on the line it came from): a record of its own.
   */
  private validatorAfter(tb: Traceback): Traceback['validator'] {
    const exc = tb.exc;
    if (!exc || tb.raised?.short !== 'ValidationError') return null;
    const next = this.tracebacks.records.find((r) => r.ev.line > exc.line && r.ev.line - exc.line <= VALIDATOR_LINES);
    return next && pydanticError(readPrefix(next.ev.text).body) ? { ev: next.ev, raised: next.raised } : null;
  }

  /**
   * A failure record and no traceback: the exception it names decides as a traceback's would (without frames); a
   * record that names none is `other`, its line the root. Survivable (a serving process logs errors and serves on)
   * unless a death was read too (`Killed`, a scheduler reported dead): that process did not serve on, so the crash is
   * told when read, the death line its evidence beside the record.
   */
  private fromRecord(rec: FailureRecord): Diagnosis {
    const death = this.death;
    const ended = (d: Diagnosis): Diagnosis =>
      death
        ? {
            ...d,
            classification: {
              ...d.classification,
              evidence: [
                ...d.classification.evidence.filter((e) => e.line !== death.line).slice(0, MAX_EVIDENCE - 1),
                death,
              ],
            },
          }
        : { ...d, survivable: true };
    const rule =
      rec.raised.type !== '' || rec.raised.message !== ''
        ? matchException(this.catalog.exceptionRules, rec.raised, [], rec.phaseAt)
        : null;
    const tb = frameless(rec.ev, rec.ev, rec.raised, rec.rank, rec.phaseAt);
    if (rule) return ended(this.fromRule({ rule, tb, exc: rec.ev, raised: rec.raised }));
    const phase = this.phaseOf(null, rec.phaseAt, 'other');
    const confidence = this.death ? 0.5 : 0.4;
    const named = rec.raised.type !== '' ? `${rec.raised.type} in a` : 'a';
    return ended({
      classification: classification(
        'other',
        phase,
        rec.rank,
        detailOf(rec.ev.text),
        [rec.ev],
        dedupKey('other', 'failure-record', rec.ev.text),
        confidence,
      ),
      signature: null,
      hang: false,
      linesRead: this.linesRead,
      reason: `${named} failure record with no traceback that no signature or exception rule names, line ${rec.ev.line} (confidence ${confidence})`,
    });
  }

  private fromHang(h: Hang): Diagnosis {
    return {
      classification: {
        category: 'watchdog_timeout',
        phase: h.phase,
        summary: `no progress for ${formatDuration(h.ms)}${h.phase === 'unknown' ? '' : ` during ${h.phase}`} (hang)`,
        evidence: h.last ? [h.last] : [],
        rank: null,
        dedupKey: `watchdog_timeout/hang/${shortHash(h.phase)}`,
        confidence: 0.5,
      },
      signature: null,
      hang: true,
      linesRead: this.linesRead,
      reason: `no log line for ${formatDuration(h.ms)} during ${h.phase} (confidence 0.5)`,
    };
  }
}

/** The text after a wrapping signature's match in its line: the cause it wraps (`: ` and spaces taken off). */
function wrappedCause(sig: Signature, text: string): string {
  for (const re of sig.regexes) {
    const m = re.exec(text);
    if (!m) continue;
    const rest = text.slice(m.index + m[0].length);
    const end = sig.wrapsUntil?.exec(rest)?.index ?? rest.length;
    return rest
      .slice(0, end)
      .replace(/^[\s:.,;-]+/, '')
      .trim();
  }
  return '';
}

/**
 * The candidate with its root on the line of its matches that states the failure (restatedByException,
 * wrapsException, firmly), the line it was first found on kept beside it; else as it was.
 */
function stating(c: Candidate): Candidate {
  const line = restatedByException(c) ?? wrapsException(c) ?? firmly(c);
  return line ? { ...c, ev: line, more: [c.ev, ...c.more.filter((e) => e.line !== line.line)] } : c;
}

/**
 * A line a logger printed before the traceback it belongs to, when the exception raised after it matches the same
 * signature and either restates it (c10's `[E socket.cpp:957] [c10d] The client socket has timed out ...`, then
 * `torch.distributed.DistNetworkError: The client socket has timed out ...`) or the line was only a warning (vLLM's
 * `WARNING ... Failed to import from vllm._C with ImportError(...)`, which it goes on from, before the ImportError that
 * ended the program): the traceback's exception is the root, as it is of any traceback. A line that says more than the
 * exception (a CUDA driver error naming the kernel's file) stays the root.
 */
function restatedByException(c: Candidate): Evidence | null {
  const exc = c.tb?.exc;
  if (!exc || !c.tb || c.ev.line >= c.tb.header.line || !c.more.some((e) => e.line === exc.line)) return null;
  // the logger's message without its bracketed prefixes (`[E socket.cpp:957] [c10d] `), whole in the exception's
  // (its closing full stop aside: c10 logs `... (127.0.0.1, 43771).`, the exception says `... 43771)`)
  const said = c.said
    .replace(/^(?:\s*\[[^\]]{1,80}\])+\s*/, '')
    .trim()
    .replace(/\.$/, '');
  const restated = said.length >= MIN_RESTATED && exc.text.includes(said);
  return restated || c.warned ? exc : null;
}

/**
 * A record that wraps an exception's message (`... | ERROR | worker.py:243 | Error while running run_fit for run 2:
 * The server socket has failed to listen ...`), then that exception's own line (`torch.distributed.DistNetworkError:
 * The server socket has failed to listen ...`), its frames cut or none: the exception line is the root, as it is of
 * the traceback it ends.
 */
function wrapsException(c: Candidate): Evidence | null {
  for (const e of c.more) {
    const raised = parseExceptionLine(readPrefix(e.text).body);
    if (!raised || raised.type === '' || raised.message.length < MIN_RESTATED) continue;
    // (or the record is part of that message: an excerpt cut inside the record's line keeps only its end)
    const message = raised.message.trim();
    if (c.said.includes(message) || (c.said.length >= MIN_RESTATED && message.includes(c.said))) return e;
  }
  return null;
}

/**
 * A warning first, then the same failure logged as an error (vLLM V0: `WARNING ... Failed to pickle inputs of failed
 * execution: CUDA error: an illegal memory access ...`, then `ERROR ... RuntimeError('Error in model execution: CUDA
 * error: ...')`): the error record is the root.
 */
function firmly(c: Candidate): Evidence | null {
  return c.warned ? c.firm : null;
}
/** Shorter than this, a message in both lines says too little to be the same statement. */
const MIN_RESTATED = 20;

function catOf(c: Candidate): Category {
  return c.sig.category ?? 'other';
}
