// Follows one attempt's log on its host: one long-lived stream, resumed from the last byte handled when the
// connection drops, ending when the server is gone (then a final read from the same offset catches the last
// lines, so none is lost and none is handled twice). Truncation and rotation reset the offset to the new file's
// start. Memory stays bounded: lines are handled one at a time and cut at LineSplitter's limit.
import type { Attempt } from '../ledger/attempts.ts';
import { LineSplitter, type LogLine } from '../logs/lines.ts';
import { backendFor } from './backends.ts';
import { type Engine, hostOf } from './engine.ts';
import { headNode, type NodeRef, savedOffset, saveOffset } from './nodes.ts';
import { currentRunStart, runStartOf } from './requeue.ts';
import { READ_FROM, READ_RANGE, script } from './scripts.ts';

export interface WatchHandlers {
  /** Return 'stop' to end the watch (e.g. the launch saw what it waited for). */
  onLine(line: LogLine): undefined | 'stop' | Promise<undefined | 'stop'>;
}

// GNU tail's notices when the file under -F shrinks or changes identity.
const TAIL_NOTICE =
  /^tail: .*(file truncated|has been replaced|has appeared|following new file|has become inaccessible)/;

export type WatchEnd = 'server-exited' | 'stopped-by-handler' | 'aborted' | 'attempt-closed';

/** How much of the log before a resume point is read again as context: a traceback's start, the last milestones. */
export const CONTEXT_BYTES = 256 * 1024;

type ContextReader = (lines: readonly LogLine[]) => void;
const contextReaders = new WeakMap<Engine, Map<string, ContextReader>>();
const readerKey = (node: NodeRef) => `${node.attemptId}/${node.rank}`;

/**
 * The reader (a diagnoser) that the next watch of this node primes with the log before its saved offset, when it
 * resumes there after a bot restart: it then knows the milestones and a traceback that began before the offset. The
 * lines go to the reader directly, past the watch's own line handler, so they never become events or alerts again.
 * Registered by whoever makes the node's diagnoser (node-watch.ts), taken by the node's next watch.
 */
export function primeOnResume(engine: Engine, node: NodeRef, reader: ContextReader): void {
  let m = contextReaders.get(engine);
  if (!m) {
    m = new Map();
    contextReaders.set(engine, m);
  }
  m.set(readerKey(node), reader);
}

function takeReader(engine: Engine, node: NodeRef): ContextReader | undefined {
  const m = contextReaders.get(engine);
  const r = m?.get(readerKey(node));
  m?.delete(readerKey(node));
  return r;
}

/**
 * The complete lines of the CONTEXT_BYTES before `offset`, numbered from 1 (a line cut by the window's start is left
 * out). Bounded by the window; a log that cannot be read gives no context rather than no watch.
 */
async function contextBefore(engine: Engine, node: NodeRef, offset: number, floor: number): Promise<LogLine[]> {
  if (offset <= floor || !node.logPath) return [];
  const start = Math.max(floor, offset - CONTEXT_BYTES);
  const { host } = hostOf(engine, node.host);
  try {
    const r = await host.exec(
      script(READ_RANGE, 'glm-read-range', [node.logPath, String(start), String(offset - start)]),
      {
        maxOutputBytes: CONTEXT_BYTES + 1024,
      },
    );
    let buf = Buffer.from(r.stdout);
    if (start > floor) {
      const nl = buf.indexOf(0x0a);
      buf = nl < 0 ? Buffer.alloc(0) : buf.subarray(nl + 1);
    }
    return new LineSplitter(offset - buf.length).push(buf);
  } catch (e) {
    engine.log.warn(
      { err: (e as Error).message, attempt: node.attemptId },
      'could not read the log before the resume point',
    );
    return [];
  }
}

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
  // A job its scheduler requeued appends its next run to the same log: that run is read from its own start on.
  // Truncated by that rerun instead (its open mode), the whole file is the current run.
  const recorded = runStartOf(engine, node.attemptId, node.rank);
  const runStart =
    recorded > 0
      ? await currentRunStart(engine, { ...node, logPath: attempt.logPath }).catch(() => recorded)
      : recorded;
  // Truncated, the saved offset is this run's once a watch of it saved one (the requeue reset it): a later watch (a bot
  // restart, the monitor) resumes there, not from 0. One at the old run's end is that run's, saved after the reset
  // by a follower of the old run still finishing.
  const truncated = runStart < recorded;
  // A display-only follower starts where it was asked to (logs --follow).
  const saved = persist ? savedOffset(engine, node) : node.logOffset;
  let offset = truncated ? (saved === recorded ? 0 : saved) : Math.max(saved, runStart);
  let lastSaved = offset;
  // Lines are numbered across reconnects (a reader keys its windows on line numbers), after any context lines.
  let lineNo = 0;
  const reader = takeReader(engine, node);
  if (reader && offset > runStart) {
    const context = await contextBefore(engine, node, offset, runStart);
    if (context.length > 0) reader(context);
    lineNo = context.length;
  }
  let splitter = new LineSplitter(offset, undefined, lineNo);

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
        splitter = new LineSplitter(0, undefined, lineNo);
        offset = 0;
        save(true);
        continue;
      }
      offset = line.endOffset;
      lineNo = line.lineNo;
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
    splitter = new LineSplitter(offset, undefined, lineNo);
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
      splitter = new LineSplitter(offset, undefined, lineNo);
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
