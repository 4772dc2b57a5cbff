// After a restart (or before answering status, or before a launch takes GPUs), the ledger's live attempts are checked
// against their backend's own record (each host's run directory, or the cluster's scheduler): a server that died
// while nobody watched is closed with its exit status (or the scheduler's ending), which ends its GPU leases; one
// still running (or still queued) is kept. A multi-node attempt whose head is gone has its workers stopped.
import type { Attempt } from '../ledger/attempts.ts';
import { backendFor } from './backends.ts';
import { type Engine, hostOf } from './engine.ts';
import { readRemoteState, runIdFor } from './remote-state.ts';
import { stopNodes } from './stop.ts';

export interface Reconciled {
  attempt: Attempt;
  state: 'running' | 'queued' | 'closed' | 'unreachable';
  note?: string;
}

export async function reconcile(
  engine: Engine,
  hostNames?: string[],
  opts: { skipStarting?: boolean } = {},
): Promise<Reconciled[]> {
  const live = engine.attempts.allActive().filter((a) => {
    const nodeHosts = a.nodeHosts.length > 0 ? a.nodeHosts : [a.host];
    if (hostNames && !nodeHosts.some((h) => hostNames.includes(h))) return false;
    // A launch in flight in this process has no record on the host yet: it is not stale.
    return !(opts.skipStarting && a.status === 'starting');
  });
  // Every attempt at once (each host over its own pooled connection): status over 64 hosts costs about what it costs
  // over one, not 64 round trips in a row.
  const results = await Promise.all(
    live.map(async (a): Promise<Reconciled | undefined> => {
      try {
        return (await backendFor(engine, a.host).reconcile(engine, a, opts)) ?? undefined;
      } catch (e) {
        return { attempt: a, state: 'unreachable', note: (e as Error).message };
      }
    }),
  );
  return results.filter((r): r is Reconciled => r !== undefined);
}

/** The direct backend's check: the host's run directory of the attempt (and of each of its nodes). */
export async function reconcileDirect(engine: Engine, a: Attempt): Promise<Reconciled> {
  const nodeHosts = a.nodeHosts.length > 0 ? a.nodeHosts : [a.host];
  const { host, cfg } = hostOf(engine, a.host);
  const st = await readRemoteState(host, cfg, runIdFor(a.id));
  const mine = st.state !== 'none';
  if (st.state === 'alive' || st.state === 'orphans') {
    return {
      attempt: a,
      state: 'running',
      note: st.state === 'orphans' ? 'the main process is gone but part of its process group still runs' : undefined,
    };
  }
  if (a.status === 'starting' && !a.pgid) {
    // The launch never reported back; if the host has no record of it, it did not start.
    if (!mine) {
      engine.attempts.finish(a.id, {
        status: 'failed',
        outcome: 'launch_failed',
        detail: 'the host has no record of this launch',
        at: engine.clock.now(),
      });
      return { attempt: engine.attempts.get(a.id)!, state: 'closed' };
    }
  }
  if (nodeHosts.length > 1) await stopNodes(engine, a, [0]);
  const exitCode = mine && st.state === 'dead' ? st.exitCode : null;
  const crashed = exitCode !== null && exitCode !== 0;
  engine.attempts.finish(a.id, {
    status: crashed ? 'crashed' : exitCode === 0 ? 'exited' : 'lost',
    outcome: crashed ? 'crashed' : exitCode === 0 ? 'exited' : 'lost',
    detail: 'ended while the bot was not watching',
    exitCode,
    at: engine.clock.now(),
  });
  return { attempt: engine.attempts.get(a.id)!, state: 'closed', note: 'ended while the bot was not watching' };
}
