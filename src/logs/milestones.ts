// SGLang startup milestones, recognised from its real log lines (docs/sglang.md §3). One line at a
// time, pure; the tracker in src/lifecycle decides what a milestone means for an attempt.

export type Milestone =
  | { kind: 'server_args' }
  | { kind: 'dist_init_begin' }
  | { kind: 'weights_begin' }
  | { kind: 'shards'; done: number; total: number; percent: number }
  | { kind: 'weights_end'; memUsageGb?: number }
  | { kind: 'kv_allocated'; tokens: number }
  | { kind: 'mem_pool_end' }
  | { kind: 'graph_begin' }
  | { kind: 'graph_end'; seconds?: number }
  | { kind: 'scheduler_ready'; maxTotalTokens: number }
  | { kind: 'uvicorn_running'; port: number }
  | { kind: 'ready' }
  | { kind: 'prefill' }
  | { kind: 'decode' }
  | { kind: 'shutdown' };

const num = (s: string | undefined): number => Number(s ?? Number.NaN);

const RULES: Array<[RegExp, (m: RegExpMatchArray) => Milestone]> = [
  [/server_args=ServerArgs\(/, () => ({ kind: 'server_args' })],
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

export function parseMilestone(line: string): Milestone | null {
  // Cheap pre-filter: every rule's line contains one of these words, and most log lines contain none.
  if (
    !/ServerArgs|torch distributed|weight|shards|Fastsafetensor|KV Cache|Memory pool|graph|max_total_num_tokens|Uvicorn|fired up|batch|SIGTERM|Gracefully/i.test(
      line,
    )
  ) {
    return null;
  }
  for (const [re, build] of RULES) {
    const m = line.match(re);
    if (m) return build(m);
  }
  return null;
}
