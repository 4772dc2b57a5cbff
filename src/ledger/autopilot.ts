// Autopilot runs and their trials in the ledger: enough to resume a run after a restart (its parameters, where it
// is, the trials done) and to report it. The GPUs a run holds between trials are rows of gpu_holds.
// The run's parameters (P), where it is (S) and a trial's knobs (K) are kept as JSON: their shapes are the
// autopilot's (src/autopilot/store.ts), so this table is generic over them.
import type { Db } from './db.ts';

export type RunStatus = 'running' | 'interrupted' | 'done' | 'cancelled' | 'failed';

export interface AutopilotRun<P = unknown, S = unknown> {
  id: number;
  host: string;
  profile: string;
  actor: string;
  origin: string;
  status: RunStatus;
  phase: 'find' | 'tune' | 'report';
  params: P;
  state: S;
  groupKey: string;
  gpus: number[];
  cancelRequested: boolean;
  heartbeatAt: number;
  startedAt: number;
  deadlineAt: number;
  endedAt: number | null;
  result: unknown;
}

export interface Trial<K = unknown> {
  runId: number;
  n: number;
  phase: 'find' | 'bisect' | 'tune';
  attemptId: number | null;
  profile: string;
  /** What this trial changed, as `field=value, ...` against the previous configuration or the working one. */
  changes: string;
  knobs: K | null;
  /** works | crashed | smoke_failed | not_ready | skipped_known | measured | bench_failed */
  outcome: string;
  category: string | null;
  throughput: number | null;
  ttftP99: number | null;
  itlP50: number | null;
  meetsSlo: boolean | null;
  note: string | null;
  at: number;
}

type Row = Record<string, unknown>;

const runOf = <P, S>(r: Row): AutopilotRun<P, S> => ({
  id: r.id as number,
  host: r.host as string,
  profile: r.profile as string,
  actor: r.actor as string,
  origin: r.origin as string,
  status: r.status as RunStatus,
  phase: r.phase as AutopilotRun['phase'],
  params: JSON.parse(r.params_json as string),
  state: JSON.parse(r.state_json as string),
  groupKey: r.group_key as string,
  gpus: (r.gpus as string) ? (r.gpus as string).split(',').map(Number) : [],
  cancelRequested: r.cancel_requested === 1,
  heartbeatAt: r.heartbeat_at as number,
  startedAt: r.started_at as number,
  deadlineAt: r.deadline_at as number,
  endedAt: (r.ended_at as number) ?? null,
  result: r.result_json ? JSON.parse(r.result_json as string) : null,
});

const trialOf = <K>(r: Row): Trial<K> => ({
  runId: r.run_id as number,
  n: r.n as number,
  phase: r.phase as Trial['phase'],
  attemptId: (r.attempt_id as number) ?? null,
  profile: r.profile as string,
  changes: r.changes as string,
  knobs: r.knobs_json ? JSON.parse(r.knobs_json as string) : null,
  outcome: r.outcome as string,
  category: (r.category as string) ?? null,
  throughput: (r.throughput as number) ?? null,
  ttftP99: (r.ttft_p99 as number) ?? null,
  itlP50: (r.itl_p50 as number) ?? null,
  meetsSlo: r.meets_slo === null || r.meets_slo === undefined ? null : r.meets_slo === 1,
  note: (r.note as string) ?? null,
  at: r.at as number,
});

