import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFindingsIndex, type Excerpt, formatExcerpts, lineUrl } from '../../src/findings/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'glm-findings-ex-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

// A long section whose matching lines sit in the middle: the excerpt is the window around them.
const long = [
  '# Log', // 1
  '## Long section', // 2
  ...Array.from({ length: 20 }, (_, i) => `filler line ${i + 1} about nothing`), // 3-22
  'the zeppelin crash shows here', // 23
  'zeppelin again, with the fix', // 24
  ...Array.from({ length: 20 }, (_, i) => `more filler ${i + 1}`), // 25-44
].join('\n');

describe('excerpt windows', () => {
  it('quote at most 8 lines around the match, never the whole section', async () => {
    const file = write('long.md', long);
    const [e] = await createFindingsIndex([{ name: 'team', path: file }]).search('zeppelin crash');
    expect(e!.lines.length).toBe(8);
    // One line of context before the first match, then the match and what follows it.
    expect(e).toMatchObject({ startLine: 22, endLine: 29 });
    expect(e!.lines.slice(0, 3)).toEqual([
      'filler line 20 about nothing',
      'the zeppelin crash shows here',
      'zeppelin again, with the fix',
    ]);
  });

  it('maxExcerptLines narrows the window', async () => {
    const file = write('long2.md', long);
    const [e] = await createFindingsIndex([{ name: 'team', path: file }], { maxExcerptLines: 2 }).search('zeppelin');
    expect(e).toMatchObject({ startLine: 23, endLine: 24 });
  });
});

describe('links', () => {
  it('GitHub blob URLs get a plain view and a line-range anchor', async () => {
    const file = write('gh.md', long);
    const url = 'https://github.com/acme/research/blob/main/FINDINGS.md';
    const [e] = await createFindingsIndex([{ name: 'team', path: file, url }], { maxExcerptLines: 2 }).search(
      'zeppelin',
    );
    expect(e!.url).toBe('https://github.com/acme/research/blob/main/FINDINGS.md?plain=1#L23-L24');
  });

  it('a url in the front matter is used when the config gives none; the config wins otherwise', async () => {
    const file = write('fm.md', '---\nurl: https://notes.example.com/FINDINGS.md\n---\n# T\n## A\nzeppelin\n');
    const fromFile = await createFindingsIndex([{ name: 't', path: file }]).search('zeppelin');
    expect(fromFile[0]!.url).toBe('https://notes.example.com/FINDINGS.md#L6');
    const fromConfig = await createFindingsIndex([
      { name: 't', path: file, url: 'https://other.example.com/F.md#old' },
    ]).search('zeppelin');
    expect(fromConfig[0]!.url).toBe('https://other.example.com/F.md#L6');
  });

  it('lineUrl: one line, a range, and no link for what is not http(s)', () => {
    expect(lineUrl('https://example.com/a.md', 5, 5)).toBe('https://example.com/a.md#L5');
    expect(lineUrl('https://example.com/a.md', 5, 9)).toBe('https://example.com/a.md#L5-L9');
    expect(lineUrl('https://github.com/o/r/blob/main/src/x.ts', 1, 2)).toBe(
      'https://github.com/o/r/blob/main/src/x.ts#L1-L2',
    );
    expect(lineUrl('file:///etc/passwd', 1, 2)).toBeUndefined();
    expect(lineUrl('not a url', 1, 2)).toBeUndefined();
  });
});

describe('ordering', () => {
  it('equal scores keep source order, then file order', async () => {
    const a = write('tie-a.md', '# A\n## One\nzeppelin\n## Two\nzeppelin\n');
    const b = write('tie-b.md', '# B\n## One\nzeppelin\n');
    const ex = await createFindingsIndex([
      { name: 'b', path: b },
      { name: 'a', path: a },
    ]).search('zeppelin');
    expect(ex.map((e) => `${e.source}:${e.startLine}`)).toEqual(['b:3', 'a:3', 'a:5']);
    expect(new Set(ex.map((e) => e.score)).size).toBe(1);
  });

  it('a limit of 0 gives nothing; weak matches far below the best are left out', async () => {
    const f = write('weak.md', '# W\n## Strong zeppelin airship\nzeppelin airship zeppelin\n## Weak\nairship\n');
    const idx = createFindingsIndex([{ name: 'w', path: f }]);
    expect(await idx.search('zeppelin airship', 0)).toEqual([]);
    expect((await idx.search('zeppelin airship')).map((e) => e.headingPath.at(-1))).toEqual([
      'Strong zeppelin airship',
    ]);
  });
});

describe('formatExcerpts', () => {
  const ex: Excerpt[] = [
    {
      source: 'team',
      file: '/srv/research/FINDINGS.md',
      headingPath: ['GLM-5 on SM120', 'NaN in decode'],
      startLine: 120,
      endLine: 121,
      lines: ['Every request crashed in decode.', 'Not the #14311 bug.   '],
      score: 12.5,
      url: 'https://github.com/acme/r/blob/main/FINDINGS.md?plain=1#L120-L121',
    },
    {
      source: 'team',
      file: '/srv/research/FINDINGS.md',
      headingPath: [],
      startLine: 3,
      endLine: 3,
      lines: ['Preface.'],
      score: 3,
    },
  ];

  it('file:lines, heading path, indented lines, then the link', () => {
    expect(formatExcerpts(ex)).toBe(
      [
        'FINDINGS.md:120-121  GLM-5 on SM120 > NaN in decode',
        '    Every request crashed in decode.',
        '    Not the #14311 bug.',
        '    https://github.com/acme/r/blob/main/FINDINGS.md?plain=1#L120-L121',
        '',
        'FINDINGS.md:3  (top of file)',
        '    Preface.',
      ].join('\n'),
    );
  });

  it('names the source only when excerpts come from several', () => {
    const two = [ex[0]!, { ...ex[1]!, source: 'gpu1' }];
    expect(formatExcerpts(two).split('\n')[0]).toBe('FINDINGS.md:120-121  GLM-5 on SM120 > NaN in decode  [team]');
    expect(formatExcerpts([])).toBe('no matching findings');
  });
});
