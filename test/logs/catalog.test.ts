// The signature catalog: the built-in data is complete and grep-compatible, user signatures from the config extend
// or override it by id, and a bad entry reports every problem at once as `path: message`.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { CATEGORIES, classifyText, loadCatalog } from '../../src/logs/classify/index.ts';
import { fixtureLines, fixtureNames, readFixture } from './fixtures.ts';

const catalog = loadCatalog();
const allLines = fixtureNames().flatMap((n) => fixtureLines(n));
const allFile = join(mkdtempSync(join(tmpdir(), 'glm-classify-')), 'all-fixtures.log');
writeFileSync(allFile, `${allLines.join('\n')}\n`);

function grepCount(pattern: string, ci: boolean): number {
  try {
    const out = execFileSync('grep', ['-E', '-c', ...(ci ? ['-i'] : []), '-e', pattern, allFile], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return Number(out.trim());
  } catch (err) {
    const e = err as { status?: number; stderr?: string };
    if (e.status !== 1) throw new Error(`grep -E rejected ${pattern}: ${e.stderr}`);
    return 0;
  }
}

describe('built-in catalog', () => {
  it('gives every root a category and every entry a meaning and a source', () => {
    for (const s of catalog.signatures) {
      expect(s.meaning.length, s.id).toBeGreaterThan(0);
      expect(s.source, s.id).toMatch(/^https:\/\//);
      if (s.role === 'root') expect(CATEGORIES, s.id).toContain(s.category);
    }
  });

  it('has a root signature for every crash category', () => {
    const have = new Set(catalog.signatures.filter((s) => s.role === 'root').map((s) => s.category));
    const crashClasses = CATEGORIES.filter((c) => c !== 'none');
    expect(crashClasses.filter((c) => !have.has(c))).toEqual([]);
  });

  it('lists the known SM120 + DSA upstream issues', () => {
    const urls = catalog.signatures.flatMap((s) => s.upstream.map((u) => u.url));
    for (const n of [26087, 29562, 37105, 36830, 14691]) {
      expect(urls).toContain(`https://github.com/sgl-project/sglang/issues/${n}`);
    }
  });

  it('keeps the red herrings benign', () => {
    for (const id of ['deepgemm-ue8m0-warning', 'rope-unrecognized-keys', 'default-kernel-config', 'kv-retraction']) {
      expect(catalog.byId.get(id)?.role).toBe('benign');
    }
  });

  it('uses patterns that grep -E understands and counts the same way', () => {
    for (const s of catalog.signatures) {
      for (const re of s.regexes) {
        const js = allLines.filter((l) => re.test(l)).length;
        expect(grepCount(re.source, re.flags.includes('i')), `${s.id}: ${re.source}`).toBe(js);
      }
    }
  });

  it('pre-filters with literal text every matching line contains', () => {
    for (const s of catalog.signatures) {
      for (const line of allLines) {
        if (!s.regexes.some((re) => re.test(line))) continue;
        const lower = line.toLowerCase();
        expect(
          s.anchors.some((a) => (a.ci ? lower.includes(a.text) : line.includes(a.text))),
          `${s.id} on ${line}`,
        ).toBe(true);
        expect(catalog.gate.test(line)).toBe(true);
      }
    }
  });

  it('pre-filters a root with literals no ordinary line carries (a bare word every log prints sends the whole log through)', () => {
    const ordinary = ['error', 'error ', ' error', 'warning', 'info', 'failed', 'fail', 'exception', 'traceback'];
    const roots = catalog.signatures.filter((s) => s.role === 'root');
    const bare = roots.flatMap((s) =>
      s.anchors.filter((a) => ordinary.includes(a.text.toLowerCase())).map((a) => `${s.id}: ${a.text}`),
    );
    expect(bare).toEqual([]);
  });
});

describe('user signatures', () => {
  const base = { meaning: 'team-specific', source: 'https://example.org/findings' };

  it('extend the catalog', () => {
    const text = readFixture('none_startup_red_herrings.log');
    expect(classifyText(text, { catalog }).category).toBe('none');
    const extended = loadCatalog([
      {
        ...base,
        id: 'team-no-p2p',
        category: 'nccl_error',
        role: 'root',
        priority: 40,
        patterns: ['peer access is not supported between these two devices'],
      },
    ]);
    // The built-in benign entry for this warning still wins on its own line: benign vetoes.
    expect(classifyText(text, { catalog: extended }).category).toBe('none');
  });

  it('override a built-in entry by id', () => {
    const text = readFixture('none_startup_red_herrings.log');
    const strict = loadCatalog([
      {
        ...base,
        id: 'deepgemm-ue8m0-warning',
        category: 'other',
        role: 'root',
        priority: 20,
        title: 'DeepGemm scale format mismatch',
        patterns: ['DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0'],
      },
    ]);
    expect(strict.signatures.filter((s) => s.id === 'deepgemm-ue8m0-warning')).toHaveLength(1);
    const c = classifyText(text, { catalog: strict });
    expect(c.category).toBe('other');
    expect(c.evidence[0]?.line).toBe(10);
    expect(c.summary).toContain('DeepGemm scale format mismatch');
  });

  it('can outrank a built-in root', () => {
    const text = readFixture('illegal_memory_access_kimi_marlin.log');
    const nccl = loadCatalog([
      {
        ...base,
        id: 'nccl-watchdog-terminated',
        category: 'nccl_error',
        role: 'root',
        priority: 90,
        patterns: ['Process group watchdog thread terminated with exception'],
      },
    ]);
    expect(classifyText(text, { catalog }).category).toBe('illegal_memory_access');
    expect(classifyText(text, { catalog: nccl }).category).toBe('nccl_error');
  });

  it('report every problem at once, as path: message', () => {
    let err: unknown;
    try {
      loadCatalog(
        [
          { id: 'Bad Id', role: 'root', patterns: [], meaning: '' },
          { ...base, id: 'broken-regex', category: 'cuda_oom', role: 'root', patterns: ['CUDA (out of memory'] },
          { ...base, id: 'no-literal', role: 'consequence', patterns: ['[0-9]+ .*'] },
          { ...base, id: 'rootless', role: 'root', patterns: ['Segmentation fault'] },
          { ...base, id: 'dup', role: 'benign', patterns: ['harmless warning'] },
          { ...base, id: 'dup', role: 'benign', patterns: ['other warning'] },
        ],
        { extraPath: 'logs.signatures' },
      );
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues;
    const paths = issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'logs.signatures[0].id',
        'logs.signatures[0].patterns',
        'logs.signatures[0].meaning',
        'logs.signatures[1].patterns[0]',
        'logs.signatures[2].patterns[0]',
        'logs.signatures[3].category',
        'logs.signatures[5].id',
      ]),
    );
    const msg = (err as Error).message;
    expect(msg).toContain('logs.signatures[1].patterns[0]: invalid regular expression in signature "broken-regex"');
    expect(msg).toContain('logs.signatures[2].patterns[0]: pattern of signature "no-literal" has no literal text');
    expect(msg).toContain('duplicate signature id "dup"');
  });

  it('accept keywords for a pattern without literal text', () => {
    const c = loadCatalog([
      { ...base, id: 'exit-137', role: 'consequence', patterns: ['[0-9]+ Kil+ed'], keywords: ['Kil'] },
    ]);
    expect(c.byId.get('exit-137')?.anchors).toEqual([{ text: 'Kil', ci: false }]);
  });
});
