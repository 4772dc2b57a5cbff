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
  /** True as soon as the log shows the server failing. */
  crashed(): boolean;
  result(): Diagnosis;
  /** A hang: no progress for too long in a startup phase; null while all is well. */
  stalled?(nowMs: number): Diagnosis | null;
}

export type DiagnoserFactory = () => Diagnoser;
