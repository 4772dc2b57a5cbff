// Stopping a directly started server's nodes: each node's process group gets TERM, the grace period, KILL, by the
// host's own stop script (src/lifecycle/scripts.ts), all nodes at once. The direct backend's `stop`; the whole stop
// (which attempt, the GPUs let go, the ledger) is src/lifecycle/stop.ts.
import { RemoteError } from '../errors.ts';
import type { Attempt } from '../ledger/attempts.ts';
import type { NodeStop } from './backend.ts';
import { type Engine, hostOf } from './engine.ts';
import { type NodeRef, nodeLabel, nodesOf } from './nodes.ts';
import { STOP, script } from './scripts.ts';

/** Runs the host's stop script for one node. Throws when processes survive SIGKILL or the host cannot tell. */
async function stopNode(engine: Engine, node: NodeRef): Promise<NodeStop> {
  const { host, cfg } = hostOf(engine, node.host);
  const grace = Math.round(engine.loaded.config.timeouts.stop_grace_s * 10);
  const r = await host.exec(script(STOP, 'glm-stop', [cfg.workdir, String(grace), node.runId]), {
    timeoutMs: grace * 100 + 30_000,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  const [tag, a, , , ex] = line.split(' ');
  if (tag === 'GLM_STUCK') {
    throw new RemoteError(`processes of group ${a} on ${node.host} survived SIGKILL`, {
      host: node.host,
      hint: 'they are probably in uninterruptible I/O (D state) on a GPU; check the host with ps and nvidia-smi',
    });
  }
  if (tag === 'GLM_BUSY')
    throw new RemoteError(`another launch or stop holds the lock on ${node.host}`, {
      host: node.host,
      hint: 'try again in a moment',
    });
  if (tag !== 'GLM_STOPPED' && tag !== 'GLM_NOT_RUNNING') {
    throw new RemoteError(`stop on ${node.host} failed (exit ${r.code})`, {
      host: node.host,
      stderrTail: r.stderr.slice(-2000),
    });
  }
  const how = tag === 'GLM_STOPPED' ? (a as 'TERM' | 'KILL') : 'already-gone';
  const exitText = tag === 'GLM_STOPPED' ? ex : a;
  return { node, how, exitCode: exitText && exitText !== '-' ? Number(exitText) : null };
}

/** Stops every node of the attempt that is still running (all at once); the nodes in `skip` are left alone. */
export async function stopNodes(engine: Engine, a: Attempt, skipRanks: number[] = []): Promise<NodeStop[]> {
  const nodes = nodesOf(engine, a).filter((n) => !skipRanks.includes(n.rank) && n.pgid !== null);
  const results = await Promise.allSettled(nodes.map((n) => stopNode(engine, n)));
  const failed = results.flatMap((r, i) =>
    r.status === 'rejected' ? [{ node: nodes[i]!, err: r.reason as Error }] : [],
  );
  if (failed.length > 0) {
    const first = failed[0]!.err;
    const text = failed.map((f) => `${nodeLabel(f.node)}: ${f.err.message}`).join('; ');
    throw first instanceof RemoteError ? new RemoteError(text, first.details) : new Error(text);
  }
  return results.map((r) => (r as PromiseFulfilledResult<NodeStop>).value);
}
