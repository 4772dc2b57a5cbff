// Lines that made one reader's work grow faster than the line: each check runs in the bot's one thread, so such a
// line in a followed log would stall every chat command behind it. None of these asserts a time; on the code before
// the fix each one ran for minutes (SOURCE_LINE's annotation backtracked in time cubic in a run of spaces; the joined
// line splitter re-read its growing piece at every cut), so vitest's timeout is what fails there.
import { describe, expect, it } from 'vitest';
import { diagnoseText, loadCatalog } from '../../src/logs/classify/index.ts';
import { splitJoined } from '../../src/logs/classify/normalise.ts';
import { parseMilestone } from '../../src/logs/milestones.ts';

describe('lines built to make a reader slow', () => {
  it('a line after an unindented frame with a long run of spaces after a colon is read in one pass', () => {
    const log = (line: string) =>
      [
        'Traceback (most recent call last):',
        'File "/x/sglang/srt/server.py", line 10, in main',
        line,
        'RuntimeError: boom',
        '',
      ].join('\n');
    // not a statement (no assignment after the annotation): the regex has to give up, which is where it backtracked
    expect(diagnoseText(log(`value:${' '.repeat(20_000)}x`)).classification.category).toBe('other');
    // an annotated assignment is the frame's source line, never the root: the exception is
    const d = diagnoseText(log(`value: Dict[str, int]${' '.repeat(20_000)}= compute(x)`));
    expect(d.classification.category).toBe('other');
    expect(d.classification.evidence[0]?.text).toBe('RuntimeError: boom');
  });

  it('a 64 KiB line of nothing but process labels is cut in one pass and stays one line of no crash', () => {
    for (const unit of ['(pid=1) ', '[rank0]: ', '(RayWorkerWrapper pid=123) ']) {
      const line = `x weights ${unit.repeat(Math.floor(65_000 / unit.length))}done`;
      const pieces = splitJoined(line);
      // the labels are the next piece's wrappers, never pieces of their own
      expect(
        pieces === null || pieces.every((p) => /\w/.test(p.replace(/\(pid=\d+\)|\[rank\d+\]:|RayWorkerWrapper/g, ''))),
      ).toBe(true);
      expect(diagnoseText(`hello\n${line}\nbye\n`).classification.category).toBe('none');
    }
  });

  it('lines of nothing but rank labels ending in `]` inside a traceback are read in one pass each', () => {
    // each label taken off read the whole rest of the line again (wrappers, then the suffixes a `]` may end): a few
    // such lines ran past vitest's timeout
    const labels = `${'[rank0]: '.repeat(Math.floor(64_000 / 9))}[rank0]`;
    const lines = ['Traceback (most recent call last):', '  File "/x.py", line 1, in f', ...Array(8).fill(labels)];
    const c = diagnoseText(`${lines.join('\n')}\nRuntimeError: boom\n`).classification;
    // the first line of labels ends the traceback's frames, as any line that is no frame does; it reads as no
    // exception, so the exception line after the labels is the root
    expect([c.category, c.evidence[0]?.line]).toEqual(['other', 11]);
  });

  it("an MPI error class named in a warning is not an MPI failure; MPI's error string is", () => {
    const healthy = [
      '[2025-11-05 12:00:00] The server is fired up and ready to roll!',
      'WARNING 11-05 12:00:10 [utils.py:1] MPI_ERR_TRUNCATE seen, falling back',
      '[2025-11-05 12:00:11] INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK',
      '',
    ].join('\n');
    expect(diagnoseText(healthy).classification.category).toBe('none');
    const crash = ['mpi4py.MPI.Exception: MPI_ERR_OTHER: known error not in list', ''].join('\n');
    expect(diagnoseText(crash).classification.category).toBe('nccl_error');
  });

  it('failure-record and joined-line readers read long lines of names, dots and words in one pass', () => {
    const cases: Array<[string, string]> = [
      // names with dots and no message: the embedded-exception reader tries every start
      [`failed ${'abcdefghij.'.repeat(6000)}`, 'other'],
      [`failed ${'SomeError '.repeat(6000)}`, 'other'],
      // words and spaces, an exception name nowhere at the end: the joined-line check scans back from the end
      [`it failed: x ${'word '.repeat(13_000)}`, 'other'],
      // a path-like run, no failure stated: the root check's path test
      [`${'a/'.repeat(30_000)}!`, 'none'],
    ];
    for (const [line, category] of cases) {
      expect(diagnoseText(`${line}\n`).classification.category, line.slice(0, 30)).toBe(category);
    }
  });

  it('a long run of brackets or bracketed tags, then an exception, is cut in one pass (its exception a line)', () => {
    // each cut once re-read all the text since the last line start, and stripping one `[]` at a time copied the rest:
    // 64 KB took seconds, the splitter's 200 KB many times vitest's timeout (a log line is cut at 64 KiB)
    const run = (unit: string, n: number) => `${unit.repeat(Math.floor(n / unit.length))}ValueError: x`;
    for (const unit of ['[]', '[x] ', '[E] ', '[ERROR] ']) {
      expect(splitJoined(run(unit, 200_000))?.at(-1), unit).toBe('ValueError: x');
      const d = diagnoseText(`${run(unit, 64_000)}\n`).classification;
      expect([d.category, d.evidence[0]?.text], unit).toEqual(['other', 'ValueError: x']);
    }
    // a logger's tags are wrappers of the one record that follows them: one line, read as a record
    const trt = run('[TensorRT-LLM][ERROR] ', 64_000);
    expect(splitJoined(run('[TensorRT-LLM][ERROR] ', 200_000))).toBeNull();
    expect(diagnoseText(`${trt}\n`).classification.category).toBe('other');
  });

  it("TGI's ready line and ptxas's refusal are read in one pass on a long line of their own prefixes", () => {
    // 1 MiB (a follower's reader hands milestones whole lines): on the unbounded regexes each retried its run from
    // every prefix, minutes on this line
    const fill = (unit: string, tail: string) => unit.repeat(Math.ceil((1 << 20) / unit.length)) + tail;
    expect(parseMilestone(fill('text_generation_router', ': Connected'))).toBeNull();
    expect(parseMilestone(fill('text_generation_router:', ' Connected'))).toBeNull();
    expect(
      parseMilestone('2024-01-01T00:00:00Z  INFO text_generation_router::server: router/src/server.rs:2014: Connected'),
    ).toEqual({ kind: 'ready' });
    const ptxas = loadCatalog().signatures.find((s) => s.id === 'toolchain-unsupported-arch');
    const long = fill("ptx, line 1; error   : Feature '", '');
    expect(ptxas?.regexes.some((re) => re.test(long))).toBe(false);
    const real = "ptxas /tmp/k.ptx, line 12; error   : Feature '.bf16' requires .target sm_80 or higher";
    expect(ptxas?.regexes.some((re) => re.test(real))).toBe(true);
  });
  it("argparse's usage, boost's frames, one-line terminates and a JIT's missing source are read in one pass", () => {
    // each lookahead is bounded: a long line of the shape that starts it is read once, not once per start
    const fill = (unit: string, tail: string) => unit.repeat(Math.ceil((1 << 20) / unit.length)) + tail;
    for (const line of [
      fill('usage: prog ', 'x'),
      fill('1# f in ', 'x'),
      fill(' what(): Unhandled exception: x. ', 'x'),
      fill("terminate called after throwing an instance of 'x' ", 'x'),
    ]) {
      expect(diagnoseText(`${line}\n`).classification.category, line.slice(0, 30)).not.toBe('unsupported_arch');
    }
    const jit = loadCatalog().signatures.find((s) => s.id === 'jit-arch-source-missing');
    expect(jit?.regexes.some((re) => re.test(fill('Failed to open: sm90', '')))).toBe(false);
    expect(
      jit?.regexes.some((re) => re.test('Failed to open: /x/deep_gemm/ include/impls/sm121_fp8_mqa_logits.cuh')),
    ).toBe(true);
  });

  it("the j- round's arch, fault, gloo and weight-name patterns read a long line of their own prefixes in one pass", () => {
    // bounded runs (`[^']{0,200}`, `.{0,160}`) after a literal: a line of nothing but the literal is tried
    // from each copy once, not from every prefix again
    const fill = (unit: string, tail: string) => unit.repeat(Math.ceil((1 << 20) / unit.length)) + tail;
    const catalog = loadCatalog();
    const sig = (id: string) => catalog.signatures.find((s) => s.id === id)?.regexes ?? [];
    const rule = (id: string) => catalog.exceptionRules.find((r) => r.id === id)?.message;
    const lines: Array<[RegExp[], string]> = [
      [sig('compute-capability-assert'), fill('Assertion `compute capability ', '')],
      [sig('rocm-memory-ecc-fault'), fill('Memory access fault by GPU node-1 Reason: ', '')],
      [sig('gloo-transport-error'), fill('gloo/transport/tcp/', '')],
      [sig('c10d-store-connect-timeout'), fill('The client socket has timed out after 1', '')],
      [sig('hub-request-failed'), `error sending request for url (https://${fill('a-b.', '')}`],
      [sig('hub-request-failed'), fill('error sending request for url (https://x.', '')],
    ];
    for (const [res, line] of lines) {
      expect(res.length, line.slice(0, 20)).toBeGreaterThan(0);
      expect(
        res.some((re) => re.test(line)),
        line.slice(0, 20),
      ).toBe(false);
    }
    const weightKey = rule('exc-weight-name-key');
    expect(weightKey?.test(`'a.${'b_'.repeat(1 << 19)}'`)).toBe(false);
    expect(weightKey?.test(`'${'layers.'.repeat(1 << 17)}x'`)).toBe(false);
    expect(weightKey?.test("'layers.0.mlp.down_proj.weight_scale'")).toBe(true);
  });
});
