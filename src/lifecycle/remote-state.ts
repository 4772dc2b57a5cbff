// Reading the host's own record of one run (its run directory: the process group, its start time, the exit status).
import type { HostConfig } from '../config/schema.ts';
import type { RemoteHost } from '../hosts/types.ts';
import { STATUS, script } from './scripts.ts';

export type RemoteState =
  | { state: 'none' }
  | {
      state: 'alive' | 'orphans' | 'dead';
      pgid: number;
      start: string;
      runId: string;
      /** The server's exit status once the wrapper recorded it. */
      exitCode: number | null;
      uptimeS: number | null;
      /** The run directory on the host (absolute), where its log (out.log) is. */
      runDir: string;
    };

export async function readRemoteState(host: RemoteHost, cfg: HostConfig, runId: string): Promise<RemoteState> {
  const r = await host.exec(script(STATUS, 'glm-status', [cfg.workdir, runId]));
  const line = r.stdout.trim().split('\n').pop() ?? '';
  const [tag, pg, st, run, ex, up, ...dir] = line.split(' ');
  if (tag === 'GLM_NONE' || !pg || !st || !run) return { state: 'none' };
  const state = tag === 'GLM_ALIVE' ? 'alive' : tag === 'GLM_ORPHANS' ? 'orphans' : 'dead';
  return {
    state,
    pgid: Number(pg),
    start: st,
    runId: run,
    exitCode: ex && ex !== '-' ? Number(ex) : null,
    uptimeS: up && up !== '-' ? Number(up) : null,
    runDir: dir.join(' '),
  };
}

/**
 * Run ids name the attempt and its ledger (and the node of a multi-node attempt), so the host's record can be matched
 * to the ledger: two bots with their own ledgers sharing a work directory, or two nodes on one machine, still get
 * their own run directories.
 */
export function runIdFor(a: { runId: string }, rank = 0): string {
  return rank === 0 ? a.runId : `${a.runId}-node${rank}`;
}
