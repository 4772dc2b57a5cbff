// The file scan's pre-filter over raw bytes: where the next of a set of literals starts, letters folded to lower
// case, as the regex `lit1|lit2|...` with the `i` flag over the bytes read as latin1 would say. A regex of ~150
// alternatives tries every alternative's first letters at every byte (about 130 MB/s here); this is the
// Wu-Manber multi-pattern search (S. Wu and U. Manber, "A fast algorithm for multi-pattern searching", 1994, the
// idea behind agrep): it looks at the last two bytes of a window as long as the shortest literal and jumps ahead by
// as much as no literal can end sooner, so most bytes of a log are never looked at one by one.

import { literalSource } from './anchors.ts';

/** Byte -> its lower case, as case-insensitive matching over latin1 text folds it (ASCII and latin1 letters). */
const FOLD = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  const upperAscii = b >= 0x41 && b <= 0x5a;
  const upperLatin1 = b >= 0xc0 && b <= 0xde && b !== 0xd7;
  FOLD[b] = upperAscii || upperLatin1 ? b + 0x20 : b;
}

export class ByteGate {
  /** The literals' folded bytes. */
  private readonly literals: Uint8Array[];
  /** Length of the shortest literal: the window. */
  private readonly window: number;
  /** How far the window may move on, by the pair of (folded) bytes at its end. */
  private readonly shift = new Uint8Array(1 << 16);
  /** The literals whose first `window` bytes end with that pair. */
  private readonly ending = new Map<number, Uint8Array[]>();
  /** A literal shorter than two bytes: then every byte must be looked at, and a regex does that best. */
  private readonly fallback: RegExp | null;

  /** `literals` as latin1 text (one char per byte), e.g. UTF-8 bytes decoded as latin1. */
  constructor(readonly literalsText: readonly string[]) {
    const literals = literalsText;
    this.literals = literals.map((t) => Uint8Array.from(Buffer.from(t, 'latin1'), (b) => FOLD[b] as number));
    this.window = Math.min(...this.literals.map((l) => l.length));
    const short = this.literals.length === 0 || this.window < 2;
    this.fallback = short ? new RegExp(literals.map((t) => literalSource(t, false)).join('|') || '(?!)', 'gi') : null;
    if (this.fallback) return;
    const m = this.window;
    this.shift.fill(Math.min(m - 1, 255));
    for (const lit of this.literals) {
      for (let q = 1; q < m; q++) {
        const h = ((lit[q - 1] as number) << 8) | (lit[q] as number);
        const s = m - 1 - q;
        if (s < (this.shift[h] as number)) this.shift[h] = s;
        if (s === 0) {
          const list = this.ending.get(h) ?? [];
          list.push(lit);
          this.ending.set(h, list);
        }
      }
    }
  }

  /**
   * Index of the first byte of the leftmost literal starting at or after `from` in `buf`, or -1. `text` is `buf`
   * decoded as latin1 (the scan has it anyway), for the regex fallback.
   */
  find(buf: Uint8Array, text: string, from: number): number {
    if (this.fallback) {
      this.fallback.lastIndex = from;
      return this.fallback.exec(text)?.index ?? -1;
    }
    const { shift, ending, window: m } = this;
    const n = buf.length;
    let i = from + m - 1;
    while (i < n) {
      const h = ((FOLD[buf[i - 1] as number] as number) << 8) | (FOLD[buf[i] as number] as number);
      const s = shift[h] as number;
      if (s > 0) {
        i += s;
        continue;
      }
      const start = i - m + 1;
      for (const lit of ending.get(h) ?? []) if (matchesAt(buf, start, lit)) return start;
      i++;
    }
    return -1;
  }
}

function matchesAt(buf: Uint8Array, start: number, lit: Uint8Array): boolean {
  if (start + lit.length > buf.length) return false;
  for (let k = 0; k < lit.length; k++) if (FOLD[buf[start + k] as number] !== lit[k]) return false;
  return true;
}
