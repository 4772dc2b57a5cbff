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
