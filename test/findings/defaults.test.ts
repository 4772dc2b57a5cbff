import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FindingsSourceSchema } from '../../src/config/findings.ts';
import {
  createFindingsIndex,
  defaultFindingsSources,
  EXAMPLE_FINDINGS_PATH,
  sourcesFromConfig,
} from '../../src/findings/index.ts';
import { createLocalHost } from '../../src/hosts/local.ts';
import type { Diagnosis } from '../../src/logs/diagnosis.ts';

describe('embedded default and config entries', () => {
  it('the default is the shipped example, and it parses into findings', async () => {
    expect(existsSync(EXAMPLE_FINDINGS_PATH)).toBe(true);
    const idx = createFindingsIndex(defaultFindingsSources());
    await idx.refresh();
    const [st] = idx.status();
    expect(st!.error).toBeUndefined();
    expect(st!.sections).toBeGreaterThan(20);
    expect(idx.sections().every((s) => s.file === EXAMPLE_FINDINGS_PATH)).toBe(true);
  });

  it("takes the lifecycle's Diagnosis as it is", async () => {
    const d: Diagnosis = {
      category: 'backend_assertion',
      phase: 'prefill',
      summary: 'AssertionError',
      evidence: [{ line: 812, text: 'assert not self.nsa_kv_cache_store_fp8' }],
      rank: 0,
      dedupKey: 'backend_assertion:x',
      confidence: 0.9,
    };
    const [e] = await createFindingsIndex(defaultFindingsSources()).excerptsFor(d);
    expect(e!.headingPath.at(-1)).toBe('Triton attention with fp8 KV: AssertionError');
  });

  it('validates config entries and maps host names to hosts', () => {
    const ok = FindingsSourceSchema.parse({
      name: 'gpu1-research',
      path: '~/glm-kimi-sm120-rtx6000bw/FINDINGS.md',
      host: 'gpu1',
      url: 'https://github.com/acme/glm-kimi-sm120-rtx6000bw/blob/main/FINDINGS.md',
    });
    const host = createLocalHost('gpu1');
    const [src] = sourcesFromConfig([ok], (n) => {
      expect(n).toBe('gpu1');
      return host;
    });
    expect(src).toEqual({ name: 'gpu1-research', path: ok.path, url: ok.url, host });
    expect(sourcesFromConfig(undefined, () => host)).toEqual(defaultFindingsSources());

    const bad = FindingsSourceSchema.safeParse({ name: 'x y', path: 'a\nb', url: 'ftp://x/y', extra: 1 });
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join('.') || i.code);
    expect(paths).toEqual(expect.arrayContaining(['name', 'path', 'url']));
  });
});
