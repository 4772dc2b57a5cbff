// From a crash (class, phase, evidence lines, the attempt's flags) or a typed query to weighted query terms.
import type { QueryTerm } from './bm25.ts';
import { CATEGORY_TERMS, flagTerms, PHASE_TERMS } from './categories.ts';
import { evidenceTerms, queryGroups } from './tokens.ts';

/** The part of a classification findings needs (the classifier's `Diagnosis` fits it). */
export interface DiagnosisLike {
  category: string;
  phase?: string;
  summary?: string;
  evidence: Array<{ text: string }>;
}

// The class is the strongest signal: it was decided over the whole log, and it is what the team's headings name.
// Evidence words come next (the exact message a note may quote), then the attempt's flags (which backend, which KV
// dtype) and the phase. Adjacent-word pairs reward a note that quotes the message verbatim.
export const WEIGHTS = {
  category: 2,
  evidence: 1,
  flag: 1.5,
  phase: 1,
  typed: 1,
  pair: 0.5,
  /** Each part of a phrase also counts alone, at this fraction of the phrase's weight. */
  part: 0.5,
} as const;

/** Evidence lines beyond these are traceback frames of the same error; more of them adds noise, not signal. */
const MAX_EVIDENCE_LINES = 12;

export function diagnosisQuery(d: DiagnosisLike, flags: Record<string, string> = {}): QueryTerm[] {
  const category = new Terms();
  for (const t of CATEGORY_TERMS[d.category] ?? []) category.addGroups(queryGroups(t), WEIGHTS.category, true);

  const phase = new Terms();
  for (const t of PHASE_TERMS[d.phase ?? 'unknown'] ?? []) phase.addGroups(queryGroups(t), WEIGHTS.phase, true);

  // The summary usually repeats an evidence line: one group, so the same words are not counted twice.
  const evidence = new Terms();
  const lines = [d.summary ?? '', ...d.evidence.slice(0, MAX_EVIDENCE_LINES).map((e) => e.text)];
  for (const line of lines) {
    const groups = evidenceTerms(line);
    evidence.addGroups(groups, WEIGHTS.evidence, false);
    evidence.addPairs(groups, WEIGHTS.pair);
  }

  const flagged = new Terms();
  for (const [key, value] of Object.entries(flags)) {
    for (const t of flagTerms(key, value)) flagged.addGroups(queryGroups(t), WEIGHTS.flag, true);
  }
  return merge([category, phase, evidence, flagged]);
}

/** A query typed by a person (`glm findings ...`); a crash class name (`cuda_oom`) also brings in its words. */
export function textQuery(text: string): QueryTerm[] {
  const typed = new Terms();
  const expanded = new Terms();
  for (const word of text.split(/\s+/)) {
    const terms = CATEGORY_TERMS[word.toLowerCase()];
    if (terms) for (const t of terms) expanded.addGroups(queryGroups(t), WEIGHTS.typed, true);
  }
  // "quoted words" are one phrase.
  for (const m of text.matchAll(/"([^"]+)"/g)) {
    const flat = queryGroups(m[1]!).flat();
    if (flat.length > 0) typed.add(flat, WEIGHTS.typed * 2);
  }
  const groups = queryGroups(text.replace(/"/g, ' '));
  typed.addGroups(groups, WEIGHTS.typed, false);
  typed.addPairs(groups, WEIGHTS.pair);
  return merge([typed, expanded]);
}

/** Terms of one kind: a term said twice in the same kind counts once, at its highest weight. */
class Terms {
  readonly map = new Map<string, QueryTerm>();

  add(tokens: string[], weight: number): void {
    const key = tokens.join(' ');
    const cur = this.map.get(key);
    if (!cur) this.map.set(key, { tokens, weight });
    else cur.weight = Math.max(cur.weight, weight);
  }

  /** `asPhrase`: the groups together are one phrase (a term like `out of memory`); else each group is a term. */
  addGroups(groups: string[][], weight: number, asPhrase: boolean): void {
    const units = asPhrase ? [groups.flat()] : groups;
    for (const tokens of units) {
      if (tokens.length === 0) continue;
      this.add(tokens, weight);
      if (tokens.length > 1) for (const t of tokens) this.add([t], weight * WEIGHTS.part);
    }
  }

  addPairs(groups: string[][], weight: number): void {
    const flat = groups.flat();
    for (let i = 0; i + 1 < flat.length; i++) this.add([flat[i]!, flat[i + 1]!], weight);
  }
}

/** Kinds add up: a word that is both in the class's vocabulary and in the evidence is a stronger match. */
function merge(kinds: Terms[]): QueryTerm[] {
  const out = new Map<string, QueryTerm>();
  for (const k of kinds) {
    for (const [key, t] of k.map) {
      const cur = out.get(key);
      if (cur) cur.weight += t.weight;
      else out.set(key, { tokens: t.tokens, weight: t.weight });
    }
  }
  return [...out.values()];
}
