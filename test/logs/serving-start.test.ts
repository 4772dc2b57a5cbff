// A reader that starts after the server's ready line (a smoke test's bytes since its mark, a follow resumed after a bot
// restart past its context window) judges what it reads as a serving server's log when told so (`serving: true`), and
// then agrees with the reader of the whole log: another client's bad request is no crash; a real crash still is.
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { catalogDiagnoser } from '../../src/lifecycle/classifier.ts';
import { createClassifier, diagnoseText, loadCatalog } from '../../src/logs/classify/index.ts';
import { classifyDelta } from '../../src/smoke/logdelta.ts';

const READY = [
  '[2025-11-05 12:00:00] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16',
  '[2025-11-05 12:00:05] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)',
  '[2025-11-05 12:00:06] The server is fired up and ready to roll!',
];

const CLIENT_ERRORS: [string, string[]][] = [
  [
    "uvicorn's report of a chat request's exception",
    [
      '[2025-11-05 12:01:00] ERROR:    Exception in ASGI application',
      'Traceback (most recent call last):',
      '  File "/sgl/python/sglang/srt/entrypoints/http_server.py", line 400, in openai_v1_chat_completions',
      '    return await raw_request.app.state.openai_serving_chat.handle_request(request, raw_request)',
      "ValueError: Unknown tool_choice 'required2'",
    ],
  ],
  [
    'a request refused',
    [
      "[2025-11-05 12:01:00] ERROR: Error in request: ValueError: The input (40000 tokens) is longer than the model's context length (32768 tokens).",
    ],
  ],
  ['a 4xx answer', ['[2025-11-05 12:01:00] ERROR: openai.BadRequestError: Error code: 400 - invalid top_p']],
];

const CRASH = [
  '[2025-11-05 12:01:00 TP0] Scheduler hit an exception: Traceback (most recent call last):',
  '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2500, in event_loop_overlap',
  '    self.run_batch(batch)',
  'RuntimeError: CUDA error: an illegal memory access was encountered',
];

function read(lines: string[], serving?: boolean) {
  const c = createClassifier(serving === undefined ? {} : { serving });
  lines.forEach((l, i) => {
    c.push(l, i + 1);
  });
  return { category: c.result().category, crashed: c.crashed() };
}

describe('a reader that starts after the ready line', () => {
  it.each(CLIENT_ERRORS)('%s: serving: true agrees with the whole log (no crash)', (_name, tail) => {
    expect(diagnoseText([...READY, ...tail, ''].join('\n')).classification.category).toBe('none');
    expect(read(tail, true)).toEqual({ category: 'none', crashed: false });
    // without the option the reader cannot know the server serves: a crash (what the option is for)
    expect(read(tail).crashed).toBe(true);
  });

  it('a real crash is still one', () => {
    expect(read(CRASH, true)).toEqual({ category: 'illegal_memory_access', crashed: true });
  });

  it("the smoke's log delta reads its bytes as a serving server's", () => {
    const diagnoser = catalogDiagnoser(loadCatalog(), systemClock);
    const mark = { bytes: 1000, lines: 40 };
    for (const [, tail] of CLIENT_ERRORS) {
      const v = classifyDelta(diagnoser, `${tail.join('\n')}\n`, mark);
      expect(v.crashed).toBe(false);
      expect(v.diagnosis).toBeNull();
    }
    const crash = classifyDelta(diagnoser, `${CRASH.join('\n')}\n`, mark);
    expect(crash.crashed).toBe(true);
    expect(crash.diagnosis?.category).toBe('illegal_memory_access');
    expect(crash.diagnosis?.evidence[0]?.line).toBe(44);
  });
});
