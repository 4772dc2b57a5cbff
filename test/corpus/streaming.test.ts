// Property test: every way the classifier can be fed gives the same diagnosis as the whole text: the file scan, a
// byte stream cut in random chunk sizes, the follower's splitter line by line, and a follower that reconnects at
// random byte offsets and resumes where its last complete line ended. Then lines no reader may keep whole: a 10 MB
// line is held to a bounded number of bytes and read the same way by every path. Only dev cases are read: the test
// split stays unseen (corpus/README.md).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadCorpus } from '../../src/corpus/cases.ts';
import { ClassifierEngine } from '../../src/logs/classify/engine.ts';
import {
  createClassifier,
  type Diagnosis,
  diagnoseFile,
  diagnoseStream,
  diagnoseText,
  loadCatalog,
} from '../../src/logs/classify/index.ts';
import { FastScanner } from '../../src/logs/classify/scan.ts';
import { LineSplitter, MAX_LINE_BYTES, TRUNCATED_MARK } from '../../src/logs/lines.ts';

const dev = loadCorpus().cases.filter((c) => c.split === 'dev');
const catalog = loadCatalog();

/** mulberry32: the same "random" cuts on every run, a different sequence per seed. */
function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** `buf` cut into chunks of 1 to `max` bytes (a multi-byte character is cut, too). */
function randomChunks(buf: Buffer, rand: (n: number) => number, max: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; ) {
    const n = 1 + rand(max);
    out.push(buf.subarray(i, i + n));
    i += n;
  }
  return out;
}

/** The follower: the splitter's lines into one classifier; each cut is a reconnect from the last resume offset. */
function followed(buf: Buffer, cuts: number[], rand: (n: number) => number): Diagnosis {
  const k = createClassifier({ catalog });
  let offset = 0;
  let lineNo = 0;
  for (const cut of [...cuts, buf.length]) {
    if (cut <= offset) continue;
    const splitter = new LineSplitter(offset, undefined, lineNo);
    for (const chunk of randomChunks(buf.subarray(offset, cut), rand, 200)) {
      for (const l of splitter.push(chunk)) {
        k.push(l.text, l.lineNo);
        lineNo = l.lineNo;
      }
    }
    // A new connection starts after the last complete line; the partial one is read again.
    offset = splitter.resumeOffset;
  }
  return k.diagnosis();
}

const json = (d: Diagnosis) => JSON.stringify(d);

describe('the same diagnosis by every reading path', () => {
  it('every dev case: file, random chunks, line by line, and resumed at random offsets', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-stream-'));
    const differ: string[] = [];
    for (const [n, c] of dev.entries()) {
      // A follower only sees a line once its newline is written.
      const log = c.log.endsWith('\n') ? c.log : `${c.log}\n`;
      const buf = Buffer.from(log);
      const seed = 1000 + n;
      const rand = rng(seed);
      const want = json(diagnoseText(log, { catalog }));
      const file = join(dir, `${n}.log`);
      writeFileSync(file, buf);
      const cuts = Array.from({ length: 1 + rand(3) }, () => rand(buf.length)).sort((a, b) => a - b);
      const got: Record<string, string> = {
        file: json(await diagnoseFile(file, { catalog })),
        chunks: json(await diagnoseStream(Readable.from(randomChunks(buf, rand, 1 + rand(300))), { catalog })),
        lines: json(followed(buf, [], rand)),
        resumed: json(followed(buf, cuts, rand)),
      };
      for (const [path, g] of Object.entries(got)) if (g !== want) differ.push(`${c.id} (seed ${seed}): ${path}`);
    }
    expect(dev.length).toBeGreaterThan(300);
    expect(differ).toEqual([]);
  });
});

// Records of real dev logs joined into one line, as an issue's formatting or a writer without newlines leaves them:
// milestones, tracebacks, assertions and CUDA errors many times over in one line.
/**
 * A line of `bytes` made of the healthy dev logs with their line breaks lost: the classifier splits such a line again
 * (normalise.ts, splitJoined), so healthy records keep the crash after it the only one.
 */
function joinedLine(bytes: number): Buffer {
  const records = dev
    .filter((c) => c.kind === 'healthy')
    .map((c) => c.log.replace(/\n/g, ' '))
    .join(' ');
  return Buffer.from(records.repeat(Math.ceil(bytes / Buffer.byteLength(records))).slice(0, bytes));
}

describe('a 10 MB line', () => {
  const TEN_MB = 10 << 20;

  it('with no newline is held to a bounded number of bytes by the file scan and the splitter', () => {
    const rand = rng(7);
    const scanner = new FastScanner(new ClassifierEngine({ catalog }));
    const splitter = new LineSplitter(0);
    let peakScan = 0;
    let peakSplit = 0;
    for (const chunk of randomChunks(joinedLine(TEN_MB), rand, 1 << 20)) {
      scanner.write(chunk);
      expect(splitter.push(chunk)).toEqual([]);
      peakScan = Math.max(peakScan, scanner.bufferedBytes);
      peakSplit = Math.max(peakSplit, splitter.bufferedBytes);
    }
    expect(peakScan).toBeGreaterThan(0);
    expect(peakScan).toBeLessThanOrEqual(MAX_LINE_BYTES + 1);
    expect(peakSplit).toBe(MAX_LINE_BYTES);
    expect(splitter.resumeOffset).toBe(0);
    scanner.end();
    expect(scanner.bufferedBytes).toBe(0);
  });

  it('of joined records, then a crash: every path reads the same cut line and the crash after it', async () => {
    const crash = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n';
    const buf = Buffer.concat([joinedLine(TEN_MB), Buffer.from(`\n${crash}`)]);
    const rand = rng(11);
    const whole = diagnoseText(buf.toString('utf8'), { catalog });
    const want = json(whole);
    expect(whole.classification.category).toBe('cuda_oom');
    expect(whole.linesRead).toBe(2);
    // Nothing of the long line beyond the cut reaches the diagnosis.
    expect(want.length).toBeLessThan(MAX_LINE_BYTES);
    const got = {
      oneChunk: json(await diagnoseStream(Readable.from([buf]), { catalog })),
      chunks: json(await diagnoseStream(Readable.from(randomChunks(buf, rand, 1 << 20)), { catalog })),
      lines: json(followed(buf, [], rand)),
      resumed: json(followed(buf, [TEN_MB >> 1, TEN_MB + 3], rand)),
    };
    expect(got).toEqual({ oneChunk: want, chunks: want, lines: want, resumed: want });
    const line = new LineSplitter(0).push(buf)[0]?.text ?? '';
    expect(line.endsWith(TRUNCATED_MARK)).toBe(true);
  });
});
