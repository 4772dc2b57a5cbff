// SGLang's own Prometheus /metrics (served when the server runs with --enable-metrics), read by probe: token
// throughput, running and queued requests, KV cache usage, and the means of the TTFT and inter-token latency
// histograms. Names as SGLang's collector defines them (python/sglang/srt/metrics/collector.py; the docs' "Production
// Metrics" page): sglang:gen_throughput, sglang:num_running_reqs, sglang:num_queue_reqs, sglang:token_usage,
// sglang:time_to_first_token_seconds, sglang:inter_token_latency_seconds.
import { z } from 'zod';
import type { RemoteHost } from '../hosts/types.ts';

export const ServerMetricsSchema = z.object({
  genThroughput: z.number().nonnegative().optional(),
  running: z.number().nonnegative().optional(),
  queued: z.number().nonnegative().optional(),
  tokenUsage: z.number().nonnegative().optional(),
  ttftMeanMs: z.number().nonnegative().optional(),
  itlMeanMs: z.number().nonnegative().optional(),
  requests: z.number().nonnegative().optional(),
});
export type ServerMetrics = z.infer<typeof ServerMetricsSchema>;

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s+(\S+)/;

/** Sums each metric over its label sets (one per TP/DP rank); comments and unparsable lines are skipped. */
export function parsePrometheusText(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line.trim());
    const v = m ? Number(m[2]) : Number.NaN;
    if (m && Number.isFinite(v)) out.set(m[1]!, (out.get(m[1]!) ?? 0) + v);
  }
  return out;
}

export function serverMetrics(text: string): ServerMetrics {
  const s = parsePrometheusText(text);
  const mean = (h: string) => {
    const n = s.get(`${h}_count`);
    const sum = s.get(`${h}_sum`);
    return n && sum !== undefined ? (sum / n) * 1000 : undefined;
  };
  return ServerMetricsSchema.parse({
    genThroughput: s.get('sglang:gen_throughput'),
    running: s.get('sglang:num_running_reqs'),
    queued: s.get('sglang:num_queue_reqs'),
    tokenUsage: s.get('sglang:token_usage'),
    ttftMeanMs: mean('sglang:time_to_first_token_seconds'),
    itlMeanMs: mean('sglang:inter_token_latency_seconds'),
    requests: s.get('sglang:num_requests_total'),
  });
}

/** The server's /metrics, or why not (404: the server runs without --enable-metrics). */
export async function readServerMetrics(
  host: RemoteHost,
  port: number,
  /** Where the server listens as seen from the host (a Slurm job's compute node); default its loopback. */
  address?: string,
): Promise<ServerMetrics | { error: string }> {
  try {
    const r = await host.http(port, { method: 'GET', path: '/metrics', timeoutMs: 5000, address });
    if (r.status === 404) return { error: 'not served (launch with enable_metrics: true for --enable-metrics)' };
    if (r.status !== 200) return { error: `HTTP ${r.status}` };
    return serverMetrics(r.body);
  } catch (e) {
    return { error: (e as Error).message };
  }
}

export function serverMetricsText(m: ServerMetrics | { error: string }): string {
  if ('error' in m) return `not available: ${m.error}`;
  const f = (v: number | undefined, unit: string, digits = 1) =>
    v === undefined ? '-' : `${v.toFixed(digits)}${unit}`;
  return [
    `gen ${f(m.genThroughput, ' tok/s')}`,
    `running ${f(m.running, '', 0)}`,
    `queued ${f(m.queued, '', 0)}`,
    `KV cache ${m.tokenUsage === undefined ? '-' : `${(m.tokenUsage * 100).toFixed(1)}%`}`,
    `TTFT mean ${f(m.ttftMeanMs, ' ms')}`,
    `ITL mean ${f(m.itlMeanMs, ' ms')}`,
  ].join(', ');
}
