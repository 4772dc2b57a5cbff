// Literal text a regex cannot match without. The classifier's pre-filter is one combined regex of these literals:
// a line that contains none of them cannot match any signature, so it is skipped without running the ~80
// per-signature regexes. The extraction is conservative: when unsure, a character ends the literal run.

const MIN_ANCHOR_BYTES = 4;

/**
 * One mandatory literal per top-level alternative of `source`, or null when some alternative has no literal of at
 * least 4 bytes (then the signature must give `keywords`).
 */
export function extractAnchors(source: string): string[] | null {
  const branches = splitTopLevel(source);
  const out: string[] = [];
  for (const branch of branches) {
    const lit = longestLiteral(branch);
    if (Buffer.byteLength(lit, 'utf8') < MIN_ANCHOR_BYTES) return null;
    out.push(lit);
  }
  return out;
}

function splitTopLevel(source: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
    } else if (c === '[') {
      i = skipClass(source, i) - 1;
    } else if (c === '(') {
      depth++;
    } else if (c === ')') {
      depth--;
    } else if (c === '|' && depth === 0) {
      parts.push(source.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(source.slice(start));
  return parts;
}

/** Index just past the `]` closing the class that opens at `open`. */
function skipClass(source: string, open: number): number {
  let i = open + 1;
  if (source[i] === '^') i++;
  if (source[i] === ']') i++;
  for (; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === ']') return i + 1;
  }
  return source.length;
}

function skipGroup(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '[') i = skipClass(source, i) - 1;
    else if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return source.length;
}

const QUANTIFIER = /^(?:[?*+]|\{\d+(?:,\d*)?\})\??/;
// Escapes that stand for a class, an assertion or a code point rather than the next character itself.
const NON_LITERAL_ESCAPE = /[dDwWsSbBnrtfv0-9cxukpP]/;

function longestLiteral(branch: string): string {
  let best = '';
  let run = '';
  const end = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  let i = 0;
  while (i < branch.length) {
    const c = branch[i] as string;
    let literal: string | null = null;
    let next = i + 1;
    if (c === '\\') {
      const n = branch[i + 1];
      if (n === undefined) break;
      next = i + 2;
      if (!NON_LITERAL_ESCAPE.test(n)) literal = n;
    } else if (c === '[') {
      next = skipClass(branch, i);
    } else if (c === '(') {
      next = skipGroup(branch, i);
    } else if ('.^$'.includes(c)) {
      // any-char and anchors: not literal text
    } else if (QUANTIFIER.test(branch.slice(i))) {
      // a quantifier with nothing literal before it (after a group or class): skip it
      next = i + (QUANTIFIER.exec(branch.slice(i))?.[0].length ?? 1);
    } else {
      literal = c;
    }
    const q = QUANTIFIER.exec(branch.slice(next));
    if (literal !== null && q) {
      const quant = q[0];
      // `?`, `*` and `{0,...}` make the character optional; `+` and `{n>0}` keep it but end the run.
      const optional = quant.startsWith('?') || quant.startsWith('*') || /^\{0[,}]/.test(quant);
      if (!optional) run += literal;
      end();
      i = next + quant.length;
      continue;
    }
    if (literal === null) {
      end();
      const q2 = QUANTIFIER.exec(branch.slice(next));
      i = next + (q2 ? q2[0].length : 0);
      continue;
    }
    run += literal;
    i = next;
  }
  end();
  return best;
}

