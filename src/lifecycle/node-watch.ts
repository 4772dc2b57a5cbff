// Multi-node attempts: every worker's log is followed beside the head's. A crash or exit on any node is the attempt's
// crash, named by its node; the other nodes are then stopped (a head whose worker died waits on NCCL forever).
import type { Attempt } from '../ledger/attempts.ts';
import {
  crashedBeforeExit,
  type Diagnoser,
  type DiagnoserFactory,
  type Diagnosis,
  showsCrash,
  stoppedFromOutside,
  survived,
} from '../logs/diagnosis.ts';
import { backendFor } from './backends.ts';
import { confirmCrash, createEarlyAlert, SETTLE_MS, type ServingCheck, survivable } from './early-alert.ts';
import { type Engine, hostOf, publish } from './engine.ts';
import type { LaunchEvent } from './launch/types.ts';
import { headNode, type NodeRef, nodeLabel, nodesOf, peerLoss } from './nodes.ts';
import { readRemoteState } from './remote-state.ts';
import { stillServing } from './serving-check.ts';
import { stopRequested } from './stop.ts';
import { primeOnResume, watchNode } from './watch.ts';

export interface NodeFailure {
  node: NodeRef;
  diagnosis: Diagnosis;
}

/** How long node 0's watch reads on after a worker lost its peer (watchNodes). */
const PEER_GRACE_MS = 3000;

/**
 * What following an attempt needs for all its nodes, shared by launch's follow and the long-lived monitor: node 0's
 * diagnoser (naming the node when there are several), the early crash alert, and a watch on every worker that aborts
 * node 0's watch (`abort`) when a worker fails. One node: the plain diagnoser and early alert, no workers.
 */
export function watchNodes(engine: Engine, attempt: Attempt, diagnoser: DiagnoserFactory, abort: AbortController) {
  const multi = attempt.nodeHosts.length > 1;
  // An attempt the ledger says is ready was seen ready before: a follow resumed at its saved offset (after a bot
  // restart, or the monitor taking over from the launch) may start past the ready line and its context window
  // (watch.ts), and reads on as a serving server's log.
  const opts = { serving: attempt.status === 'ready' };
  // A crash a ready server is seen to serve past becomes survivable (early-alert.ts): told at the exit if it ends so.
  const diag = survivable(multi ? namedDiagnoser(diagnoser(opts), headNode(attempt)) : diagnoser(opts));
  primeOnResume(engine, headNode(attempt), primer(diag));
  // Multi-node: the head's first crash line may only blame a lost peer, so the alert waits for the verdict over all
  // nodes (about a second later, in failNodes or recordExit) instead of going out early.
  const early = multi
    ? { check() {}, cancel() {} }
    : createEarlyAlert(engine, attempt, diag, servingCheck(engine, headNode(attempt)));
  let failure: NodeFailure | undefined;
  let grace: NodeJS.Timeout | undefined;
  const workers = watchWorkers(
    engine,
    attempt,
    () => diagnoser(opts),
    (f) => {
      failure = f;
      // A worker that lost its peer may have lost it because the head is going: node 0's watch reads on a moment
      // (and ends by itself if its server exits, its log read to the end) so that headExplains reads the head's
      // stop or crash, which a log tail a little behind the worker's would not show yet.
      if (peerLoss(f.diagnosis)) grace = setTimeout(() => abort.abort(), PEER_GRACE_MS);
      else abort.abort();
    },
  );
  return {
    diag,
    early,
    /** Whether a worker's failure (not a caller) aborted node 0's watch. */
    workerFailed: () => failure !== undefined,
    /**
     * Once node 0's watch has ended: stops the worker watches and returns the node that failed, if any. `headGone`
     * (node 0's server exited) asks the hosts whether a worker went first: then it, not the head, is the cause.
     */
    async settle(headGone: boolean): Promise<NodeFailure | undefined> {
      clearTimeout(grace);
      early.cancel();
      if (multi && headGone && backendFor(engine, attempt.host).kind !== 'direct') {
        // A scheduler ends every node of a job at once: let each worker's watch read its log to the end, then only a
        // worker whose log shows a crash is the cause (the others exited because the job did).
        await workers.drain(10_000);
        if (failure?.diagnosis.category === 'node_lost') failure = undefined;
      }
      if (multi && headGone && !failure) failure = await workers.deadNode();
      await workers.stop();
      return failure;
    },
    /**
     * How the head's own log explains a worker's failure (headExplains). A head that crashed of its own cause is
     * stopped on every node first: its server may still hold its GPUs while its workers are gone (a head stopped
     * from outside is going by itself).
     */
    async explain(head: Diagnosis, f: NodeFailure): Promise<'stopped' | 'crashed' | null> {
      const explained = headExplains(head, f);
      if (explained === 'crashed') {
        await backendFor(engine, attempt.host)
          .stop(engine, attempt)
          .catch((e: Error) => engine.log.error({ err: e.message, attempt: attempt.id }, 'could not stop every node'));
      }
      return explained;
    },
  };
}

