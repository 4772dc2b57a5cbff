// Smoke history in the ledger: every run, and the passing ones a new run is compared with.
import type { Db } from './db.ts';

export type Verdict = 'pass' | 'fail' | 'regression' | 'error';

export interface SmokeRow {
  id: number;
  at: number;
  host: string;
  profile: string;
  attemptId: number | null;
  mode: 'running' | 'launch';
  actor: string;
  origin: string;
  verdict: Verdict;
  passed: number;
  total: number;
  ttftMs: number | null;
  tokS: number | null;
  baselineId: number | null;
  crashCategory: string | null;
  summary: string;
  result: unknown;
  durationMs: number;
}

type Row = Record<string, unknown>;

const fromRow = (r: Row): SmokeRow => ({
  id: r.id as number,
  at: r.at as number,
  host: r.host as string,
  profile: r.profile as string,
  attemptId: (r.attempt_id as number) ?? null,
  mode: r.mode as SmokeRow['mode'],
  actor: r.actor as string,
  origin: r.origin as string,
  verdict: r.verdict as Verdict,
  passed: r.passed as number,
  total: r.total as number,
  ttftMs: (r.ttft_ms as number) ?? null,
  tokS: (r.tok_s as number) ?? null,
  baselineId: (r.baseline_id as number) ?? null,
  crashCategory: (r.crash_category as string) ?? null,
  summary: r.summary as string,
  result: JSON.parse(r.result_json as string),
  durationMs: r.duration_ms as number,
});

export function createSmokeStore(db: Db) {
  return {
    add(r: Omit<SmokeRow, 'id'>): SmokeRow {
      const info = db
        .prepare(
          `INSERT INTO smoke_runs (at, host, profile, attempt_id, mode, actor, origin, verdict, passed, total, ttft_ms,
             tok_s, baseline_id, crash_category, summary, result_json, duration_ms)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          r.at,
          r.host,
          r.profile,
          r.attemptId,
          r.mode,
          r.actor,
          r.origin,
          r.verdict,
          r.passed,
          r.total,
          r.ttftMs,
          r.tokS,
          r.baselineId,
          r.crashCategory,
          r.summary,
          JSON.stringify(r.result),
          r.durationMs,
        );
      return { ...r, id: Number(info.lastInsertRowid) };
    },
    /** The newest clean pass on this host with this profile: the figures a new run must keep up with. */
    lastPass(host: string, profile: string): SmokeRow | undefined {
      const r = db
        .prepare(
          "SELECT * FROM smoke_runs WHERE host = ? AND profile = ? AND verdict = 'pass' ORDER BY id DESC LIMIT 1",
        )
        .get(host, profile) as Row | undefined;
      return r ? fromRow(r) : undefined;
    },
    /** Clean passes on this host with this profile since `since`, newest first (the baselines' material). */
    passesSince(host: string, profile: string, since: number, limit = 500): SmokeRow[] {
      return (
        db
          .prepare(
            "SELECT * FROM smoke_runs WHERE host = ? AND profile = ? AND verdict = 'pass' AND at >= ? ORDER BY id DESC LIMIT ?",
          )
          .all(host, profile, since, limit) as Row[]
      ).map(fromRow);
    },
    list(filter: { host?: string; profile?: string; limit?: number } = {}): SmokeRow[] {
      const where: string[] = [];
      const args: unknown[] = [];
      if (filter.host) {
        where.push('host = ?');
        args.push(filter.host);
      }
      if (filter.profile) {
        where.push('profile = ?');
        args.push(filter.profile);
      }
      const sql = `SELECT * FROM smoke_runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
      return (db.prepare(sql).all(...args, filter.limit ?? 20) as Row[]).map(fromRow).reverse();
    },
  };
}

export type SmokeStore = ReturnType<typeof createSmokeStore>;