export function autopilotTable<P, S, K>(db: Db) {
  return {
    /** Opens a run and holds its GPUs, or refuses when another run holds one of them (one transaction). */
    open(
      r: Omit<AutopilotRun<P, S>, 'id' | 'status' | 'cancelRequested' | 'endedAt' | 'result' | 'heartbeatAt'>,
    ): AutopilotRun<P, S> {
      return db
        .transaction(() => {
          const info = db
            .prepare(
              `INSERT INTO autopilot_runs (host, profile, actor, origin, status, phase, params_json, state_json, group_key,
                 gpus, heartbeat_at, started_at, deadline_at) VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)`,
            )
            .run(
              r.host,
              r.profile,
              r.actor,
              r.origin,
              r.phase,
              JSON.stringify(r.params),
              JSON.stringify(r.state),
              r.groupKey,
              r.gpus.join(','),
              r.startedAt,
              r.startedAt,
              r.deadlineAt,
            );
          const id = Number(info.lastInsertRowid);
          const hold = db.prepare('INSERT INTO gpu_holds (host, gpu, group_key, holder) VALUES (?, ?, ?, ?)');
          for (const g of r.gpus) hold.run(r.host, g, r.groupKey, `autopilot run #${id} (${r.profile}, ${r.actor})`);
          return runOf<P, S>(db.prepare('SELECT * FROM autopilot_runs WHERE id = ?').get(id) as Row);
        })
        .immediate();
    },
    get(id: number): AutopilotRun<P, S> | undefined {
      const r = db.prepare('SELECT * FROM autopilot_runs WHERE id = ?').get(id) as Row | undefined;
      return r ? runOf<P, S>(r) : undefined;
    },
    /** Runs not ended (running, or interrupted by a bot that stopped), oldest first. */
    unfinished(host?: string): AutopilotRun<P, S>[] {
      const rows = db
        .prepare(
          `SELECT * FROM autopilot_runs WHERE status IN ('running', 'interrupted') ${host ? 'AND host = ?' : ''} ORDER BY id`,
        )
        .all(...(host ? [host] : [])) as Row[];
      return rows.map(runOf<P, S>);
    },
    list(limit = 20): AutopilotRun<P, S>[] {
      return (db.prepare('SELECT * FROM autopilot_runs ORDER BY id DESC LIMIT ?').all(limit) as Row[]).map(runOf<P, S>);
    },
    update(
      id: number,
      patch: Partial<Pick<AutopilotRun<P, S>, 'status' | 'phase' | 'state' | 'heartbeatAt' | 'endedAt' | 'result'>>,
    ): void {
      const cols: Record<string, unknown> = {
        status: patch.status,
        phase: patch.phase,
        state_json: patch.state === undefined ? undefined : JSON.stringify(patch.state),
        heartbeat_at: patch.heartbeatAt,
        ended_at: patch.endedAt,
        result_json: patch.result === undefined ? undefined : JSON.stringify(patch.result),
      };
      const set = Object.entries(cols).filter(([, v]) => v !== undefined);
      if (set.length === 0) return;
      db.prepare(`UPDATE autopilot_runs SET ${set.map(([k]) => `${k} = ?`).join(', ')} WHERE id = ?`).run(
        ...set.map(([, v]) => v),
        id,
      );
    },
    requestCancel(id: number): void {
      db.prepare('UPDATE autopilot_runs SET cancel_requested = 1 WHERE id = ?').run(id);
    },
    cancelRequested(id: number): boolean {
      return (
        (db.prepare('SELECT cancel_requested FROM autopilot_runs WHERE id = ?').get(id) as Row)?.cancel_requested === 1
      );
    },
    /** Ends a run: its status, result, and its GPUs let go. */
    finish(id: number, status: RunStatus, at: number, result: unknown): void {
      db.transaction(() => {
        this.update(id, { status, endedAt: at, result });
        const r = this.get(id);
        if (r) db.prepare('DELETE FROM gpu_holds WHERE group_key = ?').run(r.groupKey);
      })();
    },
    addTrial(t: Omit<Trial<K>, 'n'>): Trial<K> {
      return db
        .transaction(() => {
          const n =
            ((db.prepare('SELECT MAX(n) AS n FROM autopilot_trials WHERE run_id = ?').get(t.runId) as Row).n as
              | number
              | null) ?? 0;
          db.prepare(
            `INSERT INTO autopilot_trials (run_id, n, phase, attempt_id, profile, changes, knobs_json, outcome, category,
               throughput, ttft_p99, itl_p50, meets_slo, note, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          ).run(
            t.runId,
            n + 1,
            t.phase,
            t.attemptId,
            t.profile,
            t.changes,
            t.knobs ? JSON.stringify(t.knobs) : null,
            t.outcome,
            t.category,
            t.throughput,
            t.ttftP99,
            t.itlP50,
            t.meetsSlo === null ? null : t.meetsSlo ? 1 : 0,
            t.note,
            t.at,
          );
          return { ...t, n: n + 1 };
        })
        .immediate();
    },
    trials(runId: number): Trial<K>[] {
      return (db.prepare('SELECT * FROM autopilot_trials WHERE run_id = ? ORDER BY n').all(runId) as Row[]).map(
        trialOf<K>,
      );
    },
    /** GPU -> who holds it on this host, in the order the holds were taken, but those of group `except`. */
    heldGpus(host: string, except?: string): Map<number, string> {
      const rows = db.prepare('SELECT gpu, group_key, holder FROM gpu_holds WHERE host = ?').all(host) as Row[];
      return new Map(rows.filter((r) => r.group_key !== except).map((r) => [r.gpu as number, r.holder as string]));
    },
    /** Who holds each of these GPUs between trials (another group than `groupKey`). */
    holdsOn(host: string, except?: string): Array<{ gpu: number; holder: string; groupKey: string }> {
      return (db.prepare('SELECT gpu, holder, group_key FROM gpu_holds WHERE host = ? ORDER BY gpu').all(host) as Row[])
        .filter((r) => r.group_key !== except)
        .map((r) => ({ gpu: r.gpu as number, holder: r.holder as string, groupKey: r.group_key as string }));
    },
  };
}