/**
 * stillServing for one node: its process as its host records the run (alive, no exit status: a zombie or an exited
 * leader reads as dead, scripts.ts `alive`), or its job as the scheduler does.
 */
function servingCheck(engine: Engine, node: NodeRef): ServingCheck {
  const backend = backendFor(engine, node.host);
  const processUp = async (): Promise<string | null> => {
    if (backend.kind !== 'direct') return (await backend.nodeGone(engine, node)) ? null : 'its job runs';
    const { host, cfg } = hostOf(engine, node.host);
    const st = await readRemoteState(host, cfg, node.runId);
    return st.state === 'alive' && st.exitCode === null ? 'its process is alive' : null;
  };
  return (a) => stillServing(engine, a, processUp);
}

/** The log before a resume point, read into a diagnoser as context (watch.ts reads it; no line handler sees it). */
function primer(diag: Diagnoser) {
  return (lines: readonly { text: string; lineNo: number }[]) => {
    for (const l of lines) diag.push(l.text, l.lineNo);
  };
}

/** A diagnoser whose verdict names the node it read (only for multi-node attempts). */
function namedDiagnoser(d: Diagnoser, node: Pick<NodeRef, 'rank' | 'host'>): Diagnoser {
  return {
    ...d,
    result: () => {
      const r = d.result();
      return r.category === 'none' ? r : { ...r, summary: `${nodeLabel(node)}: ${r.summary}` };
    },
    stalled: d.stalled
      ? (now) => {
          const s = d.stalled!(now);
          return s ? { ...s, summary: `${nodeLabel(node)}: ${s.summary}` } : null;
        }
      : undefined,
  };
}

/**
 * Follows every worker node (rank >= 1) of the attempt. `onFailure` is called once, for the first node whose log shows
 * a crash (after the settle time, so its traceback is complete) or whose server exits. No-op for a single node. A
 * failure record alone in a worker's log is no crash while it serves on (crashedBeforeExit): failNodes weighs it
 * against that node's exit code if the node exits.
 */
function watchWorkers(
  engine: Engine,
  attempt: Attempt,
  diagnoser: DiagnoserFactory,
  onFailure: (f: NodeFailure) => void,
): { stop(): Promise<void>; drain(ms: number): Promise<void>; deadNode(): Promise<NodeFailure | undefined> } {
  const workers = nodesOf(engine, attempt).filter((n) => n.rank > 0);
  const scheduled = backendFor(engine, attempt.host).kind !== 'direct';
  const diags = new Map<number, Diagnoser>();
  const abort = new AbortController();
  let told = false;
  const tell = (f: NodeFailure) => {
    if (told || abort.signal.aborted) return;
    told = true;
    onFailure(f);
  };
  const running = workers.map((node) => {
    const diag = survivable(namedDiagnoser(diagnoser(), node));
    diags.set(node.rank, diag);
    primeOnResume(engine, node, primer(diag));
    let settle: NodeJS.Timeout | undefined;
    return watchNode(
      engine,
      node,
      {
        onLine: (l) => {
          diag.push(l.text, l.lineNo);
          // A ready server's worker is asked first, as the head's early alert does (confirmCrash): one that serves on
          // survived it, and a later, different crash is asked about again.
          if (!settle && crashedBeforeExit(diag))
            settle = setTimeout(() => {
              void confirmCrash(engine, attempt, node.rank, diag, servingCheck(engine, node))
                .catch(() => true)
                .then((crash) => {
                  if (crash) tell({ node, diagnosis: diag.result() });
                  else settle = undefined;
                });
            }, SETTLE_MS);
          return undefined;
        },
      },
      abort.signal,
    )
      .then((end) => {
        if (end !== 'server-exited' && end !== 'attempt-closed') return;
        clearTimeout(settle);
        // A scheduler's job ends on all its nodes at once, and a worker's follow ends with the job, not with its own
        // server: only a worker whose log shows a crash is a cause. Node 0's watch ends with the job too, and the
        // job's own ending decides (whichever watch noticed first).
        if (scheduled && !crashedBeforeExit(diag)) return;
        tell({ node, diagnosis: exitDiagnosis(diag.result(), node) });
      })
      .catch((e: Error) =>
        engine.log.error({ err: e.message, attempt: attempt.id, node: node.rank }, 'node watch failed'),
      )
      .finally(() => clearTimeout(settle));
  });
  return {
    async stop() {
      abort.abort();
      await Promise.all(running);
    },
    /** Waits (at most `ms`) for the worker watches to end by themselves, their logs read to the end. */
    async drain(ms: number) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(running), new Promise((r) => (timer = setTimeout(r, ms)))]);
      clearTimeout(timer);
    },
    /**
     * The first worker whose server is gone, asked of the hosts now. When the head fails, its own log often blames
     * a peer (gloo's "Connection closed by peer"): a worker that is already gone is the cause, not the head.
     */
    async deadNode() {
      const backend = backendFor(engine, attempt.host);
      let first: Promise<number | undefined> | undefined;
      const failedFirst = () =>
        (first ??= backend.state(engine, attempt).then(
          (s) => s.failedFirst,
          () => undefined,
        ));
      for (const node of workers) {
        const diag = diags.get(node.rank);
        // A scheduler's job ends on all its nodes at once: there only a worker whose own log shows a crash is the
        // cause (its peers were ended with it). A failure record alone is that worker's crash when the scheduler saw
        // its task fail first (it exited non-zero or was killed before srun ended the others): named by its record,
        // not as a node lost with no line in its log (failNodes weighs it with the exit code again).
        if (backend.kind !== 'direct') {
          if (diag && crashedBeforeExit(diag)) return { node, diagnosis: diag.result() };
          if (diag?.crashed() && (await failedFirst()) === node.rank) return { node, diagnosis: diag.result() };
          continue;
        }
        try {
          if (!(await backend.nodeGone(engine, node))) continue;
        } catch {
          continue; // unreachable is not proof of death
        }
        return { node, diagnosis: exitDiagnosis(diag ? diag.result() : noDiagnosis(), node) };
      }
      return undefined;
    },
  };
}

