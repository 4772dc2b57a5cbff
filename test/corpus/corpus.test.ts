// The real crash-log corpus: every case readable and honest (root line in its log, split fixed by its source), the
// classifier's answers the same through every wrapper style and every reading path (dev cases), and the known-upstream index.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CORPUS_DIR, loadCorpus, splitOf } from '../../src/corpus/cases.ts';
import { buildKnownIndex, KNOWN_UPSTREAM_PATH, knownEntries, knownUpstream } from '../../src/corpus/similar.ts';
import { diagnoseStream, diagnoseText, loadCatalog } from '../../src/logs/classify/index.ts';

const { cases, problems } = loadCorpus();
const catalog = loadCatalog();
// The invariance tests below print the ids (and answers) of the cases they fail on: run over the test split, they
// would lead whoever fixes them to open a test case, which corpus/README.md forbids. They read dev cases only (as
// perturb.test.ts does); the eval reports the test split's figures without its cases' text.
const dev = cases.filter((c) => c.split === 'dev');

describe('the corpus', () => {
  it('reads every case, and each crash names a root line that is in its log', () => {
    expect(problems).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(300);
    for (const c of cases.filter((x) => x.kind === 'crash')) expect(c.log, c.id).toContain(c.root);
  });

  it('keeps a held-apart round whole: each case readable, and its .log not ignored by git', () => {
    const dir = join(CORPUS_DIR, '..', 'held-apart');
    expect(loadCorpus(dir).problems).toEqual([]);
    // git check-ignore exits 1 when no rule ignores the path: a `*.log` rule once dropped a round's logs.
    let ignored = true;
    try {
      execFileSync('git', ['check-ignore', '-q', join(dir, 'x.log')], { cwd: dir });
    } catch {
      ignored = false;
    }
    expect(ignored).toBe(false);
  });

  it('splits by a fixed hash of the source: about a third in test, every source in one split', () => {
    const test = cases.filter((c) => c.split === 'test').length / cases.length;
    expect(test).toBeGreaterThan(0.2);
    expect(test).toBeLessThan(0.45);
    expect(splitOf('https://github.com/sgl-project/sglang/issues/1')).toBe(
      splitOf('https://github.com/sgl-project/sglang/issues/1'),
    );
    for (const c of cases) expect(c.split).toBe(splitOf(c.source));
  });
});

// Eight ways other programs wrap a line; the classifier must give the same answer under each.
const WRAPPERS: Array<[string, (line: string, i: number) => string]> = [
  ['docker compose', (l) => `sglang-1  | ${l}`],
  ['Ray actor', (l) => `(SGLangEngine pid=4242) ${l}`],
  ['vLLM logger', (l) => `(EngineCore_DP0 pid=1) ERROR 11-05 12:19:32 [core.py:708] ${l}`],
  ['Python logging', (l) => `ERROR:root:${l}`],
  ['Kubernetes CRI', (l, i) => `2025-11-05T12:19:${String(i % 60).padStart(2, '0')}.123456789Z stderr F ${l}`],
  ['Markdown quote', (l) => `> ${l}`],
  ['journald', (l) => `Dec 01 12:00:00 gpu-box python3[1234]: ${l}`],
  ['ANSI colour and CRLF', (l) => `\x1b[31m${l}\x1b[0m\r`],
  ['mpirun', (l) => `[1,0]<stderr>:${l}`],
];

const answer = (log: string) => {
  const c = diagnoseText(log, { catalog }).classification;
  return { category: c.category, phase: c.phase, root: c.evidence[0]?.line ?? null };
};

describe('the same answer through every wrapper', () => {
  it.each(WRAPPERS)('%s', (_name, wrap) => {
    const differ: string[] = [];
    for (const c of dev) {
      const lines = c.log.replace(/\n$/, '').split('\n');
      const want = answer(c.log);
      const got = answer(`${lines.map((l, i) => wrap(l, i)).join('\n')}\n`);
      if (JSON.stringify(got) !== JSON.stringify(want))
        differ.push(`${c.id}: ${JSON.stringify(want)} -> ${JSON.stringify(got)}`);
    }
    expect(differ).toEqual([]);
  });
});

