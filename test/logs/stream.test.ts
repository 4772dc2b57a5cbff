// The streaming classifier as a log follower uses it: crashed() as soon as the cause appears, phase of a crash
// from the milestones before it, stable dedup keys across ranks and runs, and stall detection on an injected clock.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Classifier,
  type ClassifierOptions,
  classifyText,
  createClassifier,
  diagnoseFile,
  diagnoseText,
  loadCatalog,
  renderDiagnosis,
} from '../../src/logs/classify/index.ts';
import { cleanLine } from '../../src/logs/lines.ts';
import { fixtureLines, readFixture } from './fixtures.ts';

const catalog = loadCatalog();

function feed(c: Classifier, lines: string[], from = 1): number {
  lines.forEach((l, i) => {
    c.push(cleanLine(l), from + i);
  });
  return from + lines.length;
}

describe('crashed()', () => {
  it('turns true on the root line, not at the end of the traceback', () => {
    const c = createClassifier({ catalog });
    const lines = fixtureLines('nan_in_sampling_kimi_cp.log');
    feed(c, lines.slice(0, 3));
    expect(c.crashed()).toBe(false);
    expect(c.result().category).toBe('none');
    c.push(lines[3] ?? '', 4);
    expect(c.crashed()).toBe(true);
    expect(c.result().category).toBe('nan_in_sampling');
  });

  it('stays false through every red-herring warning of a healthy start and a busy server', () => {
    for (const name of ['none_startup_red_herrings.log', 'none_runtime_retraction.log']) {
      const c = createClassifier({ catalog });
      fixtureLines(name).forEach((l, i) => {
        c.push(cleanLine(l), i + 1);
        expect(c.crashed(), `${name}:${i + 1}`).toBe(false);
      });
    }
  });

  it('ignores a warning that quotes an ImportError (benign vetoes root on the same line)', () => {
    // From https://github.com/sgl-project/sglang/issues/1321: a warning, the server went on loading.
    const line =
      "WARNING 09-04 04:55:04 _core_ext.py:180] Failed to import from vllm._core_C with ImportError('/opt/conda/lib/python3.10/site-packages/vllm/_core_C.abi3.so: undefined symbol: _ZN5torch6detail10class_baseC2ERKSsS3_SsRKSt9type_infoS6_')";
    expect(classifyText(line, { catalog }).category).toBe('none');
  });

  it('marks death on a consequence alone and calls it other', () => {
    const c = createClassifier({ catalog });
    // The last line of the shared-memory report: the shell saying the server was killed.
    const lines = fixtureLines('shared_memory_glm45_air_decode.log');
    c.push(lines[29] ?? '', 1);
    expect(c.crashed()).toBe(true);
    expect(c.result().category).toBe('other');
  });
});

describe('phase of a crash', () => {
  const startup = fixtureLines('none_startup_red_herrings.log');

  it('is decode for a sampling NaN right after the ready line and the first prefill', () => {
    const text = [...startup, ...fixtureLines('nan_in_sampling_kimi_cp.log')].join('\n');
    const c = classifyText(text, { catalog });
    expect(c.category).toBe('nan_in_sampling');
    expect(c.phase).toBe('decode');
    expect(c.evidence[0]?.line).toBe(startup.length + 4);
  });

  it('follows the last prefill/decode/access line after ready', () => {
    const busy = fixtureLines('none_runtime_retraction.log');
    const crash = fixtureLines('illegal_memory_access_kimi_marlin.log');
    expect(classifyText([...startup, ...busy.slice(0, 1), ...crash].join('\n'), { catalog }).phase).toBe('prefill');
    expect(classifyText([...startup, ...busy.slice(0, 2), ...crash].join('\n'), { catalog }).phase).toBe('decode');
    expect(classifyText([...startup, ...busy.slice(0, 4), ...crash].join('\n'), { catalog }).phase).toBe('runtime');
  });

  it('is the startup step a log stopped in', () => {
    const upToCapture = startup.slice(0, startup.findIndex((l) => l.includes('Capture cuda graph begin')) + 1);
    const crash = fixtureLines('illegal_memory_access_kimi_marlin.log');
    expect(classifyText([...upToCapture, ...crash].join('\n'), { catalog }).phase).toBe('cuda_graph_capture');
    // corpus/README.md's phase rule 1: from `Load weight end` up to the memory pool, the KV cache is set up
    const upToLoad = startup.slice(0, startup.findIndex((l) => l.includes('Load weight end')) + 1);
    expect(classifyText([...upToLoad, ...crash].join('\n'), { catalog }).phase).toBe('kv_alloc');
  });
});

describe('dedup key', () => {
  it('is the same for the same cause on another rank or another day', () => {
    // https://github.com/sgl-project/sglang/pull/14369 (TP0, TP7) and https://github.com/sgl-project/sglang/issues/1953 (TP1)
    const a = classifyText('[2025-12-03 15:29:24 TP0] Detected errors during sampling! NaN in the logits.', {
      catalog,
    });
    const b = classifyText('[2025-12-03 15:29:24 TP7] Detected errors during sampling! NaN in the logits.', {
      catalog,
    });
    const c = classifyText('[2024-11-08 04:44:04 TP1] Detected errors during sampling! NaN in the logits.', {
      catalog,
    });
    expect(a.category).toBe('nan_in_sampling');
    expect(a.rank).toBe(0);
    expect(b.rank).toBe(7);
    expect(b.dedupKey).toBe(a.dedupKey);
    expect(c.dedupKey).toBe(a.dedupKey);
  });

  it('differs between causes', () => {
    const keys = new Set(
      ['nan_in_sampling_kimi_cp.log', 'cuda_oom_graph_capture_deepep.log', 'cuda_oom_runtime_overlap.log'].map(
        (n) => classifyText(readFixture(n), { catalog }).dedupKey,
      ),
    );
    expect(keys.size).toBe(3);
  });
});

