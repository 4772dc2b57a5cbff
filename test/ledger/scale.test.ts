// The ledger's hot reads stay index lookups however many attempts it holds (npm run bench times them at 100 and
// 100,000 attempts): no full scan of attempts, no sort of it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOT_QUERIES, listSql } from '../../src/ledger/attempts.ts';
import { openDb } from '../../src/ledger/db.ts';

const db = openDb(join(mkdtempSync(join(tmpdir(), 'glm-plan-')), 'ledger.sqlite'));
const plan = (sql: string, args: unknown[]) =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((r) => r.detail);

// `attempts` alone walks the table backwards by its primary key and stops after LIMIT rows: SQLite calls that a SCAN.
const cases: Array<[string, string, unknown[], RegExp]> = [
  ['the newest failures (next, draft-issue)', HOT_QUERIES.failing, [], /attempts_failing/],
  ['the attempts of a model (next: already tried?)', HOT_QUERIES.ofModel, ['m', 9], /attempts_by_model_any_host/],
  ['the attempts of a model on a host (draft-issue)', HOT_QUERIES.ofModelOnHost, ['m', 'h', 9], /attempts_by_model/],
  ['attempts', listSql([]), [100], /^SCAN attempts$/],
  ['attempts --profile P', listSql(['profile = ?']), ['p', 100], /attempts_by_profile/],
  ['attempts --host H', listSql(['host = ?']), ['h', 100], /attempts_by_host/],
  [
    'the errors survived by the listed attempts (status, attempts)',
    HOT_QUERIES.survived,
    ['[1,2]'],
    /events_by_attempt/,
  ],
];

describe('ledger query plans', () => {
  for (const [what, sql, args, index] of cases) {
    it(`${what}: on an index, no full scan, no sort`, () => {
      const p = plan(sql, args);
      expect(p.join(' | ')).toMatch(index);
      expect(p.filter((d) => /TEMP B-TREE/.test(d))).toEqual([]);
      if (!/LIMIT \?$/.test(sql)) expect(p.filter((d) => /^SCAN attempts$/.test(d))).toEqual([]);
    });
  }
});