describe('the same answer whole, streamed in odd chunks, and line by line', () => {
  it('every dev case', async () => {
    const differ: string[] = [];
    for (const c of dev) {
      const whole = diagnoseText(c.log, { catalog }).classification;
      const buf = Buffer.from(c.log);
      const chunks: Buffer[] = [];
      for (let i = 0; i < buf.length; i += 97) chunks.push(buf.subarray(i, i + 97));
      const streamed = (await diagnoseStream(Readable.from(chunks), { catalog })).classification;
      if (JSON.stringify(streamed) !== JSON.stringify(whole)) differ.push(c.id);
    }
    expect(differ).toEqual([]);
  });
});

describe('the same answer when a follower resumes from a byte offset', () => {
  it('every dev case, cut at a line boundary in its middle', async () => {
    const { LineSplitter } = await import('../../src/logs/lines.ts');
    const { createClassifier } = await import('../../src/logs/classify/index.ts');
    const differ: string[] = [];
    for (const c of dev) {
      // A follower only sees a line once its newline is written (an excerpt's last line may have none).
      const log = c.log.endsWith('\n') ? c.log : `${c.log}\n`;
      const buf = Buffer.from(log);
      const cut = buf.indexOf(10, Math.floor(buf.length / 2)) + 1;
      if (cut <= 0 || cut >= buf.length) continue;
      const k = createClassifier({ catalog });
      let n = 0;
      for (const l of new LineSplitter(0).push(buf.subarray(0, cut))) k.push(l.text, ++n);
      // A new connection: a new splitter from the saved offset, the same classifier.
      const rest = new LineSplitter(cut);
      for (const l of rest.push(buf.subarray(cut))) k.push(l.text, ++n);
      const whole = diagnoseText(log, { catalog }).classification;
      if (JSON.stringify(k.result()) !== JSON.stringify(whole)) differ.push(c.id);
    }
    expect(differ).toEqual([]);
  });
});

describe('known upstream reports', () => {
  const index = buildKnownIndex(knownEntries(cases));

  it('finds a public report of the same class for an OOM root line, and never the excluded source', () => {
    const oom = cases.find((c) => c.kind === 'crash' && c.category === 'cuda_oom' && c.root !== null);
    expect(oom).toBeDefined();
    if (!oom?.root) return;
    const top = index.similar(oom.root, { exclude: oom.source });
    expect(top.length).toBeGreaterThan(0);
    expect(top.length).toBeLessThanOrEqual(3);
    expect(top.some((t) => t.category === 'cuda_oom')).toBe(true);
    expect(top.every((t) => t.url !== oom.source)).toBe(true);
    expect(top[0]?.ref).toMatch(/^[\w.-]+\/[\w.-]+#\d+$|^https?:/);
  });

  it('shows nothing for a line that shares no distinctive words with any report', () => {
    expect(index.similar('lorem ipsum dolor sit amet')).toEqual([]);
  });
});

describe('corpus/SOURCES.md and corpus/known-upstream.json', () => {
  it('are current (npm run corpus:sources)', async () => {
    const { readFileSync } = await import('node:fs');
    const { SOURCES_PATH, knownUpstreamText, sourcesText } = await import('../../scripts/corpus-sources.ts');
    expect(readFileSync(SOURCES_PATH, 'utf8')).toBe(sourcesText());
    expect(readFileSync(KNOWN_UPSTREAM_PATH, 'utf8')).toBe(knownUpstreamText());
  });

  it('the shipped index answers as one built from the cases themselves', () => {
    const root = cases.find((c) => c.kind === 'crash' && c.category === 'nccl_error')?.root;
    expect(root).toBeTruthy();
    const fromCases = buildKnownIndex(knownEntries(cases));
    expect(knownUpstream().size).toBe(fromCases.size);
    expect(knownUpstream().similar(root ?? '')).toEqual(fromCases.similar(root ?? ''));
  });
});
