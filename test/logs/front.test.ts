// Wrappers learnt from the log itself (front.ts) and the Kubernetes tools' fronts (normalise.ts): a front no rule
// names in front of every line of a traceback, and the labels `kubectl logs --prefix` and stern put there.
import { describe, expect, it } from 'vitest';
import { UnknownFronts } from '../../src/logs/classify/front.ts';
import { stripWrappers } from '../../src/logs/classify/normalise.ts';
import { diagnose } from './diagnose.ts';

// A Rust launcher streaming its Python child's stderr through `tracing` (`<time> DEBUG <target>: <line>`).
const rust = (i: number, l: string) => `2025-06-06T19:02:40.${String(700 + i)}Z DEBUG launcher::subprocess: ${l}`;
const traceback = [
  'Traceback (most recent call last):',
  '  File "/x/vllm/entrypoints/openai/api_server.py", line 269, in build_async_engine_client',
  '    raise RuntimeError(',
  'RuntimeError: Engine process failed to start. See stack trace for the root cause.',
];

describe('a front no rule names, learnt where a traceback starts behind it', () => {
  it('is taken off the lines after it: the exception behind it is read as one', () => {
    const d = diagnose(traceback.map((l, i) => rust(i, l)));
    expect([d.category, d.line], d.reason).toEqual(['other', 4]);
    // (the time stamp in front is a wrapper a rule names: it stays, and the reader takes it off)
    expect(d.root).toBe(
      '2025-06-06T19:02:40.703Z RuntimeError: Engine process failed to start. See stack trace for the root cause.',
    );
  });

  it('is learnt at a frame when the excerpt starts after the header, and its time stamp may change', () => {
    const f = new UnknownFronts();
    f.learn(rust(1, traceback[1] as string));
    expect(f.strip(rust(2, traceback[2] as string))).toBe('2025-06-06T19:02:40.702Z     raise RuntimeError(');
    // another process's line, with no such front, is left as it is
    expect(f.strip('INFO 06-06 19:02:41 [core.py:1] ready')).toBe('INFO 06-06 19:02:41 [core.py:1] ready');
  });

  it("is not a record's own words before its traceback", () => {
    const f = new UnknownFronts();
    f.learn('[2025-01-01 00:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):');
    const line = '[2025-01-01 00:00:00 TP0] Scheduler hit an exception: ValueError: x';
    expect(f.strip(line)).toBe(line);
  });

  it('stays behind the wrappers a rule names, which keep what they say (a rank)', () => {
    const f = new UnknownFronts();
    f.learn(`[rank3]: launcher-svc ${traceback[0]}`);
    expect(f.strip('[rank3]: launcher-svc ValueError: x')).toBe('[rank3]: ValueError: x');
  });
});

describe("Kubernetes log tools' labels", () => {
  it('kubectl logs --prefix and stern (a Deployment pod and its container) are wrappers', () => {
    expect(stripWrappers('[pod/sglang-decode-7cfd7bf68f-nk5kr/sglang] RuntimeError: x')).toBe('RuntimeError: x');
    expect(stripWrappers('ms-pd-decode-6c8f9c4df6-vh88z vllm RuntimeError: x')).toBe('RuntimeError: x');
    // a message's own words are no pod: the hash and suffix are in the alphabet Kubernetes names pods from
    expect(stripWrappers('model-loader-abcdefg-hijkl done RuntimeError: x')).toBe(
      'model-loader-abcdefg-hijkl done RuntimeError: x',
    );
  });
});
