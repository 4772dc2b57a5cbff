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

interface AnchorVariant {
  /** The anchor as written (lower case when `ci`). */
  text: string;
  ci: boolean;
  /** Indices (in catalog order) of the signatures it stands for; none for a structure anchor. */
  sigs: number[];
  structure: boolean;
}

interface AnchorEntry {
  /** The anchor's lower case: what the finder looks for in the line's lower case. */
  lowered: string;
  variants: AnchorVariant[];
}

interface Found {
  line: string;
  sigs: number[];
  any: boolean;
}

// Anything but printable ASCII and tab (control characters, too, take the careful way).
const NON_ASCII = /[^ -~\t]/;

/**
 * The exact pre-filter and the signature index in one pass over a line: which signatures have an anchor in it (a
 * case-sensitive anchor in the line itself, a case-insensitive one in its lower case, exactly as testing each
 * signature's anchors in turn with `includes` would say), and whether it has any anchor at all, a signature's or one
 * the traceback and milestone readers need (`test`). One combined regex over the line's lower case finds where an
 * anchor may start; `startsWith` says which. The engine asks `test` then `candidates` for the same line, so the last
 * answer is kept.
 */
export class AnchorIndex {
  private readonly finder: RegExp | null;
  /** Entries by their first UTF-16 unit: every anchor that may start where the finder stopped is checked there. */
  private readonly byFirst = new Map<number, AnchorEntry[]>();
  /** Anchors with non-ASCII text: lower-casing can depend on context there, so these are checked with includes. */
  private readonly slow: AnchorVariant[] = [];
  private readonly all: AnchorVariant[] = [];
  private readonly stamp: Uint32Array;
  private generation = 0;
  private last: Found = { line: '', sigs: [], any: false };

  constructor(
    signatures: readonly { anchors: readonly { text: string; ci: boolean }[] }[],
    structure: readonly { text: string; ci: boolean }[] = [],
  ) {
    const variants = new Map<string, AnchorVariant>();
    const add = (a: { text: string; ci: boolean }, sig: number | null) => {
      const text = a.ci ? a.text.toLowerCase() : a.text;
      const key = `${a.ci ? 'i' : 's'}:${text}`;
      const v = variants.get(key) ?? { text, ci: a.ci, sigs: [], structure: false };
      if (sig === null) v.structure = true;
      else if (v.sigs[v.sigs.length - 1] !== sig) v.sigs.push(sig);
      variants.set(key, v);
    };
    signatures.forEach((s, i) => {
      for (const a of s.anchors) add(a, i);
    });
    for (const a of structure) add(a, null);
    const entries = new Map<string, AnchorEntry>();
    for (const v of variants.values()) {
      this.all.push(v);
      if (NON_ASCII.test(v.text)) {
        this.slow.push(v);
        continue;
      }
      const lowered = v.text.toLowerCase();
      const e = entries.get(lowered) ?? { lowered, variants: [] };
      e.variants.push(v);
      entries.set(lowered, e);
      const k = lowered.charCodeAt(0);
      const list = this.byFirst.get(k) ?? [];
      if (!list.includes(e)) list.push(e);
      this.byFirst.set(k, list);
    }
    this.finder =
      entries.size > 0 ? new RegExp([...entries.keys()].map((t) => literalSource(t, false)).join('|'), 'g') : null;
    this.stamp = new Uint32Array(signatures.length);
  }

  /** True when the line has any anchor: a line without one cannot match a signature or a milestone. */
  test(line: string): boolean {
    return this.find(line).any;
  }

  /** Indices, ascending (catalog order), of the signatures with an anchor in `line`. Do not modify. */
  candidates(line: string): readonly number[] {
    return this.find(line).sigs;
  }

  private find(line: string): Found {
    if (this.last.line === line) return this.last;
    const sigs: number[] = [];
    let any = false;
    const gen = this.nextGeneration();
    const hit = (v: AnchorVariant) => {
      any = true;
      for (const i of v.sigs) {
        if (this.stamp[i] === gen) continue;
        this.stamp[i] = gen;
        sigs.push(i);
      }
    };
    const lower = line.toLowerCase();
    if (lower.length !== line.length) {
      // Lower-casing changed the length (a rare letter such as U+0130): positions differ, ask each anchor.
      for (const v of this.all) if (v.ci ? lower.includes(v.text) : line.includes(v.text)) hit(v);
    } else {
      for (const v of this.slow) if (v.ci ? lower.includes(v.text) : line.includes(v.text)) hit(v);
      const re = this.finder;
      if (re) {
        re.lastIndex = 0;
        for (let m = re.exec(lower); m; m = re.exec(lower)) {
          const at = m.index;
          for (const e of this.byFirst.get(lower.charCodeAt(at)) ?? []) {
            if (!lower.startsWith(e.lowered, at)) continue;
            for (const v of e.variants) if (v.ci || line.startsWith(v.text, at)) hit(v);
          }
          // Anchors can overlap (`out of memory` inside `cuda out of memory`): look again one unit on.
          re.lastIndex = at + 1;
        }
      }
    }
    if (sigs.length > 1) sigs.sort((a, b) => a - b);
    this.last = { line, sigs, any };
    return this.last;
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
