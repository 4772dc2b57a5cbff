// Follows one attempt's log on its host: one long-lived stream, resumed from the last byte handled when the
// connection drops, ending when the server is gone (then a final read from the same offset catches the last
// lines, so none is lost and none is handled twice).

import type { Attempt } from '../ledger/attempts.ts';
import { LineSplitter, type LogLine } from '../logs/lines.ts';
import { type Engine, hostOf } from './engine.ts';
import { readRemoteState, runIdFor } from './remote-state.ts';
import { FOLLOW, READ_FROM, script } from './scripts.ts';

export interface WatchHandlers {
  /** Return 'stop' to end the watch (e.g. the launch saw what it waited for). */
  onLine(line: LogLine): undefined | 'stop' | Promise<undefined | 'stop'>;
}

export type WatchEnd = 'server-exited' | 'stopped-by-handler' | 'aborted' | 'attempt-closed';

export async function watchAttempt(
  engine: Engine,
  attempt: Attempt,
  handlers: WatchHandlers,
  signal?: AbortSignal,
): Promise<WatchEnd> {
  const { host, cfg } = hostOf(engine, attempt.host);
  if (!attempt.logPath || attempt.pgid === null || !attempt.pgidStart) return 'attempt-closed';
  let offset = attempt.logOffset;
  let lastSaved = offset;
  const save = (force = false) => {
    // Persist the offset now and then (and at the end), so a restarted bot resumes where this one stopped.
    if (force || offset - lastSaved > 64 * 1024) {
      engine.attempts.update(attempt.id, { logOffset: offset });
      lastSaved = offset;
    }
  };
  const feed = async (splitter: LineSplitter, chunk: Buffer): Promise<boolean> => {
    for (const line of splitter.push(chunk)) {
      offset = line.endOffset;
      if ((await handlers.onLine(line)) === 'stop') return true;
    }
    save();
    return false;
  };

  let backoff = 200;
  for (;;) {
    if (signal?.aborted) {
      save(true);
      return 'aborted';
    }
    const splitter = new LineSplitter(offset);
    const stream = host.stream(
      script(FOLLOW, 'glm-follow', [attempt.logPath, String(offset), String(attempt.pgid), attempt.pgidStart]),
    );
    const onAbort = () => stream.close();
    signal?.addEventListener('abort', onAbort, { once: true });
    let stopped = false;
    try {
      for await (const chunk of stream.chunks) {
        if (await feed(splitter, chunk)) {
          stopped = true;
          break;
        }
      }
    } catch (e) {
      engine.log.warn({ err: (e as Error).message, attempt: attempt.id }, 'log stream broke; resuming');
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stream.close();
    }
    if (stopped) {
      save(true);
      return 'stopped-by-handler';
    }
    if (signal?.aborted) {
      save(true);
      return 'aborted';
    }
    // The stream ended: either the server is gone, or the connection dropped. Ask the host which.
    let gone = false;
    try {
      const st = await readRemoteState(host, cfg);
      gone = st.state === 'none' || st.runId !== runIdFor(attempt.id) || st.state === 'dead';
    } catch (e) {
      engine.log.warn({ err: (e as Error).message, attempt: attempt.id }, 'host unreachable while following; retrying');
      await engine.clock.sleep(backoff);
      backoff = Math.min(backoff * 2, 10_000);
      continue;
    }
    if (gone) {
      // Catch up on whatever the stream had not delivered before it ended.
      try {
        const rest = await host.exec(script(READ_FROM, 'glm-read', [attempt.logPath, String(offset)]), {
          maxOutputBytes: 64 << 20,
        });
        const splitter2 = new LineSplitter(offset);
        if (
          await feed(
            splitter2,
            Buffer.concat([
              Buffer.from(rest.stdout),
              Buffer.from(rest.stdout.endsWith('\n') || !rest.stdout ? '' : '\n'),
            ]),
          )
        ) {
          save(true);
          return 'stopped-by-handler';
        }
      } catch (e) {
        engine.log.warn({ err: (e as Error).message, attempt: attempt.id }, 'could not read the end of the log');
      }
      save(true);
      return 'server-exited';
    }
    backoff = 200;
  }
}
