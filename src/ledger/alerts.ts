// Crash alerts already told, one row per crash signature (dedup_key): a crash seen again counts up on the first
// alert instead of posting a new one (src/alerts/notifier.ts decides what to post).
import type { Db } from './db.ts';

export interface AlertRow {
  attempt_id: number;
  count: number;
  ref_key: string;
}

export function alertTable(db: Db) {
  return {
    /** The alert already told for this signature, if any. */
    get(dedupKey: string): AlertRow | undefined {
      return db.prepare('SELECT * FROM alerts WHERE dedup_key = ?').get(dedupKey) as AlertRow | undefined;
    },
    /** Counts another attempt with the same crash. */
    recount(dedupKey: string, count: number, at: number): void {
      db.prepare('UPDATE alerts SET count = ?, last_at = ? WHERE dedup_key = ?').run(count, at, dedupKey);
    },
    /** The first alert of a signature (kept once, whoever writes first). */
    add(r: { dedupKey: string; attemptId: number; category: string; at: number; refKey: string }): void {
      db.prepare(
        'INSERT OR IGNORE INTO alerts (dedup_key, attempt_id, category, count, first_at, last_at, ref_key) VALUES (?, ?, ?, 1, ?, ?, ?)',
      ).run(r.dedupKey, r.attemptId, r.category, r.at, r.at, r.refKey);
    },
  };
}

export type AlertTable = ReturnType<typeof alertTable>;
