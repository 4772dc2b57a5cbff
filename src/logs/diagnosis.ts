// A crash as the lifecycle, alerts, smoke and reports see it: the shape of the classifier's result. The catalog-driven classifier
// (src/logs/classify, adapted in src/lifecycle/classifier.ts) implements it.
export interface Diagnosis {
  category: string;
  phase: string;
  summary: string;
  evidence: Array<{ line: number; text: string }>;
  rank: number | null;
  dedupKey: string;
  confidence: number;
  /** Why, in one line: the rule or signature that decided, the line it read, how sure it is. */
  reason?: string;
  /** Only a failure record names the crash: a process that exited 0 survived it (showsCrash). */
  survivable?: true;
  /** The server's own line saying a stop signal reached it, no crash before it: its end is that stop's. */
  stopped?: { line: number; text: string };
}

/** The log says a stop signal reached the server and no crash came before it (classify/engine.ts, stopSignal). */
export function stoppedFromOutside(d: Diagnosis): d is Diagnosis & { stopped: NonNullable<Diagnosis['stopped']> } {
  return d.stopped !== undefined && d.category === 'none';
}

/**
 * Whether an attempt whose log says `d` and whose server exited with `exitCode` (null: not known) crashed by its log:
 * a class other than `none`, except a failure record alone from a server that exited 0 by itself, which survived it
 * (a serving process logs errors it answers and serves on). A non-zero exit is a crash whatever the log says; the
 * callers add that.
 */
export function showsCrash(d: Diagnosis, exitCode: number | null): boolean {
  return d.category !== 'none' && !(d.survivable && exitCode === 0);
}

/**
 * Whether a log read while its server may still run already shows a crash, to be told now rather than at the exit:
 * one that showsCrash names whatever the exit (even 0). A failure record alone (`survivable`) is not one yet: a
 * serving process logs errors it answers and serves on, so it waits for the exit and showsCrash decides then with the
 * exit code; a traceback, signature or death read after it is told as soon as it is read.
 */
export function crashedBeforeExit(diag: Pick<Diagnoser, 'crashed' | 'result'>): boolean {
  return diag.crashed() && showsCrash(diag.result(), 0);
}

/** A survivable diagnosis (showsCrash) of a server that exited 0: no crash, the record kept as its evidence. */
export function survived(d: Diagnosis): Diagnosis {
  const { survivable: _, ...rest } = d;
  return {
    ...rest,
    category: 'none',
    dedupKey: 'none',
    summary: `exited 0; a failure record it survived: ${d.summary}`,
    reason: `a failure record alone, and the server exited 0 by itself${d.reason ? ` (${d.reason})` : ''}`,
  };
}

export interface Diagnoser {
  push(line: string, lineNo: number): void;
  /**
   * True as soon as the log names a crash, a failure record alone included: whether to tell it before the server's
   * exit is known is crashedBeforeExit's question.
   */
  crashed(): boolean;
  result(): Diagnosis;
  /** A hang: no progress for too long in a startup phase; null while all is well. */
  stalled?(nowMs: number): Diagnosis | null;
}

/** `serving`: the diagnoser reads from after the server's ready line (ClassifierOptions.serving). */
export interface DiagnoserOptions {
  serving?: boolean;
}

export type DiagnoserFactory = (opts?: DiagnoserOptions) => Diagnoser;
