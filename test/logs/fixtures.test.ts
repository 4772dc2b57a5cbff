// Real crash logs from public reports (see test/fixtures/logs/SOURCES.md): category, phase, rank and the root line
// for each, and the same answer whether the log is classified whole, streamed line by line, or scanned from a file
// in chunks of any size.

import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  CATEGORIES,
  createClassifier,
  type Diagnosis,
  diagnoseFile,
  diagnoseStream,
  diagnoseText,
  loadCatalog,
} from '../../src/logs/classify/index.ts';
import { cleanLine } from '../../src/logs/lines.ts';
import { EXPECTED, FIXTURE_DIR, fixtureLines, fixtureNames, readFixture } from './fixtures.ts';

const catalog = loadCatalog();

function streamed(name: string): Diagnosis {
  const c = createClassifier({ catalog });
  fixtureLines(name).forEach((l, i) => {
    c.push(cleanLine(l), i + 1);
  });
  return c.diagnosis();
}

async function chunked(name: string, size: number): Promise<Diagnosis> {
  const bytes = readFileSync(`${FIXTURE_DIR}${name}`);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return diagnoseStream(Readable.from(chunks), { catalog });
}

describe('fixtures', () => {
  it('has an expectation for every fixture file and a fixture for every category', () => {
    expect(fixtureNames().sort()).toEqual(Object.keys(EXPECTED).sort());
    const covered = new Set(Object.values(EXPECTED).map((e) => e.category));
    expect([...CATEGORIES].filter((c) => !covered.has(c))).toEqual([]);
  });

  for (const [name, want] of Object.entries(EXPECTED)) {
    describe(name, () => {
      const d = diagnoseText(readFixture(name), { catalog });
      const c = d.classification;
      const lines = fixtureLines(name);

      it('classifies category, phase and rank', () => {
        expect({ category: c.category, phase: c.phase, rank: c.rank }).toEqual({
          category: want.category,
          phase: want.phase,
          rank: want.rank,
        });
        if (want.signature) expect(d.signature?.id).toBe(want.signature);
      });

      it('names the root line first in the evidence, with its number and text', () => {
        if (want.rootLine === null) {
          expect(c.evidence).toEqual([]);
          return;
        }
        const root = c.evidence[0];
        expect(root?.line).toBe(want.rootLine);
        expect(root?.text).toBe(lines[want.rootLine - 1]?.trimEnd());
        expect(root?.text).toContain(want.rootText);
      });

      it('keeps evidence bounded and true to the log', () => {
        expect(c.evidence.length).toBeLessThanOrEqual(8);
        for (const e of c.evidence) expect(lines[e.line - 1]?.trim()).toBe(e.text.trim());
        expect(c.confidence).toBeGreaterThan(0);
        expect(c.confidence).toBeLessThanOrEqual(1);
        expect(Object.keys(c).sort()).toEqual(
          ['category', 'confidence', 'dedupKey', 'evidence', 'phase', 'rank', 'summary'].sort(),
        );
      });

      it('never picks a consequence or benign line as the root', () => {
        const root = c.evidence[0];
        if (!root || want.rootLine === null) return;
        const line = lines[root.line - 1] ?? '';
        for (const s of catalog.signatures.filter((s) => s.role !== 'root')) {
          const hit = s.regexes.some((re) => re.test(line));
          // A line can carry both a cause and a consequence (NCCL watchdog "terminated with exception: CUDA error");
          // then it is the cause that made it root, which the catalog must also match.
          if (hit)
            expect(catalog.signatures.some((r) => r.role === 'root' && r.regexes.some((re) => re.test(line)))).toBe(
              true,
            );
        }
      });

      it('gives the same answer streamed line by line, from the file, and in small chunks', async () => {
        const whole = JSON.stringify(d);
        expect(JSON.stringify(streamed(name))).toBe(whole);
        expect(JSON.stringify(await diagnoseFile(`${FIXTURE_DIR}${name}`, { catalog }))).toBe(whole);
        expect(JSON.stringify(await chunked(name, 7))).toBe(whole);
        expect(JSON.stringify(await chunked(name, 1))).toBe(whole);
      });
    });
  }

  it('reports the consequences of a crash but chooses the cause printed before them', () => {
    const c = diagnoseText(readFixture('shared_memory_glm45_air_decode.log'), { catalog }).classification;
    expect(c.evidence[0]?.line).toBe(26);
    const lines = fixtureLines('shared_memory_glm45_air_decode.log');
    expect(lines[27]).toContain('Received sigquit');
    expect(lines[29]).toContain('Killed');
  });

  it('summarises in one human line', () => {
    const c = diagnoseText(readFixture('nan_in_sampling_kimi_cp.log'), { catalog }).classification;
    expect(c.summary).toBe('NaN in sampling during decode on TP7: probability tensor contains inf/nan');
  });
});
