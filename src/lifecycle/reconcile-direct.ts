// The direct backend's reconcile (what src/lifecycle/reconcile.ts asks of a host the bot starts servers on itself):
// the host's run directory of the attempt, and of each of its nodes, against the ledger.
import type { Attempt } from '../ledger/attempts.ts';
import type { Diagnosis } from '../logs/diagnosis.ts';
import type { Ending, Reconciled } from './backend.ts';
import { type Engine, hostOf, publish } from './engine.ts';
import { followerState } from './follower.ts';
import { judgeEnd, recordEnding } from './launch/ending.ts';
import { readAndJudge } from './log-read.ts';
import { nodeLabel, nodesOf, peerLoss } from './nodes.ts';
import { readRemoteState, runIdFor } from './remote-state.ts';
import { currentRunStart } from './requeue.ts';
import { stopNodes } from './stop-nodes.ts';

/**
 * A launch in flight (in any process) is `starting` until its host answers; one whose host has no record of it is
 * closed only when it is older than this (the launcher's own exec gives up after 30 s, plus the environment capture).
 */
export const STARTING_GRACE_MS = 180_000;

/** The direct backend's check: the host's run directory of the attempt (and of each of its nodes). */
export async function reconcileDirect(engine: Engine, live: Attempt): Promise<Reconciled> {
  let a = live;
  const nodeHosts = a.nodeHosts.length > 0 ? a.nodeHosts : [a.host];
  const { host, cfg } = hostOf(engine, a.host);
  const st = await readRemoteState(host, cfg, runIdFor(a));
  const mine = st.state !== 'none';
  if (mine && a.pgid === null) {
    // The host started it, but the launcher never recorded where: take the host's own record of the run.
    engine.attempts.update(a.id, {
      status: a.status === 'starting' ? 'loading' : a.status,
      pgid: st.pgid,
      pgidStart: st.start,
      runDir: st.runDir,
      logPath: `${st.runDir}/out.log`,
    });
    engine.attempts.event(a.id, engine.clock.now(), 'adopted', { pgid: st.pgid, runDir: st.runDir });
    a = engine.attempts.get(a.id)!;
  }
  if (st.state === 'alive' || st.state === 'orphans') {
    // Only an orphan: a follower that is still there checks readiness itself (with the first real request).
    if (a.status === 'loading' && followerState(engine, a.id) === 'gone') a = await readyFromLog(engine, a);
    return {
      attempt: a,
      state: 'running',
      note: st.state === 'orphans' ? 'the main process is gone but part of its process group still runs' : undefined,
    };
  }
  if (!mine && a.status === 'starting' && !a.pgid) {
    // The launch never reported back and the host has no record of it: still in flight, or it never started.
    if (engine.clock.now() - a.startedAt < STARTING_GRACE_MS) return { attempt: a, state: 'running', note: 'starting' };
    engine.attempts.finish(a.id, {
      status: 'failed',
      outcome: 'launch_failed',
      detail: 'the host has no record of this launch',
      at: engine.clock.now(),
    });
    return { attempt: engine.attempts.get(a.id)!, state: 'closed' };
  }
  if (nodeHosts.length > 1) await stopNodes(engine, a, [0]);
  const exitCode = mine && st.state === 'dead' ? st.exitCode : null;
  const closed = await closeUnwatched(engine, a, exitCode);
  return { attempt: closed, state: 'closed', note: 'ended while the bot was not watching' };
}

/**
 * A server that ended unwatched: its log (its current run's, in a log a requeued job appends to) names the crash;
 * closed once, and told once to whoever shows attempts. `ending` is its backend's own (a scheduler's: Slurm's state),
 * decided as a followed attempt's is (outcome.ts recordExit): a crash the log names wins, unless the ending outranks
 * the log (a node failure) or the log names none.
 */
