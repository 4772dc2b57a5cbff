// Launch, step 6: confirm ready. The ready line is not enough: /health must answer 200 and, unless turned off, one
// real request must be answered (the seeds' NaN only showed on the first request). A ready attempt is recorded with
// the ready time its own log gives.
import type { Attempt } from '../../ledger/attempts.ts';
import { serverAuth, statusText } from '../api-key.ts';
import { type Engine, type hostOf, publish } from '../engine.ts';
import { logStart } from '../log-read.ts';
import type { LaunchEvent, LaunchResult } from './types.ts';

/** true: ready; false: not (yet) answering; a string: the first request's error status and body's first line. */
export async function confirmReady(
  engine: Engine,
  host: ReturnType<typeof hostOf>['host'],
  attempt: Attempt,
  firstRequest: boolean,
  closing?: AbortSignal,
): Promise<boolean | string> {
  // A job's server listens on its compute node: the tunnel from the login node goes there.
  const address = attempt.serverAddr ?? undefined;
  for (let i = 0; i < 20; i++) {
    if (closing?.aborted) return false;
    try {
      const h = await host.http(attempt.port, { method: 'GET', path: '/health', timeoutMs: 5000, address });
      if (h.status === 200) break;
    } catch {
      // not up yet
    }
    if (i === 19) return false;
    await engine.clock.sleep(250);
  }
  if (!firstRequest) return true;
  if (closing?.aborted) return false;
  try {
    // A bot closing meanwhile stops waiting (up to a minute) and writes nothing: its ledger is about to close.
    const r = await untilAborted(
      host.http(attempt.port, {
        method: 'POST',
        address,
        path: '/generate',
        headers: { 'content-type': 'application/json', ...(await serverAuth(engine, attempt)) },
        body: JSON.stringify({
          text: 'The capital city of France is',
          sampling_params: { max_new_tokens: 8, temperature: 0 },
        }),
        timeoutMs: 60_000,
      }),
      closing,
    );
    if (r === 'aborted') return false;
    engine.attempts.event(attempt.id, engine.clock.now(), 'first_request', { status: r.status });
    return r.status === 200 ? true : statusText(r.status, r.body);
  } catch (e) {
    if (closing?.aborted) return false;
    engine.attempts.event(attempt.id, engine.clock.now(), 'first_request', { error: (e as Error).message });
    return false;
  }
}

/** `p`, or 'aborted' as soon as `signal` is (p's own end is then ignored). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T | 'aborted'> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.resolve('aborted');
  }
  return new Promise<T | 'aborted'>((resolve, reject) => {
    const onAbort = () => resolve('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Records the attempt ready: when the server got ready by its own log (a follower that re-attached late notices later). */
export async function recordReady(
  engine: Engine,
  attempt: Attempt,
  readyStamp: number | undefined,
  emit: (e: LaunchEvent) => void,
): Promise<LaunchResult> {
  const now = engine.clock.now();
  const start =
    readyStamp === undefined || !attempt.logPath ? undefined : await logStart(engine, attempt.host, attempt.logPath);
  const readyAt =
    start !== undefined && readyStamp !== undefined
      ? Math.min(now, attempt.startedAt + Math.max(0, readyStamp - start))
      : now;
  engine.attempts.update(attempt.id, { status: 'ready', readyAt, lastMilestone: 'ready' });
  engine.attempts.event(attempt.id, now, 'ready', {});
  const a = engine.attempts.get(attempt.id)!;
  publish(engine, emit, { kind: 'ready', attempt: a, seconds: (readyAt - attempt.startedAt) / 1000 });
  return { outcome: 'ready', commandLine: attempt.commandLine, attempt: a };
}
