// The file scan's byte pre-filter finds what the case-insensitive regex of the same literals finds over the bytes
// read as latin1: the same leftmost hit from every position, on every dev log and on random text.
import { describe, expect, it } from 'vitest';
import { loadCorpus } from '../../src/corpus/cases.ts';
import { literalSource } from '../../src/logs/classify/anchors.ts';
import { ByteGate } from '../../src/logs/classify/bytegate.ts';
import { loadCatalog } from '../../src/logs/classify/index.ts';

const catalog = loadCatalog();
const dev = loadCorpus().cases.filter((c) => c.split === 'dev');

/** Every hit from the start, each search starting just after the previous hit. */
function hits(find: (from: number) => number): number[] {
  const out: number[] = [];
  for (let at = find(0); at >= 0; at = find(at + 1)) out.push(at);
  return out;
}

function both(literals: string[], buf: Buffer): { gate: number[]; regex: number[] } {
  const gate = new ByteGate(literals);
  const re = new RegExp(literals.map((t) => literalSource(t, false)).join('|'), 'gi');
  const text = buf.toString('latin1');
  return {
    gate: hits((from) => gate.find(buf, text, from)),
    regex: hits((from) => {
      re.lastIndex = from;
      return re.exec(text)?.index ?? -1;
    }),
  };
}

describe('the byte pre-filter', () => {
  it("finds the catalog's literals where the regex does, in every dev log", () => {
    const literals = [...catalog.byteGate.literalsText];
    let total = 0;
    for (const c of dev) {
      const r = both(literals, Buffer.from(c.log));
      expect(r.gate, c.id).toEqual(r.regex);
      total += r.gate.length;
    }
    expect(total).toBeGreaterThan(1000);
  });

  it('folds case the same way, at block edges and in random bytes, and with literals too short to jump', () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    // latin1 bytes: ASCII and latin1 letters in both cases, and × ÷ (no case) beside them.
    const alphabet = Buffer.from('eErRoOxXiItT \n:ÉéÀà\u00ff×÷', 'latin1');
    const literals = ['error', 'exit', 'ÉTÉ', 'rro', 'xit:', '×÷e'];
    for (let round = 0; round < 200; round++) {
      const buf = Buffer.from(Array.from({ length: 1 + rand(400) }, () => alphabet[rand(alphabet.length)] as number));
      const r = both(literals, buf);
      expect(r.gate).toEqual(r.regex);
      const short = both(['e', 'xit'], buf);
      expect(short.gate).toEqual(short.regex);
    }
    expect(both(literals, Buffer.from('ERROR at the end: EXIT')).gate).toEqual([0, 1, 18]);
    expect(both([], Buffer.from('anything')).gate).toEqual([]);
  });
});