export async function closeUnwatched(
  engine: Pick<Engine, 'attempts' | 'clock' | 'log' | 'notifier' | 'diagnoser' | 'loaded' | 'pool'>,
  a: Attempt,
  exitCode: number | null,
  ending?: Ending,
): Promise<Attempt> {
  let d: Diagnosis | null = null;
  if (a.logPath) {
    try {
      const from = await currentRunStart(engine, { attemptId: a.id, rank: 0, host: a.host, logPath: a.logPath });
      d = (await readAndJudge(engine, a.host, a.logPath, engine.diagnoser, from)).diagnosis;
    } catch (e) {
      engine.log.warn({ err: (e as Error).message, attempt: a.id }, 'could not read the log of an ended attempt');
    }
  }
  // A multi-node server whose head only lost a peer: a worker whose own log names a cause is the crash, as the watch
  // of a followed attempt decides it (node-watch.ts). A scheduler's ending names its failed node itself, except a
  // lost node (srun named a worker first and the head's log has no crash of its own): that ending says the worker left
  // no line in its log, which only a follower would have read. Read now, a crash there is the attempt's.
  if (a.nodeHosts.length > 1) {
    const headLostPeer = d !== null && d.category !== 'none' && peerLoss(d);
    const headQuiet = d === null || d.category === 'none' || peerLoss(d);
    if ((!ending && headLostPeer) || (ending?.outcome === 'node_lost' && headQuiet && !d?.stopped)) {
      const w = await workerCause(engine, a);
      if (w) {
        d = w;
        ending = undefined;
      }
    }
  }
  // The same rule as a followed attempt's end (outcome.ts recordExit): judgeEnd.
  const j = judgeEnd(d, exitCode, ending, 'lost');
  if (j.by === 'ending') {
    recordEnding(
      engine,
      a,
      { ...j.ending, detail: `${j.ending.detail}; ended while the bot was not watching` },
      () => {},
      d ?? undefined,
    );
    return engine.attempts.get(a.id)!;
  }
  d = j.diagnosis;
  const classified = d !== null && d.category !== 'none';
  const outcome = j.outcome;
  const closed = engine.attempts.finish(a.id, {
    status: j.status,
    outcome,
    // (a stop from outside the bot names no crash, but says so)
    detail:
      classified || d?.stopped
        ? `ended while the bot was not watching: ${d!.summary}`
        : 'ended while the bot was not watching',
    exitCode,
    at: engine.clock.now(),
  });
  if (d) engine.attempts.update(a.id, { classification: d });
  const now = engine.attempts.get(a.id)!;
  const diagnosis: Diagnosis = d ?? {
    category: 'none',
    phase: 'unknown',
    summary: 'ended while the bot was not watching; its log names no crash',
    evidence: [],
    rank: null,
    dedupKey: 'none',
    confidence: 0,
  };
  if (closed) {
    publish(engine, () => {}, {
      kind: 'failed',
      attempt: now,
      outcome,
      diagnosis,
      exitCode,
    });
  }
  return now;
}

/**
 * A loading attempt whose follower died (its launcher): when its log has the ready line and /health answers, it is
 * ready, since the time its log says (not now).
 */
async function readyFromLog(engine: Engine, a: Attempt): Promise<Attempt> {
  if (!a.logPath) return a;
  const v = await readAndJudge(engine, a.host, a.logPath, undefined);
  if (v.readyAfterMs === null) return a;
  const { host } = hostOf(engine, a.host);
  const h = await host.http(a.port, { method: 'GET', path: '/health', timeoutMs: 5000 }).catch(() => null);
  if (h?.status !== 200) return a;
  const readyAt = Math.min(a.startedAt + v.readyAfterMs, engine.clock.now());
  engine.attempts.update(a.id, { status: 'ready', readyAt, lastMilestone: 'ready' });
  engine.attempts.event(a.id, engine.clock.now(), 'ready', { from: 'log', seconds: v.readyAfterMs / 1000 });
  const ready = engine.attempts.get(a.id)!;
  publish(engine, () => {}, { kind: 'ready', attempt: ready, seconds: v.readyAfterMs / 1000 });
  return ready;
}

/**
 * The first worker (by rank) whose log, read from its current run, names a crash of its own (no lost peer, none it
 * survived), named by its node; null when every worker only lost a peer, or names nothing.
 */
async function workerCause(
  engine: Pick<Engine, 'attempts' | 'log' | 'diagnoser' | 'loaded' | 'pool'>,
  a: Attempt,
): Promise<Diagnosis | null> {
  for (const node of nodesOf(engine, a)) {
    if (node.rank === 0 || !node.logPath) continue;
    try {
      const at = { attemptId: a.id, rank: node.rank, host: node.host, logPath: node.logPath };
      const from = await currentRunStart(engine, at);
      const w = (await readAndJudge(engine, node.host, node.logPath, engine.diagnoser, from)).diagnosis;
      if (w && w.category !== 'none' && !w.survivable && !peerLoss(w)) {
        return { ...w, summary: `${nodeLabel(node)}: ${w.summary}` };
      }
    } catch (e) {
      engine.log.warn({ err: (e as Error).message, attempt: a.id, node: node.rank }, 'could not read a worker log');
    }
  }
  return null;
}
