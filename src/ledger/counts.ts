// Attempts counted by outcome and crash class, for the bot's Prometheus metrics (src/metrics/bot.ts).
import type { Db } from './db.ts';

export function outcomeCounts(db: Db): Array<{ outcome: string; cls: string; n: number }> {
  return db
    .prepare(
      `SELECT COALESCE(outcome, status) AS outcome,
         COALESCE(json_extract(classification_json, '$.category'), 'none') AS cls, COUNT(*) AS n
       FROM attempts GROUP BY 1, 2`,
    )
    .all() as Array<{ outcome: string; cls: string; n: number }>;
}
