// Python tracebacks as SGLang prints them: a header (often `[... TP3] Scheduler hit an exception: Traceback ...`),
// frames, then the exception line. Several ranks print one each; chained exceptions print several in a row. Only
// what the classifier needs is kept, bounded: the header, up to MAX_FRAMES frames and the exception line.

import type { LinePrefix, LineShape } from './lineinfo.ts';
import type { Frame } from './phase.ts';
import type { Evidence, Phase } from './types.ts';

const MAX_FRAMES = 200;
/** Tracebacks kept for `other` since the last sign of life; later ones only matter if a root points at them. */
const MAX_KEPT = 16;
/** Unprefixed lines right after the exception line still belong to it (CUDA prints its hints there). */
const CONTINUATION_LINES = 5;

export interface Traceback {
  header: Evidence;
  rank: number | null;
  frames: Frame[];
  exc: Evidence | null;
  open: boolean;
  /** Milestone phase when the traceback started. */
  phaseAt: Phase;
}

export class TracebackTracker {
  current: Traceback | null = null;
  /** Tracebacks since the server last showed progress, oldest first (the earliest failing rank comes first). */
  unsurvived: Traceback[] = [];
  private chainedFrom: Traceback | null = null;

  /** Feed one processed line; returns the traceback that started on it, if any. */
  observe(shape: LineShape, prefix: LinePrefix, ev: Evidence, phase: Phase): Traceback | null {
    const cur = this.current;
    switch (shape.kind) {
      case 'traceback_start': {
        if (cur?.open) cur.open = false;
        const tb: Traceback = {
          header: ev,
          // A chained traceback repeats no prefix: it belongs to the rank of the one it follows.
          rank: prefix.rank ?? this.chainedFrom?.rank ?? null,
          frames: [],
          exc: null,
          open: true,
          phaseAt: this.chainedFrom?.phaseAt ?? phase,
        };
        this.chainedFrom = null;
        this.current = tb;
        if (this.unsurvived.length < MAX_KEPT) this.unsurvived.push(tb);
        return tb;
      }
      case 'frame':
        if (cur?.open && cur.frames.length < MAX_FRAMES) {
          cur.frames.push({ line: ev.line, text: ev.text, file: shape.file, func: shape.func });
        }
        return null;
      case 'chain':
        if (cur) {
          cur.open = false;
          this.chainedFrom = cur;
        }
        return null;
      case 'text':
        if (cur?.open) {
          cur.open = false;
          // The first unindented line after the frames is the exception; a new log record means it was cut off.
          if (cur.frames.length > 0 && !prefix.record) cur.exc = ev;
        }
        return null;
      default:
        return null;
    }
  }

  /** The traceback a line belongs to: the open one, or the one whose exception line it is or continues. */
  owning(lineNo: number, prefix: LinePrefix): Traceback | null {
    const cur = this.current;
    if (!cur) return null;
    if (cur.open) return cur;
    if (cur.exc && !prefix.record && lineNo - cur.exc.line <= CONTINUATION_LINES) return cur;
    return null;
  }

  /** The server logged progress after these tracebacks: they were not fatal. */
  survived(): void {
    this.unsurvived = [];
    this.chainedFrom = null;
  }

  /**
   * The earliest traceback since the last progress, preferring one whose exception line was seen and is a cause
   * rather than a consequence (`RuntimeError: Initialization failed. Please see the error messages above.`).
   */
  firstFatal(isConsequence: (text: string) => boolean): Traceback | null {
    return (
      this.unsurvived.find((t) => t.exc !== null && !isConsequence(t.exc.text)) ??
      this.unsurvived.find((t) => t.exc !== null) ??
      this.unsurvived[0] ??
      null
    );
  }
}
