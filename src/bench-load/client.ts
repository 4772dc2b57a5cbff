// The load client: closed-loop concurrency over streamed native /generate requests (what sglang.bench_serving's
// `sglang` backend sends), one SSH direct-tcpip channel per request. Each request records when its chunks arrived;
// metrics.ts turns those into bench_serving's figures. The client watches its own CPU and event-loop delay so a
// report can say whether the client, not the server, set the pace.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { z } from 'zod';
import type { RemoteHost } from '../hosts/types.ts';
import { streamSse } from '../smoke/stream.ts';

export interface LoadParams {
  concurrency: number;
  requests: number;
  inputLen: number;
  outputLen: number;
  timeoutMs?: number;
  seed?: number;
  /** Sent with every request (the server's API key). */
  headers?: Record<string, string>;
}

export interface RequestRecord {
  ok: boolean;
  error?: string;
  /** ms since the level started. */
  start: number;
  end: number;
  inputTokens: number;
  outputTokens: number;
  ttftMs: number | null;
  /** Gaps between successive chunks after the first (a chunk may carry several tokens). */
  itlMs: number[];
  /** Arrival (ms since level start) and new tokens of each chunk, for the peak throughput. */
  chunks: Array<[number, number]>;
  /** The request's latency by the server's own clock (SGLang's meta_info.e2e_latency, its last chunk), if given. */
  serverE2eMs: number | null;
}

export interface LevelRun {
  params: LoadParams;
  records: RequestRecord[];
  durationMs: number;
  client: { cpuPct: number; loopDelayP99Ms: number; loopDelayMaxMs: number };
}

/**
 * One streamed /generate chunk. An e2e_latency that is null, negative (older SGLang took it from time.time(), which
 * can step back) or not a number is read as absent, as from a server without it: the request still counts.
 */
export const Chunk = z
  .object({
    text: z.string().optional(),
    meta_info: z
      .object({
        completion_tokens: z.number().optional(),
        e2e_latency: z.number().nonnegative().optional().catch(undefined),
      })
      .passthrough()
      .default({}),
  })
  .passthrough();

/** Deterministic token ids in a range every real vocabulary has (bench_serving's random-ids, seeded). */
export function promptIds(n: number, seed: number): number[] {
  let x = seed >>> 0 || 1;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = 1000 + (x % 20000);
  }
  return out;
}

async function one(host: RemoteHost, port: number, p: LoadParams, i: number, t0: number): Promise<RequestRecord> {
  const ids = promptIds(p.inputLen, (p.seed ?? 1) * 100_003 + i);
  let tokens = 0;
  let first: number | null = null;
  let prev: number | null = null;
  const itl: number[] = [];
  const chunks: Array<[number, number]> = [];
  let bad: string | undefined;
  let serverE2e: number | null = null;
  const r = await streamSse(
    host,
    port,
    {
      path: '/generate',
      body: {
        input_ids: ids,
        sampling_params: { max_new_tokens: p.outputLen, temperature: 0, ignore_eos: true },
        stream: true,
      },
      timeoutMs: p.timeoutMs ?? 600_000,
      headers: p.headers,
    },
    (data, at) => {
      let parsed: z.infer<typeof Chunk>;
      try {
        parsed = Chunk.parse(JSON.parse(data));
      } catch {
        bad ??= `unexpected event: ${data.slice(0, 80)}`;
        return;
      }
      // Set on the finished request's chunk (tokenizer_manager.py: finished_time - created_time), in seconds.
      if (parsed.meta_info.e2e_latency !== undefined) serverE2e = parsed.meta_info.e2e_latency * 1000;
      const n = parsed.meta_info.completion_tokens ?? tokens + 1;
      const added = n - tokens;
      if (added <= 0) return;
      tokens = n;
      if (first === null) first = at;
      else itl.push(at - prev!);
      prev = at;
      chunks.push([at - t0, added]);
    },
  );
  const error = r.error ?? bad;
  return {
    ok: !error && tokens > 0,
    error: error ?? (tokens === 0 ? 'no tokens' : undefined),
    start: r.startedAt - t0,
    end: r.endedAt - t0,
    inputTokens: p.inputLen,
    outputTokens: tokens,
    ttftMs: first !== null ? first - r.startedAt : null,
    itlMs: itl,
    chunks,
    serverE2eMs: serverE2e,
  };
}

/** Runs `requests` requests keeping `concurrency` in flight. */
export async function runLevel(host: RemoteHost, port: number, p: LoadParams): Promise<LevelRun> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const records: RequestRecord[] = new Array(p.requests);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= p.requests) return;
      records[i] = await one(host, port, p, i, t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(p.concurrency, p.requests) }, worker));
  const durationMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  loop.disable();
  return {
    params: p,
    records,
    durationMs,
    client: {
      cpuPct: ((cpu.user + cpu.system) / 1000 / durationMs) * 100,
      loopDelayP99Ms: loop.percentile(99) / 1e6,
      loopDelayMaxMs: loop.max / 1e6,
    },
  };
}
