// Follows one attempt's log on its host: one long-lived stream, resumed from the last byte handled when the
// connection drops, ending when the server is gone (then a final read from the same offset catches the last
// lines, so none is lost and none is handled twice). Truncation and rotation reset the offset to the new file's
// start. Memory stays bounded: lines are handled one at a time and cut at LineSplitter's limit.
import type { Attempt } from '../ledger/attempts.ts';
import { LineSplitter, type LogLine } from '../logs/lines.ts';
import { backendFor } from './backends.ts';
import { type Engine, hostOf } from './engine.ts';
import { headNode, type NodeRef, saveOffset } from './nodes.ts';
import { READ_FROM, script } from './scripts.ts';

export interface WatchHandlers {
  /** Return 'stop' to end the watch (e.g. the launch saw what it waited for). */
  onLine(line: LogLine): undefined | 'stop' | Promise<undefined | 'stop'>;
}

// GNU tail's notices when the file under -F shrinks or changes identity.
const TAIL_NOTICE =
  /^tail: .*(file truncated|has been replaced|has appeared|following new file|has become inaccessible)/;

export type WatchEnd = 'server-exited' | 'stopped-by-handler' | 'aborted' | 'attempt-closed';

/** Follows node 0's log (the only node of a plain launch). */
export function watchAttempt(
  engine: Engine,
  attempt: Attempt,
  handlers: WatchHandlers,
  signal?: AbortSignal,
): Promise<WatchEnd> {
  return watchNode(engine, headNode(attempt), handlers, signal);
}

export async function watchNode(
  engine: Engine,
  node: NodeRef,
  handlers: WatchHandlers,
  signal?: AbortSignal,
  /** false: a display-only follower (`logs --follow`) that must not move the attempt's saved offset. */
  persist = true,
): Promise<WatchEnd> {
  const { host } = hostOf(engine, node.host);
  const backend = backendFor(engine, node.host);
  const attempt = { id: node.attemptId, logPath: node.logPath };
  // A job of a scheduler is known by its id, a process group by its PGID and start time.
  const started = node.jobId !== null || (node.pgid !== null && node.pgidStart);
  if (!attempt.logPath || !started) return 'attempt-closed';
  let offset = node.logOffset;
  let lastSaved = offset;
  let splitter = new LineSplitter(offset);

  const save = (force = false) => {
    // Persist the offset now and then (and at the end), so a restarted bot resumes where this one stopped.
    if (!persist) return;
    if (force || offset - lastSaved > 64 * 1024) {
      saveOffset(engine, node, offset);
      lastSaved = offset;
    }
  };

  const feed = async (chunk: Buffer): Promise<boolean> => {
    for (const line of splitter.push(chunk)) {
      if (TAIL_NOTICE.test(line.text)) {
        engine.log.info(
          { attempt: attempt.id, notice: line.text },
          'log truncated or rotated: following from its start',
        );
        splitter = new LineSplitter(0);
        offset = 0;
        save(true);
        continue;
      }
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
    splitter = new LineSplitter(offset);
    const stream = host.stream(backend.followArgv(engine, node, offset));
    const onAbort = () => stream.close();
    signal?.addEventListener('abort', onAbort, { once: true });
    let stopped = false;
    try {
      for await (const chunk of stream.chunks) {
        if (await feed(chunk)) {
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
      gone = await backend.nodeGone(engine, node);
    } catch (e) {
      engine.log.warn({ err: (e as Error).message, attempt: attempt.id }, 'host unreachable while following; retrying');
      await engine.clock.sleep(backoff);
      backoff = Math.min(backoff * 2, 10_000);
      continue;
    }
    if (!gone) {
      backoff = 200;
      continue;
    }
    // Catch up on whatever the stream had not delivered before it ended.
    try {
      const rest = await host.exec(script(READ_FROM, 'glm-read', [attempt.logPath, String(offset)]), {
        maxOutputBytes: 64 << 20,
      });
      splitter = new LineSplitter(offset);
      // A last line without its newline still counts once the writer is gone.
      const text = rest.stdout && !rest.stdout.endsWith('\n') ? `${rest.stdout}\n` : rest.stdout;
      if (await feed(Buffer.from(text))) {
        save(true);
        return 'stopped-by-handler';
      }
    } catch (e) {
      engine.log.warn({ err: (e as Error).message, attempt: attempt.id }, 'could not read the end of the log');
    }
    save(true);
    return 'server-exited';
  }
}