/** Regex source matching `text` literally; ASCII letters become `[aA]` classes when `ci`. */
export function literalSource(text: string, ci: boolean): string {
  let out = '';
  for (const ch of text) {
    if (ci && /[a-zA-Z]/.test(ch)) out += `[${ch.toLowerCase()}${ch.toUpperCase()}]`;
    else out += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return out;
}

/** Drop anchors made redundant by a shorter one they contain (a line with the longer has the shorter). */
export function minimiseAnchors(anchors: { text: string; ci: boolean }[]): { text: string; ci: boolean }[] {
  const uniq = new Map<string, { text: string; ci: boolean }>();
  for (const a of anchors) {
    const key = `${a.ci ? 'i' : 's'}:${a.ci ? a.text.toLowerCase() : a.text}`;
    if (!uniq.has(key)) uniq.set(key, { text: a.ci ? a.text.toLowerCase() : a.text, ci: a.ci });
  }
  const list = [...uniq.values()];
  return list.filter(
    (a) =>
      !list.some(
        (b) =>
          b !== a &&
          b.text.length < a.text.length &&
          (b.ci ? a.text.toLowerCase().includes(b.text) : !a.ci && a.text.includes(b.text)),
      ),
  );
}

interface AnchorEntry {
  text: string;
  /** Indices (in catalog order) of the signatures this anchor stands for. */
  sigs: number[];
}

/** Every occurrence of a set of literals in one string: one combined regex finds where to look, `startsWith` says which. */
class LiteralFinder {
  private readonly re: RegExp;
  /** Entries by their first UTF-16 unit: every literal that may start where the regex stopped is checked there. */
  private readonly byFirst = new Map<number, AnchorEntry[]>();

  constructor(entries: AnchorEntry[]) {
    this.re = new RegExp(entries.map((e) => literalSource(e.text, false)).join('|'), 'g');
    for (const e of entries) {
      const k = e.text.charCodeAt(0);
      const list = this.byFirst.get(k) ?? [];
      list.push(e);
      this.byFirst.set(k, list);
    }
  }

  each(s: string, hit: (sigs: number[]) => void): void {
    const re = this.re;
    re.lastIndex = 0;
    for (let m = re.exec(s); m; m = re.exec(s)) {
      const at = m.index;
      for (const e of this.byFirst.get(s.charCodeAt(at)) ?? []) if (s.startsWith(e.text, at)) hit(e.sigs);
      // Literals can overlap (`out of memory` inside `CUDA out of memory`): look again one unit on.
      re.lastIndex = at + 1;
    }
  }
}

/**
 * Which signatures a line can match, found in one pass: a signature is a candidate when any of its anchors occurs
 * in the line (case-sensitive anchors in the line itself, case-insensitive ones in its lower case), exactly as
 * testing each signature's anchors in turn would say, without 100+ `includes` calls per line.
 */
export class AnchorIndex {
  private readonly cs: LiteralFinder | null;
  private readonly ci: LiteralFinder | null;
  private readonly stamp: Uint32Array;
  private generation = 0;

  constructor(signatures: readonly { anchors: readonly { text: string; ci: boolean }[] }[]) {
    const cs = new Map<string, AnchorEntry>();
    const ci = new Map<string, AnchorEntry>();
    signatures.forEach((s, i) => {
      for (const a of s.anchors) {
        const table = a.ci ? ci : cs;
        const e = table.get(a.text) ?? { text: a.text, sigs: [] };
        if (e.sigs[e.sigs.length - 1] !== i) e.sigs.push(i);
        table.set(a.text, e);
      }
    });
    this.cs = cs.size > 0 ? new LiteralFinder([...cs.values()]) : null;
    this.ci = ci.size > 0 ? new LiteralFinder([...ci.values()]) : null;
    this.stamp = new Uint32Array(signatures.length);
  }

  /** Indices, ascending (catalog order), of the signatures with an anchor in `line`. */
  candidates(line: string): number[] {
    const out: number[] = [];
    const gen = this.nextGeneration();
    const hit = (sigs: number[]) => {
      for (const i of sigs) {
        if (this.stamp[i] === gen) continue;
        this.stamp[i] = gen;
        out.push(i);
      }
    };
    this.cs?.each(line, hit);
    this.ci?.each(line.toLowerCase(), hit);
    return out.length > 1 ? out.sort((a, b) => a - b) : out;
  }

  private nextGeneration(): number {
    this.generation = (this.generation + 1) >>> 0;
    if (this.generation === 0) {
      this.stamp.fill(0);
      this.generation = 1;
    }
    return this.generation;
  }
}
