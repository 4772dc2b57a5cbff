// `npm run bench` measures the classifier against GNU grep with the catalog's own patterns (bench/diagnosis.ts): every
// pattern must have a grep -E spelling, or the bench stops. Checked here so that a pattern only JavaScript reads (a
// lookahead, a lookbehind) fails the tests, not the next bench run.
import { describe, expect, it } from 'vitest';
import { toGrepERE } from '../../bench/diagnosis.ts';
import { loadCatalog } from '../../src/logs/classify/index.ts';

describe('the catalog as grep -E reads it', () => {
  it('every signature pattern has a grep -E spelling', () => {
    const none: string[] = [];
    for (const s of loadCatalog().signatures)
      for (const r of s.regexes) {
        try {
          toGrepERE(r.source);
        } catch {
          none.push(`${s.id}: ${r.source}`);
        }
      }
    expect(none).toEqual([]);
  });
});
