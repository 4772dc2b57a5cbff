// What the server wrote during a smoke, classified by the catalog's classifier as the smoke reads it: a crash is a
// failed smoke, a failure record alone from a server that answered is not (it is still running: crashedBeforeExit).
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { catalogDiagnoser, catalogFromConfig } from '../../src/lifecycle/classifier.ts';
import { classifyDelta } from '../../src/smoke/logdelta.ts';

const diagnoser = catalogDiagnoser(catalogFromConfig([]), systemClock);
const mark = { bytes: 0, lines: 100 };
const served = [
  '[2025-11-05 12:01:00] Prefill batch. #new-seq: 1, #new-token: 12, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0',
  '[2025-11-05 12:01:00] Decode batch. #running-req: 1, #token: 40, token usage: 0.00, gen throughput (token/s): 250.00, #queue-req: 0',
];

describe('the log written during a smoke', () => {
  it('a failure record alone after the answers is no crash, and is kept as what the server served on', () => {
    const record = '[2025-11-05 12:01:01] Failed to push metrics to the collector: connection refused';
    const v = classifyDelta(diagnoser, `${[...served, record].join('\n')}\n`, mark);
    expect(v.crashed).toBe(false);
    expect(v.diagnosis?.evidence.map((e) => e.text)).toEqual([record]);
    expect(v.diagnosis?.evidence[0]?.line).toBe(103);
  });

  it('a traceback after the answers is a crash', () => {
    const tb = [
      'Traceback (most recent call last):',
      '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2420, in run_scheduler_process',
      '    scheduler.event_loop_overlap()',
      'RuntimeError: CUDA error: an illegal memory access was encountered',
    ];
    const v = classifyDelta(diagnoser, `${[...served, ...tb].join('\n')}\n`, mark);
    expect(v.crashed).toBe(true);
    expect(v.diagnosis?.category).toBe('illegal_memory_access');
  });
});
