// Literal text extraction for the pre-filter: it must never claim text a match could lack.

import { describe, expect, it } from 'vitest';
import { extractAnchors, literalSource, minimiseAnchors } from '../../src/logs/classify/anchors.ts';

describe('extractAnchors', () => {
  it.each([
    ['probability tensor contains either .?inf.?, .?nan.? or element < 0', ['probability tensor contains either ']],
    ['Capture (piecewise )?cuda graph failed', ['cuda graph failed']],
    ['\\[Errno 98\\]', ['[Errno 98]']],
    ['(^|[0-9] )Killed( |$)', ['Killed']],
    ['abc?defg', ['defg']],
    ['xyzw+abc', ['xyzw']],
    ['Rank [0-9]+ scheduler is dead|Exit code: -?[0-9]+', [' scheduler is dead', 'Exit code: ']],
    ['\\d+ tokens? dropped', [' dropped']],
    ['已杀死', ['已杀死']],
  ])('%s', (source, want) => {
    expect(extractAnchors(source)).toEqual(want);
  });

  it('refuses a pattern with a branch that has no literal text', () => {
    expect(extractAnchors('NCCL error|[0-9]+')).toBeNull();
    expect(extractAnchors('.*')).toBeNull();
    expect(extractAnchors('a{0,3}bcdefg')).toEqual(['bcdefg']);
  });
});

describe('literalSource', () => {
  it('escapes and folds case', () => {
    expect(new RegExp(literalSource('a.b(c)', false)).test('xa.b(c)')).toBe(true);
    expect(new RegExp(literalSource('a.b(c)', false)).test('aXb(c)')).toBe(false);
    expect(new RegExp(literalSource('graph begin', true)).test('Capture CUDA Graph Begin')).toBe(true);
  });
});

describe('minimiseAnchors', () => {
  it('drops anchors that contain a shorter one', () => {
    expect(
      minimiseAnchors([
        { text: 'CUDA out of memory', ci: false },
        { text: 'out of memory', ci: false },
        { text: 'Out Of Memory Killer', ci: false },
        { text: 'GRAPH END', ci: true },
      ]),
    ).toEqual([
      { text: 'out of memory', ci: false },
      { text: 'Out Of Memory Killer', ci: false },
      { text: 'graph end', ci: true },
    ]);
  });
});
