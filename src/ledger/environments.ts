// The host environments captured at launch (src/lifecycle/env.ts) for issue drafts and advice: the tables
// environments and attempt_environments (see src/ledger/db.ts), on the engine's own SQLite connection.
import type { Db } from './db.ts';

/** What `sglang.check_env` (or the fallback) says, summarised: src/lifecycle/env-parse.ts reads it. */
export interface GpuGroup {
  ids: number[];
  name: string;
}

export interface EnvFacts {
  python?: string;
  /** CUDA toolkit release (from NVCC or the torch build tag). */
  cuda?: string;
  driver?: string;
  gpus: GpuGroup[];
  /** `12.0`; the first group's when the GPUs differ. */
  computeCapability?: string;
  /** `sm120`, from the compute capability. */
  arch?: string;
  torch?: string;
  /** Package name as check_env prints it -> version or `Module Not Found`. */
  packages: Record<string, string>;
  topology?: string;
}

export interface EnvReport {
  /** Ledger row, once stored. */
  id?: number;
  host: string;
  sglangVersion: string | null;
  /** `check_env`: its own output; `fallback`: the equivalent, collected by the bot; `unavailable`: nothing. */
  source: 'check_env' | 'fallback' | 'unavailable';
  capturedAt: number;
  /** What goes under "### Environment" (secrets removed; scrub it before it leaves the team). */
  text: string;
  facts: EnvFacts;
  /** Why check_env did not run, or why nothing could be captured. */
  problem?: string;
}

type Row = Record<string, unknown>;

function fromRow(r: Row): EnvReport {
  const report = JSON.parse(r.report_json as string) as EnvReport;
  return { ...report, id: r.id as number };
}

export function environmentStore(db: Db) {
  return {
    /** The newest capture for this host and SGLang version. */
    latest(host: string, sglangVersion: string): EnvReport | undefined {
      const r = db
        .prepare('SELECT * FROM environments WHERE host = ? AND sglang_version = ? ORDER BY id DESC LIMIT 1')
        .get(host, sglangVersion) as Row | undefined;
      return r ? fromRow(r) : undefined;
    },
    save(report: EnvReport): number {
      const { id: _id, ...rest } = report;
      const info = db
        .prepare(
          'INSERT INTO environments (host, sglang_version, captured_at, source, report_json) VALUES (?, ?, ?, ?, ?)',
        )
        .run(report.host, report.sglangVersion ?? '', report.capturedAt, report.source, JSON.stringify(rest));
      return Number(info.lastInsertRowid);
    },
    link(attemptId: number, environmentId: number): void {
      db.prepare(
        'INSERT INTO attempt_environments (attempt_id, environment_id) VALUES (?, ?) ON CONFLICT(attempt_id) DO UPDATE SET environment_id = excluded.environment_id',
      ).run(attemptId, environmentId);
    },
    /** The capture linked to an attempt, else the newest for its host and SGLang version. */
    forAttempt(a: { id: number; host: string; sglangVersion: string | null }): EnvReport | undefined {
      const linked = db
        .prepare(
          'SELECT e.* FROM attempt_environments l JOIN environments e ON e.id = l.environment_id WHERE l.attempt_id = ?',
        )
        .get(a.id) as Row | undefined;
      if (linked) return fromRow(linked);
      return a.sglangVersion ? this.latest(a.host, a.sglangVersion) : undefined;
    },
  };
}

export type EnvironmentStore = ReturnType<typeof environmentStore>;
