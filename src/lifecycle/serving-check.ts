// Whether a ready server that just logged what reads like a crash still serves: the words of a log are weaker evidence
// than a process that is alive and answers. Asked by the early alert before it tells a crash of a ready attempt
// (early-alert.ts); its /health read is the probe's too (probe.ts).
import type { RemoteHost } from '../hosts/types.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { type ApiKeyContext, serverAuth } from './api-key.ts';
import { type Engine, hostOf } from './engine.ts';

/**
 * One try of the health check. SGLang's /health_generate runs a one-token generation through the tokenizer manager
 * and the scheduler and answers once any output arrives (at once on a busy server: its next decode step), or 503
 * after SGLANG_HEALTH_CHECK_TIMEOUT (20 s) when none does (python/sglang/srt/entrypoints/http_server.py,
 * health_generate). 5 s is what confirmReady gives /health one try: far more than a decode step or a prefill chunk
 * of a loaded server, far less than a wedged scheduler's 20 s. A timeout is no answer: the crash is told.
 */
export const HEALTH_TRY_MS = 5000;
/** Before the second try: a slow server that missed one try gets one more; a crash is then told at most ~11 s late. */
export const HEALTH_RETRY_MS = 1000;

/**
 * GET `path` (/health by default) of a server: its status, or why there was none. /health* is open on a server
 * started with --api-key (api-key.ts); `address`: a job's compute node, reached through the login node.
 */
export function readHealth(
  host: RemoteHost,
  port: number,
  address: string | undefined,
  timeoutMs: number,
  opts: { path?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number | null; error?: string | undefined }> {
  return host
    .http(port, { method: 'GET', path: opts.path ?? '/health', timeoutMs, address, headers: opts.headers })
    .then((r) => ({ status: r.status as number | null, error: undefined as string | undefined }))
    .catch((e: Error) => ({ status: null, error: e.message }));
}

export type ServingContext = Pick<Engine, 'loaded' | 'pool' | 'clock'> & ApiKeyContext;

/**
 * Whether the attempt's server still serves: `processUp` (its node's process as the host or the scheduler records
 * it: node-watch.ts asks the backend) says why it runs, and the server answers /health_generate 200 (on its head,
 * where it listens): then why, in words; else null. What cannot be read (an unreachable host) is no proof: null.
 */
export async function stillServing(
  engine: ServingContext,
  attempt: Attempt,
  processUp: () => Promise<string | null>,
): Promise<string | null> {
  // The process first: a crashed server is told after one read of its host, without waiting for an answer.
  const up = await processUp().catch(() => null);
  if (!up) return null;
  const { host } = hostOf(engine, attempt.host);
  const address = attempt.serverAddr ?? undefined;
  const headers = await serverAuth(engine, attempt);
  const health = () => readHealth(host, attempt.port, address, HEALTH_TRY_MS, { path: '/health_generate', headers });
  let h = await health();
  // Slow (answered non-200, or not within the try): once more. Refused: nothing listens, no second try.
  if (h.status !== 200 && (h.status !== null || /timed out/.test(h.error ?? ''))) {
    await engine.clock.sleep(HEALTH_RETRY_MS);
    h = await health();
  }
  return h.status === 200 ? `${up} and /health_generate answered 200` : null;
}
