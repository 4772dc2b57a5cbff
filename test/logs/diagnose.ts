// The class-facts tests' way to ask the classifier about a few lines: the diagnosis's class, phase, root line, whether
// a serving server survives it, and why; and a Python traceback built from frames.
import { diagnoseText } from '../../src/logs/classify/index.ts';

export function diagnose(lines: string[]) {
  const d = diagnoseText([...lines, ''].join('\n'));
  return {
    category: d.classification.category,
    phase: d.classification.phase,
    root: d.classification.evidence[0]?.text,
    /** The root's line number in the log, or null when nothing was read as a root. */
    line: d.classification.evidence[0]?.line ?? null,
    survivable: d.survivable === true,
    reason: d.reason,
  };
}

/** A traceback whose frames are [file, function, source line], ending in the exception line `exc`. */
export const tb = (frames: [string, string, string][], exc: string): string[] => [
  'Traceback (most recent call last):',
  ...frames.flatMap(([file, func, src]) => [`  File "${file}", line 10, in ${func}`, `    ${src}`]),
  exc,
];
