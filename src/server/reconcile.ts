// After a restart (or before answering status, or before a launch takes GPUs), the ledger's live attempts are checked
// against each host's own record: a server that died while nobody watched is closed with its exit status, which ends
// its GPU leases; one still running is kept. A multi-node attempt whose head is gone has its workers stopped.
import type { Attempt } from '../ledger/attempts.ts';
import { type Engine, hostOf } from './engine.ts';
import { readRemoteState, runIdFor } from './remote-state.ts';
import { stopNodes } from './stop.ts';

export interface Reconciled {
  attempt: Attempt;
  state: 'running' | 'closed' | 'unreachable';
  note?: string;
}

export async function reconcile(
  engine: Engine,
  hostNames?: string[],
  opts: { skipStarting?: boolean } = {},
): Promise<Reconciled[]> {
  const out: Reconciled[] = [];
  for (const a of engine.attempts.allActive()) {
    const nodeHosts = a.nodeHosts.length > 0 ? a.nodeHosts : [a.host];
    if (hostNames && !nodeHosts.some((h) => hostNames.includes(h))) continue;
    // A launch in flight in this process has no record on the host yet: it is not stale.
    if (opts.skipStarting && a.status === 'starting') continue;
    const { host, cfg } = hostOf(engine, a.host);
    try {
      const st = await readRemoteState(host, cfg, runIdFor(a));
      const mine = st.state !== 'none';
      if (st.state === 'alive' || st.state === 'orphans') {
        out.push({
          attempt: a,
          state: 'running',
          note:
            st.state === 'orphans' ? 'the main process is gone but part of its process group still runs' : undefined,
        });
        continue;
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
          out.push({ attempt: engine.attempts.get(a.id)!, state: 'closed' });
          continue;
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
      out.push({ attempt: engine.attempts.get(a.id)!, state: 'closed', note: 'ended while the bot was not watching' });
    } catch (e) {
      out.push({ attempt: a, state: 'unreachable', note: (e as Error).message });
    }
  }
  return out;
}
