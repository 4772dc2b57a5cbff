// After a restart (or before answering status), the ledger's live attempts are checked against each host's own
// record: a server that died while nobody watched is closed with its exit status; one still running is kept.
import type { Attempt } from '../ledger/attempts.ts';
import { type Engine, hostOf } from './engine.ts';
import { readRemoteState, runIdFor } from './remote-state.ts';

export interface Reconciled {
  attempt: Attempt;
  state: 'running' | 'closed' | 'unreachable';
  note?: string;
}

export async function reconcile(engine: Engine, hostNames?: string[]): Promise<Reconciled[]> {
  const out: Reconciled[] = [];
  for (const a of engine.attempts.allActive()) {
    if (hostNames && !hostNames.includes(a.host)) continue;
    const { host, cfg } = hostOf(engine, a.host);
    try {
      const st = await readRemoteState(host, cfg);
      const mine = st.state !== 'none' && st.runId === runIdFor(a.id);
      if (mine && (st.state === 'alive' || st.state === 'orphans')) {
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
