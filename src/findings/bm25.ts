// An in-memory BM25 index over sections, with phrases. Knowledge bases are a few hundred sections at most, so every
// query scores every section: simple, exact and deterministic, with no index maintenance beyond rebuilding a source.
import type { Section } from './markdown.ts';
import { tokenize } from './tokens.ts';

/** One weighted query term; more than one token means a phrase (the tokens in order, stop words skipped). */
export interface QueryTerm {
  tokens: string[];
  weight: number;
}

export interface IndexedSection {
  section: Section;
  /** The heading path shown and matched: without the document's title when the file has one (see `hasTitle`). */
  path: string[];
  /** Position of the source in the index's source list, then of the section in its file: the tie-breakers. */
  sourceOrder: number;
  sectionOrder: number;
  body: Positions;
  own: Positions;
  ancestors: Positions;
  length: number;
}

type Positions = Map<string, number[]>;

// A word in a section's own heading says more about the section than the same word in its body; the parent
// headings' words say about as much as the body does (they scope the section: "GLM-5 on SM120 > NaN in decode").
const OWN_HEADING_WEIGHT = 3;
const ANCESTOR_WEIGHT = 1;
const K1 = 1.2;
const B = 0.75;

export function indexSection(
  section: Section,
  sourceOrder: number,
  sectionOrder: number,
  dropTitle = false,
): IndexedSection {
  const hp = section.headingPath;
  const path = dropTitle && hp.length > 1 ? hp.slice(1) : [...hp];
  // The title's own section (the preface under it) is about the whole document, so its heading gets no boost.
  const isTitle = dropTitle && hp.length === 1;
  const own = positions(isTitle ? '' : (hp[hp.length - 1] ?? ''));
  const ancestors = positions(isTitle ? (hp[0] ?? '') : path.slice(0, -1).join(' \n '));
  const body = positions(section.text);
  let length = 0;
  for (const p of body.values()) length += p.length;
  for (const p of own.values()) length += p.length;
  return { section, path, sourceOrder, sectionOrder, body, own, ancestors, length };
}

/**
 * True when the file's first heading is over all the others (`# Project findings` and everything below it): a
 * document title. Its words are in every section's path, so they match everything and say nothing.
 */
export function hasTitle(sections: readonly Section[]): boolean {
  const headed = sections.filter((s) => s.headingPath.length > 0);
  const first = headed[0];
  if (first?.headingPath.length !== 1 || headed.length < 2) return false;
  return (
    headed.every((s) => s.headingPath[0] === first.headingPath[0]) &&
    headed.slice(1).every((s) => s.headingPath.length > 1)
  );
}

export interface Scored {
  doc: IndexedSection;
  score: number;
}

/** Every section with a body and a positive score, best first; equal scores keep source then file order. */
export function rank(docs: readonly IndexedSection[], query: readonly QueryTerm[]): Scored[] {
  const searchable = docs.filter((d) => d.section.text !== '');
  const n = searchable.length;
  if (n === 0 || query.length === 0) return [];
  const avg = searchable.reduce((s, d) => s + d.length, 0) / n || 1;
  const scores = new Array<number>(n).fill(0);
  for (const term of query) {
    const tfs = searchable.map((d) => termFrequency(d, term.tokens));
    const df = tfs.filter((tf) => tf > 0).length;
    if (df === 0) continue;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    tfs.forEach((tf, i) => {
      if (tf === 0) return;
      const norm = K1 * (1 - B + (B * searchable[i]!.length) / avg);
      scores[i]! += term.weight * idf * ((tf * (K1 + 1)) / (tf + norm));
    });
  }
  return searchable
    .map((doc, i) => ({ doc, score: scores[i]! }))
    .filter((s) => s.score > 0)
    .sort((a, b) => compareScored(a, b));
}

export function compareScored(a: Scored, b: Scored): number {
  // Scores that differ only by float noise count as equal, so ties really fall back to file order.
  if (Math.abs(a.score - b.score) > 1e-9) return b.score - a.score;
  return a.doc.sourceOrder - b.doc.sourceOrder || a.doc.sectionOrder - b.doc.sectionOrder;
}

/** Inverse document frequency of each term over the searchable sections, for weighting excerpt windows. */
export function idfs(docs: readonly IndexedSection[], query: readonly QueryTerm[]): number[] {
  const searchable = docs.filter((d) => d.section.text !== '');
  const n = searchable.length;
  return query.map((term) => {
    const df = searchable.filter((d) => termFrequency(d, term.tokens) > 0).length;
    return df === 0 ? 0 : Math.log(1 + (n - df + 0.5) / (df + 0.5));
  });
}

function termFrequency(d: IndexedSection, tokens: readonly string[]): number {
  return (
    countPhrase(d.body, tokens) +
    OWN_HEADING_WEIGHT * countPhrase(d.own, tokens) +
    ANCESTOR_WEIGHT * countPhrase(d.ancestors, tokens)
  );
}

export function positions(text: string): Positions {
  const map: Positions = new Map();
  for (const t of tokenize(text)) {
    const list = map.get(t.term);
    if (list) list.push(t.pos);
    else map.set(t.term, [t.pos]);
  }
  return map;
}

export function countPhrase(map: Positions, tokens: readonly string[]): number {
  const first = map.get(tokens[0] ?? '');
  if (!first) return 0;
  if (tokens.length === 1) return first.length;
  const rest = tokens.slice(1).map((t) => map.get(t));
  if (rest.some((r) => r === undefined)) return 0;
  let count = 0;
  for (const p of first) if (rest.every((r, i) => r!.includes(p + i + 1))) count++;
  return count;
}
