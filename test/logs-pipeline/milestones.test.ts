// The milestone rules that look for one phrase after another on a line (`Capture ... graph begin`) are read in one
// pass: the same answers as the plain regexes they replace, and no time quadratic in a line's length.
import { describe, expect, it } from 'vitest';
import { loadCorpus } from '../../src/corpus/cases.ts';
import { type Milestone, parseMilestone } from '../../src/logs/milestones.ts';

// The rules as they were, all plain regexes (`.*` backtracks over the whole line from every head).
const num = (s: string | undefined): number => Number(s ?? Number.NaN);
const REFERENCE: Array<[RegExp, (m: RegExpMatchArray) => Milestone]> = [
  [/server_args=ServerArgs\(/, () => ({ kind: 'server_args' })],
  // vLLM's arguments line is a plain regex in both: here so that its compilation config (`cudagraph_capture_sizes`)
  // on a dev line is compared with the rule that reads it.
  [/non-default args: \{/, () => ({ kind: 'server_args' })],
  [/Init torch distributed begin\./, () => ({ kind: 'dist_init_begin' })],
  [/Load weight begin\./, () => ({ kind: 'weights_begin' })],
  [
    /(?:Loading (?:safetensors|pt) checkpoint shards|Multi-thread loading shards|Loading safetensors using Fastsafetensor loader):\s+(\d+)% Completed \| (\d+)\/(\d+)/,
    (m) => ({ kind: 'shards', percent: num(m[1]), done: num(m[2]), total: num(m[3]) }),
  ],
  [/Load weight end\..*?mem usage=([\d.]+) GB/, (m) => ({ kind: 'weights_end', memUsageGb: num(m[1]) })],
  [/Load weight end\./, () => ({ kind: 'weights_end' })],
  [/KV Cache is allocated\.[^#]*#tokens: (\d+)/, (m) => ({ kind: 'kv_allocated', tokens: num(m[1]) })],
  [/Memory pool end\./, () => ({ kind: 'mem_pool_end' })],
  [/Capture .*graph begin/i, () => ({ kind: 'graph_begin' })],
  [/Capture .*graph end\.(?: Time elapsed: ([\d.]+) s)?/i, (m) => ({ kind: 'graph_end', seconds: num(m[1]) })],
  // vLLM's capture lines are plain regexes in both (milestones.ts): here so that a dev line in vLLM's words
  // (`Capturing cudagraphs for decoding.`) is compared with the rule that reads it.
  [/Graph capturing finished in ([\d.]+) sec/, (m) => ({ kind: 'graph_end', seconds: num(m[1]) })],
  [
    /Capturing (?:the model for )?(?:CUDA graphs|cudagraphs)\b|Graph capturing for \d+/,
    () => ({ kind: 'graph_begin' }),
  ],
  [
    /max_total_num_tokens=(\d+), chunked_prefill_size=/,
    (m) => ({ kind: 'scheduler_ready', maxTotalTokens: num(m[1]) }),
  ],
  [/Uvicorn running on https?:\/\/[^\s:]+:(\d+)/, (m) => ({ kind: 'uvicorn_running', port: num(m[1]) })],
  [/The server is fired up and ready to roll!/, () => ({ kind: 'ready' })],
  [/Prefill batch[,.]/, () => ({ kind: 'prefill' })],
  [/Decode batch[,.]/, () => ({ kind: 'decode' })],
  [/SIGTERM received\. signum=|Gracefully exiting\.\.\./, () => ({ kind: 'shutdown' })],
];

function reference(line: string): Milestone | null {
  for (const [re, build] of REFERENCE) {
    const m = line.match(re);
    if (m) return build(m);
  }
  return null;
}

describe('milestones read in one pass', () => {
  it('give what the regexes gave, on every dev line and on lines built to tell them apart', () => {
    const lines = loadCorpus()
      .cases.filter((c) => c.split === 'dev')
      .flatMap((c) => c.log.split('\n'))
      .filter((l) => /capture|load weight end/i.test(l));
    const built = [
      'Capture cuda graph begin. This can take up to several minutes.',
      'Capture piecewise CUDA graph begin',
      'capture CUDA GRAPH END. Time elapsed: 12.5 s. mem usage=1.2 GB',
      'Capture cuda graph end. Time elapsed: 3.1 s, and again: graph end. Time elapsed: 9.9 s',
      'Capture cuda graph end. Time elapsed: 3.1 s, then graph end. without a time',
      'graph begin before Capture only',
      'Capture \u2028graph begin (a line terminator in between)',
      'Capture x\u2028Capture y graph end. Time elapsed: 1 s',
      'Capture graph begin',
      'Capture  graph begin',
      'Load weight end. type=X, dtype=bf16, avail mem=70.1 GB, mem usage=12.34 GB. Load weight end. mem usage=9 GB',
      'Load weight end. no usage here',
      'Load weight end.\u2028 mem usage=1 GB',
    ];
    expect(lines.length).toBeGreaterThan(10);
    for (const line of [...lines, ...built]) {
      expect(parseMilestone(line), line).toEqual(reference(line));
    }
  });

  it('read a 10 MB line of capture records without the end in one pass', () => {
    // Every `Capture ` would run to the end of the line and back as a regex: ~10^12 steps here.
    const line = 'Capture cuda graph bs [1, 2, 4, 8] '.repeat(300_000);
    expect(line.length).toBeGreaterThan(10 << 20);
    expect(parseMilestone(line)).toBeNull();
    expect(parseMilestone(`${line}Load weight end. mem usage=3 GB`)).toEqual({ kind: 'weights_end', memUsageGb: 3 });
  });
});
