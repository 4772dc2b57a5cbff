// Per job, in the ledger: when it was first seen (runs due before that were never ours to miss), when its last run
// was due, started and finished, and how it went. Catch-up at start-up reads this. Beside it, what happened to runs
// besides running: waits for another job on the same host, skips, runs missed while the bot was down.
import type { Db } from './db.ts';

export interface JobState {
  job: string;
  firstSeenAt: number;
  lastDueAt: number | null;
  lastStartedAt: number | null;
  lastFinishedAt: number | null;
  lastResult: string | null;
  lastCatchUp: boolean;
}

/** `waited`: for another job on its host; `skipped`: the job's previous run was still going; `missed`: while down. */
export type ScheduleEventKind = 'waited' | 'skipped' | 'missed';

export interface ScheduleEvent {
  id: number;
  job: string;
  dueAt: number;
  at: number;
  kind: ScheduleEventKind;
  detail: string;
}

type Row = Record<string, unknown>;

const fromRow = (r: Row): JobState => ({
  job: r.job as string,
  firstSeenAt: r.first_seen_at as number,
  lastDueAt: (r.last_due_at as number) ?? null,
  lastStartedAt: (r.last_started_at as number) ?? null,
  lastFinishedAt: (r.last_finished_at as number) ?? null,
  lastResult: (r.last_result as string) ?? null,
  lastCatchUp: r.last_catch_up === 1,
});

export function createScheduleState(db: Db) {
  return {
    get(job: string): JobState | undefined {
      const r = db.prepare('SELECT * FROM schedule_state WHERE job = ?').get(job) as Row | undefined;
      return r ? fromRow(r) : undefined;
    },
    /** Records the job as known from `at` on (first sight only). */
    seen(job: string, at: number): JobState {
      db.prepare('INSERT OR IGNORE INTO schedule_state (job, first_seen_at) VALUES (?, ?)').run(job, at);
      return this.get(job)!;
    },
    /**
     * Claims the run due at `dueAt`: false when that run (or a later one) was already claimed, so a run is started
     * at most once whatever fires it (the cron trigger, a catch-up, a second bot process).
     */
    claim(job: string, dueAt: number, at: number, catchUp: boolean): boolean {
      const info = db
        .prepare(
          `UPDATE schedule_state SET last_due_at = ?, last_started_at = ?, last_catch_up = ?, last_result = 'running'
           WHERE job = ? AND (last_due_at IS NULL OR last_due_at < ?)`,
        )
        .run(dueAt, at, catchUp ? 1 : 0, job, dueAt);
      return info.changes === 1;
    },
    finished(job: string, at: number, result: string): void {
      db.prepare('UPDATE schedule_state SET last_finished_at = ?, last_result = ? WHERE job = ?').run(at, result, job);
    },
    event(e: Omit<ScheduleEvent, 'id'>): void {
      db.prepare('INSERT INTO schedule_events (job, due_at, at, kind, detail) VALUES (?, ?, ?, ?, ?)').run(
        e.job,
        e.dueAt,
        e.at,
        e.kind,
        e.detail,
      );
    },
    /** The newest events first (of one job, when named). */
    events(opts: { job?: string; limit?: number } = {}): ScheduleEvent[] {
      const rows = db
        .prepare(`SELECT * FROM schedule_events ${opts.job ? 'WHERE job = @job' : ''} ORDER BY id DESC LIMIT @limit`)
        .all({ limit: opts.limit ?? 50, ...(opts.job ? { job: opts.job } : {}) }) as Row[];
      return rows.map((r) => ({
        id: r.id as number,
        job: r.job as string,
        dueAt: r.due_at as number,
        at: r.at as number,
        kind: r.kind as ScheduleEventKind,
        detail: r.detail as string,
      }));
    },
  };
}

export type ScheduleState = ReturnType<typeof createScheduleState>;
