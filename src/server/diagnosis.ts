// The lifecycle's view of a crash: the shape of the classifier's result (issue 3's catalog-driven classifier
// implements it; until one is plugged in, `basicDiagnoser` names the final exception line).
export interface Diagnosis {
  category: string;
  phase: string;
  summary: string;
  evidence: Array<{ line: number; text: string }>;
  rank: number | null;
  dedupKey: string;
  confidence: number;
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

const EXCEPTION = /^(?:\[[^\]]*\]\s*)?([A-Za-z_.]*(?:Error|Exception)|AssertionError)(?::\s?(.*))?$/;
const DEATH =
  /Received sigquit from a child process|SIGQUIT received|scheduler is dead|Initialization failed|address already in use/;

export const basicDiagnoser: DiagnoserFactory = () => {
  let last: { line: number; text: string } | undefined;
  let dead = false;
  return {
    push(line, lineNo) {
      if (EXCEPTION.test(line.trim())) last = { line: lineNo, text: line.trim() };
      if (DEATH.test(line)) {
        dead = true;
        last ??= { line: lineNo, text: line.trim() };
      }
    },
    crashed: () => dead,
    result: () =>
      last
        ? {
            category: 'other',
            phase: 'unknown',
            summary: last.text,
            evidence: [last],
            rank: null,
            dedupKey: 'other',
            confidence: 0.3,
          }
        : {
            category: 'none',
            phase: 'unknown',
            summary: 'no crash seen in the log',
            evidence: [],
            rank: null,
            dedupKey: 'none',
            confidence: 0.5,
          },
  };
};
