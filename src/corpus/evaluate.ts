// Measuring the classifier on labelled cases: per-class precision and recall, the confusion matrix, root-line hit
// rate, phase accuracy and false alarms on healthy logs, plus the cases it got wrong. Used by `npm run eval`.

import { stripWrappers } from '../logs/classify/normalise.ts';
import type { Category, Diagnosis, Phase } from '../logs/classify/types.ts';

export interface LabelledCase {
  id: string;
  source: string;
  kind: 'crash' | 'healthy';
  category: Category;
  phase: Phase;
  root: string | null;
  log: string;
}

export interface CaseResult {
  c: LabelledCase;
  got: Category;
  gotPhase: Phase;
  gotRoot: string | null;
  classRight: boolean;
  rootRight: boolean | null;
  phaseRight: boolean | null;
  reason: string;
}

export interface Report {
  n: number;
  crashes: number;
  healthy: number;
  classRight: number;
  rootRight: number;
  phaseRight: number;
  falseAlarms: number;
  perClass: Map<Category, { tp: number; fp: number; fn: number }>;
  confusion: Map<Category, Map<Category, number>>;
  wrong: CaseResult[];
}

const squash = (s: string): string => stripWrappers(s).replace(/\s+/g, ' ').trim();

/**
 * The root line is found when the classifier's first evidence line holds the labelled root text (or is part of it).
 * The label is an exact substring of the log's line (corpus/README.md), so the line as the log has it is compared
 * first: a label that took part of a logger's prefix (`[core.py:684] TimeoutError`) is still that line's text. Then
 * both without wrappers, for a label taken from a line the evidence shows in another wrapper's words.
 */
export function rootMatches(expected: string, got: string | null): boolean {
  if (got === null) return false;
  if (got.replace(/…$/, '').includes(expected)) return true;
  const e = squash(expected);
  const g = squash(got).replace(/…$/, '');
  return g.includes(e) || (g.length >= 20 && e.includes(g));
}

export function judge(c: LabelledCase, d: Diagnosis): CaseResult {
  const got = d.classification.category;
  const gotRoot = d.classification.evidence[0]?.text ?? null;
  const crash = c.kind === 'crash';
  return {
    c,
    got,
    gotPhase: d.classification.phase,
    gotRoot,
    classRight: got === c.category,
    rootRight: crash && c.root !== null ? rootMatches(c.root, gotRoot) : null,
    phaseRight: crash ? d.classification.phase === c.phase : null,
    reason: d.reason ?? '',
  };
}

export function report(results: readonly CaseResult[]): Report {
  const perClass = new Map<Category, { tp: number; fp: number; fn: number }>();
  const confusion = new Map<Category, Map<Category, number>>();
  const bump = (cat: Category, k: 'tp' | 'fp' | 'fn') => {
    const e = perClass.get(cat) ?? { tp: 0, fp: 0, fn: 0 };
    e[k]++;
    perClass.set(cat, e);
  };
  let classRight = 0;
  let rootRight = 0;
  let phaseRight = 0;
  let falseAlarms = 0;
  const wrong: CaseResult[] = [];
  for (const r of results) {
    const row = confusion.get(r.c.category) ?? new Map<Category, number>();
    row.set(r.got, (row.get(r.got) ?? 0) + 1);
    confusion.set(r.c.category, row);
    if (r.classRight) {
      classRight++;
      bump(r.c.category, 'tp');
    } else {
      bump(r.c.category, 'fn');
      bump(r.got, 'fp');
    }
    if (r.rootRight) rootRight++;
    if (r.phaseRight) phaseRight++;
    if (r.c.kind === 'healthy' && r.got !== 'none') falseAlarms++;
    if (!r.classRight || r.rootRight === false || r.phaseRight === false) wrong.push(r);
  }
  const crashes = results.filter((r) => r.c.kind === 'crash').length;
  return {
    n: results.length,
    crashes,
    healthy: results.length - crashes,
    classRight,
    rootRight,
    phaseRight,
    falseAlarms,
    perClass,
    confusion,
    wrong,
  };
}

const pct = (a: number, b: number): string => (b === 0 ? '-' : `${a}/${b} (${((100 * a) / b).toFixed(1)}%)`);

export function renderReport(title: string, r: Report, opts: { showWrong: boolean }): string {
  const out: string[] = [`## ${title}: ${r.n} cases (${r.crashes} crashes, ${r.healthy} healthy)`, ''];
  out.push(`class right        ${pct(r.classRight, r.n)}`);
  out.push(`root line found    ${pct(r.rootRight, r.crashes)}`);
  out.push(`phase right        ${pct(r.phaseRight, r.crashes)}`);
  out.push(`healthy as crash   ${pct(r.falseAlarms, r.healthy)}`);
  out.push('', 'class                       precision   recall      n');
  const classes = [...new Set([...r.perClass.keys()])].sort();
  for (const cat of classes) {
    const e = r.perClass.get(cat) ?? { tp: 0, fp: 0, fn: 0 };
    const p = e.tp + e.fp === 0 ? '-' : (e.tp / (e.tp + e.fp)).toFixed(2);
    const rc = e.tp + e.fn === 0 ? '-' : (e.tp / (e.tp + e.fn)).toFixed(2);
    out.push(`${cat.padEnd(28)}${p.padEnd(12)}${rc.padEnd(12)}${e.tp + e.fn}`);
  }
  out.push('', 'confusion (row: labelled, then what the classifier said when it differed)');
  for (const [cat, row] of [...r.confusion.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    const misses = [...row.entries()].filter(([g]) => g !== cat).map(([g, n]) => `${g} ${n}`);
    out.push(`${cat.padEnd(28)}${row.get(cat) ?? 0} right${misses.length > 0 ? `; ${misses.join(', ')}` : ''}`);
  }
  if (opts.showWrong && r.wrong.length > 0) {
    out.push('', `wrong (${r.wrong.length}):`);
    for (const w of r.wrong) {
      const bits: string[] = [];
      if (!w.classRight) bits.push(`class ${w.got} (want ${w.c.category})`);
      if (w.rootRight === false) bits.push(`root ${JSON.stringify((w.gotRoot ?? '').slice(0, 100))}`);
      if (w.phaseRight === false) bits.push(`phase ${w.gotPhase} (want ${w.c.phase})`);
      out.push(`- ${w.c.id}: ${bits.join('; ')}${w.reason ? ` [${w.reason}]` : ''}`);
    }
  }
  return out.join('\n');
}