describe('stall detection', () => {
  function clocked(opts: Pick<ClassifierOptions, 'stallMs'> = {}) {
    let now = 1_000_000;
    const c = createClassifier({ catalog, clock: () => now, ...opts });
    return { c, advance: (ms: number) => (now += ms), now: () => now };
  }
  const startup = fixtureLines('none_startup_red_herrings.log');
  const toCapture = startup.slice(0, startup.findIndex((l) => l.includes('Capture cuda graph begin')) + 1);

  it('reports a hang after 10 minutes without a line during CUDA graph capture', () => {
    const { c, advance, now } = clocked();
    feed(c, toCapture);
    advance(9 * 60_000);
    expect(c.checkStall(now())).toBeNull();
    advance(60_000);
    const hang = c.checkStall(now());
    expect(hang).toMatchObject({
      category: 'watchdog_timeout',
      phase: 'cuda_graph_capture',
      summary: 'no progress for 10 min during cuda_graph_capture (hang)',
      rank: null,
      confidence: 0.5,
    });
    expect(hang?.evidence).toEqual([{ line: toCapture.length, text: toCapture[toCapture.length - 1] }]);
    expect(c.result()).toEqual(hang);
    expect(c.crashed()).toBe(false);
    // Progress again: it was slow, not hung.
    c.push(cleanLine(startup[toCapture.length] ?? ''), toCapture.length + 1);
    expect(c.result().category).toBe('none');
  });

  it('reports a launch that never printed anything', () => {
    const { c, advance, now } = clocked();
    advance(10 * 60_000);
    expect(c.checkStall(now())).toMatchObject({
      category: 'watchdog_timeout',
      phase: 'unknown',
      summary: 'no progress for 10 min (hang)',
      evidence: [],
    });
  });

  it('takes per-phase limits from the options, and null turns a phase off', () => {
    const fast = clocked({ stallMs: { cuda_graph_capture: 60_000 } });
    feed(fast.c, toCapture);
    fast.advance(61_000);
    expect(fast.c.checkStall(fast.now())?.summary).toBe('no progress for 1 min during cuda_graph_capture (hang)');
    const off = clocked({ stallMs: { cuda_graph_capture: null } });
    feed(off.c, toCapture);
    off.advance(3_600_000);
    expect(off.c.checkStall(off.now())).toBeNull();
  });

  it('never calls an idle running server hung, nor a crashed one', () => {
    const idle = clocked();
    feed(idle.c, startup);
    idle.advance(24 * 3_600_000);
    expect(idle.c.checkStall(idle.now())).toBeNull();
    const dead = clocked();
    feed(dead.c, fixtureLines('cuda_oom_graph_capture_deepep.log'));
    dead.advance(3_600_000);
    expect(dead.c.checkStall(dead.now())).toBeNull();
    expect(dead.c.result().category).toBe('cuda_oom');
  });
});

describe('large logs', () => {
  it('scan a file the same way as line by line, with the crash deep inside', async () => {
    const busy = fixtureLines('none_runtime_retraction.log');
    const parts = [...fixtureLines('none_startup_red_herrings.log')];
    for (let i = 0; i < 20_000; i++) parts.push(busy[i % busy.length] ?? '');
    parts.push(...fixtureLines('shared_memory_glm45_air_decode.log'));
    for (let i = 0; i < 2_000; i++) parts.push(busy[i % busy.length] ?? '');
    const text = `${parts.join('\n')}\n`;
    const file = join(mkdtempSync(join(tmpdir(), 'glm-classify-')), 'big.log');
    writeFileSync(file, text);
    const whole = diagnoseText(text, { catalog });
    expect(whole.classification.category).toBe('shared_memory_exceeded');
    expect(whole.linesRead).toBe(parts.length);
    expect(JSON.stringify(await diagnoseFile(file, { catalog }))).toBe(JSON.stringify(whole));
  });

  it('scan a file to the phase the last line that moves it set: a request refused after one served leaves runtime', async () => {
    const lines = [
      'INFO 03-24 17:28:16 engine.py:273] Added request embd-1.',
      'INFO: 10.0.0.2:51382 - "POST /v1/embeddings HTTP/1.1" 200 OK',
      'INFO: 10.0.0.2:51422 - "POST /v1/embeddings HTTP/1.1" 400 Bad Request',
    ];
    const text = `${lines.join('\n')}\n`;
    const file = join(mkdtempSync(join(tmpdir(), 'glm-classify-')), 'refused.log');
    writeFileSync(file, text);
    const whole = diagnoseText(text, { catalog });
    expect(whole.classification.phase).toBe('runtime');
    expect(JSON.stringify(await diagnoseFile(file, { catalog }))).toBe(JSON.stringify(whole));
  });

  it('render as text with meaning and next steps', () => {
    const text = renderDiagnosis(diagnoseText(readFixture('unsupported_arch_deepgemm_sm120.log'), { catalog }));
    expect(text).toContain('Unsupported GPU architecture');
    expect(text).toContain('next steps:');
    expect(text).toContain('https://github.com/sgl-project/sglang/issues/26087');
  });
});