function noDiagnosis(): Diagnosis {
  return { category: 'none', phase: 'unknown', summary: '', evidence: [], rank: null, dedupKey: 'none', confidence: 0 };
}

/** A node that exited without a classified crash still ends the attempt: say so. */
function exitDiagnosis(d: Diagnosis, node: NodeRef): Diagnosis {
  if (d.category !== 'none') return d;
  return {
    ...d,
    category: 'node_lost',
    summary: `${nodeLabel(node)}: its server exited; the other nodes cannot go on without it`,
    dedupKey: `${d.dedupKey}/node_lost`,
  };
}

/**
 * How the head's own log explains a worker's failure that is a lost peer (peerLoss): `stopped` when the head was
 * stopped from outside the bot (its stop signal, no crash before it), `crashed` when the head crashed of a cause of
 * its own; then the head's end is told (recordExit), not a crash on the worker. Null: the worker's failure is the
 * cause.
 */
function headExplains(head: Diagnosis, failure: NodeFailure): 'stopped' | 'crashed' | null {
  if (!peerLoss(failure.diagnosis)) return null;
  if (stoppedFromOutside(head)) return 'stopped';
  return head.category !== 'none' && !head.survivable && !peerLoss(head) ? 'crashed' : null;
}

/** Ends the attempt for a failed node: every node stopped, the crash recorded and told, naming the node. */
export async function failNodes(
  engine: Engine,
  attempt: Attempt,
  failure: NodeFailure,
  emit: (e: LaunchEvent) => void,
): Promise<{ attempt: Attempt; diagnosis: Diagnosis }> {
  // A node going down because someone stopped the attempt is no crash: the stop records the outcome.
  if (stopRequested(engine, attempt.id))
    return { attempt: engine.attempts.get(attempt.id)!, diagnosis: failure.diagnosis };
  const backend = backendFor(engine, attempt.host);
  try {
    await backend.stop(engine, attempt);
  } catch (e) {
    engine.log.error({ err: (e as Error).message, attempt: attempt.id }, 'could not stop every node');
  }
  let exitCode: number | null = null;
  try {
    if (backend.kind === 'direct') {
      const { host, cfg } = hostOf(engine, failure.node.host);
      const st = await readRemoteState(host, cfg, failure.node.runId);
      if (st.state !== 'none') exitCode = st.exitCode;
    } else {
      exitCode = (await backend.state(engine, attempt)).exitCode;
    }
  } catch {
    // unreachable: the log's verdict stands
  }
  // A node that exited after a failure record alone: the record is its crash only if the exit says so (showsCrash);
  // else the node is simply gone, and the record stays as evidence.
  const d = showsCrash(failure.diagnosis, exitCode)
    ? failure.diagnosis
    : exitDiagnosis(survived(failure.diagnosis), failure.node);
  const now = engine.clock.now();
  const closed = engine.attempts.finish(attempt.id, {
    status: 'crashed',
    outcome: d.category,
    detail: d.summary,
    exitCode,
    at: now,
  });
  engine.attempts.update(attempt.id, { classification: d });
  engine.attempts.event(attempt.id, now, 'node_failed', { rank: failure.node.rank, host: failure.node.host });
  const a = engine.attempts.get(attempt.id)!;
  if (closed) publish(engine, emit, { kind: 'failed', attempt: a, outcome: d.category, diagnosis: d, exitCode });
  return { attempt: a, diagnosis: d };
}
