import { describe, expect, it } from 'vitest';
import { parseFrontMatter, parseMarkdown } from '../../src/findings/markdown.ts';

// Line numbers are written next to each line so the expectations below can be checked by eye.
const DOC = [
  '---', // 1
  'url: https://example.com/notes/FINDINGS.md', // 2
  '---', // 3
  'Preface before any heading.', // 4
  '', // 5
  '# Findings', // 6
  '', // 7
  'Overview text.', // 8
  '', // 9
  '## GLM-5 on SM120', // 10
  '### NaN in decode ###', // 11
  '', // 12
  'First line.', // 13
  '```bash', // 14
  '# not a heading, a shell comment', // 15
  '## still code', // 16
  '```', // 17
  'Last line.', // 18
  '', // 19
  '', // 20
  '### OOM', // 21
  '~~~~', // 22
  '# tilde fence', // 23
  '```', // 24
  '~~~~', // 25
  '    # indented code, not a heading', // 26
  '#hashtag is text', // 27
  '## Kimi', // 28
  'k', // 29
  '# Second top', // 30
  'x', // 31
].join('\n');

describe('parseMarkdown', () => {
  const sections = parseMarkdown(`${DOC}\n`, 'FINDINGS.md');

  it('splits at ATX headings with nested heading paths', () => {
    expect(sections.map((s) => s.headingPath)).toEqual([
      [],
      ['Findings'],
      ['Findings', 'GLM-5 on SM120'],
      ['Findings', 'GLM-5 on SM120', 'NaN in decode'],
      ['Findings', 'GLM-5 on SM120', 'OOM'],
      ['Findings', 'Kimi'],
      ['Second top'],
    ]);
  });

  it('gives exact 1-based body lines without blank ends, skipping front matter', () => {
    const lines = DOC.split('\n');
    const spans = sections.map((s) => [s.headingLine, s.startLine, s.endLine]);
    expect(spans).toEqual([
      [0, 4, 4],
      [6, 8, 8],
      [10, 11, 10], // heading directly followed by a heading: empty body
      [11, 13, 18],
      [21, 22, 27],
      [28, 29, 29],
      [30, 31, 31],
    ]);
    for (const s of sections) {
      if (s.text === '') continue;
      expect(s.text).toBe(lines.slice(s.startLine - 1, s.endLine).join('\n'));
    }
  });

  it('ignores # inside fenced code, in indented code and without a space', () => {
    const nan = sections[3]!;
    expect(nan.text).toContain('# not a heading');
    expect(nan.text).toContain('## still code');
    const oom = sections[4]!;
    expect(oom.text).toContain('# tilde fence');
    expect(oom.text).toContain('#hashtag is text');
  });

  it('an unclosed fence runs to the end of the file', () => {
    const s = parseMarkdown('# A\n```\n# B\n', 'x.md');
    expect(s.map((x) => x.headingPath)).toEqual([['A']]);
    expect(s[0]!.text).toBe('```\n# B');
  });

  it('handles CRLF line endings and a file with no headings', () => {
    const s = parseMarkdown('# A\r\nline\r\n## B\r\nmore\r\n', 'x.md');
    expect(s.map((x) => [x.headingPath.join('>'), x.startLine, x.endLine, x.text])).toEqual([
      ['A', 2, 2, 'line'],
      ['A>B', 4, 4, 'more'],
    ]);
    expect(parseMarkdown('just text\n', 'y.md')).toEqual([
      { headingPath: [], headingLine: 0, startLine: 1, endLine: 1, text: 'just text', file: 'y.md' },
    ]);
  });

  it('a shallower heading closes deeper ones', () => {
    const s = parseMarkdown('# A\n### C\nc\n## B\nb\n', 'x.md');
    expect(s.map((x) => x.headingPath)).toEqual([['A'], ['A', 'C'], ['A', 'B']]);
  });
});

describe('parseFrontMatter', () => {
  it('reads the url and counts the lines', () => {
    expect(parseFrontMatter(DOC)).toEqual({ data: { url: 'https://example.com/notes/FINDINGS.md' }, lines: 3 });
  });

  it('no front matter, or an unterminated or broken one, is no metadata', () => {
    expect(parseFrontMatter('# A\n')).toEqual({ data: {}, lines: 0 });
    expect(parseFrontMatter('---\nurl: x\n')).toEqual({ data: {}, lines: 0 });
    expect(parseFrontMatter('---\n: [\n---\n# A\n')).toEqual({ data: {}, lines: 3 });
  });
});
