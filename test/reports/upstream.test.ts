// Duplicates first: the catalog's curated upstream issues, then public reports of the same crash from the shipped
// corpus (nearest root line), only of the crash's own class.
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../src/logs/classify/index.ts';
import { crashKeyOf, knownIssues } from '../../src/reports/upstream.ts';

describe('knownIssues', () => {
  const catalog = loadCatalog();

  it('adds corpus reports that look like the crash, after the catalog entries', () => {
    const key = crashKeyOf({
      category: 'shared_memory_exceeded',
      dedupKey: 'shared_memory_exceeded/triton-out-of-shared-memory/abc',
      evidence: [
        {
          text: 'triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 147456, Hardware limit: 101376',
        },
      ],
    });
    expect(key?.rootLine).toContain('OutOfResources');
    const refs = knownIssues(catalog, key ? [key] : [], undefined);
    const corpus = refs.filter((r) => r.source === 'corpus');
    expect(corpus.length).toBeGreaterThan(0);
    expect(corpus.length).toBeLessThanOrEqual(3);
    expect(corpus.every((r) => r.url.startsWith('https://github.com/'))).toBe(true);
    expect(corpus.some((r) => r.category === 'shared_memory_exceeded')).toBe(true);
    // Catalog entries come first, and no URL twice.
    const firstCorpus = refs.findIndex((r) => r.source === 'corpus');
    expect(refs.slice(0, firstCorpus).every((r) => r.source === 'catalog')).toBe(true);
    expect(new Set(refs.map((r) => r.url)).size).toBe(refs.length);
  });

  it('a crash without a root line gets the catalog entries only', () => {
    const refs = knownIssues(
      catalog,
      [{ category: 'nan_in_sampling', signatureId: 'nan-probability-tensor' }],
      'sm120',
    );
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.every((r) => r.source === 'catalog')).toBe(true);
  });
});
