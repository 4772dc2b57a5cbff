// Benchmark sweeps in the ledger, per attempt: what was asked and every level's figures.
import type { Db } from './db.ts';

export interface BenchParams {
  concurrencies: number[];
  inputLen: number;
  outputLen: number;
  /** Per level (one number: the same for every level); null: the default. */
  requests: number[] | null;
}

/** One bench run; `L` is one concurrency level's figures, kept as JSON (its shape is src/bench-load/metrics.ts's). */
export interface BenchRow<L = unknown> {
  id: number;
  at: number;
  host: string;
  profile: string;
  attemptId: number | null;
  actor: string;
  origin: string;
  params: BenchParams;
  levels: L[];
  chartPath: string | null;
  durationMs: number;
}

type Row = Record<string, unknown>;

const fromRow = <L>(r: Row): BenchRow<L> => ({
  id: r.id as number,
  at: r.at as number,
  host: r.host as string,
  profile: r.profile as string,
  attemptId: (r.attempt_id as number) ?? null,
  actor: r.actor as string,
  origin: r.origin as string,
  params: JSON.parse(r.params_json as string),
  levels: JSON.parse(r.results_json as string),
  chartPath: (r.chart_path as string) ?? null,
  durationMs: r.duration_ms as number,
});

export function benchTable<L>(db: Db) {
  return {
    add(r: Omit<BenchRow<L>, 'id'>): BenchRow<L> {
      const info = db
        .prepare(
          `INSERT INTO bench_runs (at, host, profile, attempt_id, actor, origin, params_json, results_json, chart_path,
             duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          r.at,
          r.host,
          r.profile,
          r.attemptId,
          r.actor,
          r.origin,
          JSON.stringify(r.params),
          JSON.stringify(r.levels),
          r.chartPath,
          r.durationMs,
        );
      return { ...r, id: Number(info.lastInsertRowid) };
    },
    list(filter: { host?: string; attemptId?: number; limit?: number } = {}): BenchRow<L>[] {
      const where: string[] = [];
      const args: unknown[] = [];
      if (filter.host) {
        where.push('host = ?');
        args.push(filter.host);
      }
      if (filter.attemptId !== undefined) {
        where.push('attempt_id = ?');
        args.push(filter.attemptId);
      }
      const sql = `SELECT * FROM bench_runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
      return (db.prepare(sql).all(...args, filter.limit ?? 20) as Row[]).map((r) => fromRow<L>(r)).reverse();
    },
  };
}
