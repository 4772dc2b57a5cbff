// Each `next` run's numbered suggestions, kept in the ledger so `launch next:N` means what that person just read.
import type { Db } from './db.ts';

export interface StoredSuggestion {
  batch: number;
  n: number;
  at: number;
  actor: string;
  /** The variant's profile name (a file under the data dir's variants/). */
  profile: string;
  base: string;
  overrides: Record<string, unknown>;
  reason: string;
  ref?: string;
}

type Row = Record<string, unknown>;

function fromRow(r: Row): StoredSuggestion {
  return {
    batch: r.batch as number,
    n: r.n as number,
    at: r.at as number,
    actor: r.actor as string,
    profile: r.profile as string,
    base: r.base as string,
    overrides: JSON.parse(r.overrides_json as string),
    reason: r.reason as string,
    ...(r.ref ? { ref: r.ref as string } : {}),
  };
}

export function suggestionStore(db: Db) {
  return {
    /** Stores a run's suggestions as a new batch, numbered from 1; returns the batch. */
    save(items: Array<Omit<StoredSuggestion, 'batch' | 'n' | 'at' | 'actor'>>, at: number, actor: string): number {
      const insert =
        db.prepare(`INSERT INTO suggestions (batch, n, at, actor, profile, base, overrides_json, reason, ref)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      return db
        .transaction(() => {
          const last = (db.prepare('SELECT MAX(batch) AS b FROM suggestions').get() as Row).b as number | null;
          const batch = (last ?? 0) + 1;
          items.forEach((s, i) => {
            insert.run(
              batch,
              i + 1,
              at,
              actor,
              s.profile,
              s.base,
              JSON.stringify(s.overrides),
              s.reason,
              s.ref ?? null,
            );
          });
          return batch;
        })
        .immediate();
    },
    /** Suggestion N of the newest batch. */
    latest(n: number): StoredSuggestion | undefined {
      const r = db
        .prepare('SELECT * FROM suggestions WHERE batch = (SELECT MAX(batch) FROM suggestions) AND n = ?')
        .get(n) as Row | undefined;
      return r ? fromRow(r) : undefined;
    },
    latestBatch(): StoredSuggestion[] {
      return (
        db
          .prepare('SELECT * FROM suggestions WHERE batch = (SELECT MAX(batch) FROM suggestions) ORDER BY n')
          .all() as Row[]
      ).map(fromRow);
    },
  };
}
