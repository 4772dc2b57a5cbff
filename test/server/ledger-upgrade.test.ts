// A ledger written by a bot from before GPU leases (one server per host) opens in this version with the leases of its
// live attempts in place, so an upgrade in the middle of a running server never double-books its GPUs.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createAttemptStore, type NewAttempt } from '../../src/ledger/attempts.ts';
import { MIGRATIONS, openDb } from '../../src/ledger/db.ts';
import { userDir } from '../helpers/sshd.ts';

const next = (gpus: string): NewAttempt => ({
  host: 'gpu',
  profile: 'q',
  profileJson: '{}',
  flags: {},
  argv: [],
  env: {},
  commandLine: 'y',
  port: 30002,
  gpus,
  actor: 'bob',
  origin: 'terminal',
  startedAt: 1,
});

describe('ledger upgrade to leases', () => {
  it('backfills the leases of live attempts and drops the one-per-host rule', () => {
    const file = join(userDir('glm-ledger-old-'), 'ledger.db');
    const before = MIGRATIONS.findIndex((m) => m.includes('ADD COLUMN group_key')) + 1;
    const old = new Database(file);
    for (const m of MIGRATIONS.slice(0, before)) old.exec(m);
    old.pragma(`user_version = ${before}`);
    const insert = old.prepare(`INSERT INTO attempts (host, profile, profile_json, flags_json, argv_json, env_json,
      command_line, port, gpus, actor, origin, status, active, started_at)
      VALUES (?, 'p', '{}', '{}', '[]', '{}', 'x', ?, ?, 'alice', 'terminal', ?, ?, 0)`);
    insert.run('gpu', 30000, '0,1', 'ready', 1);
    insert.run('gpu', 30001, '2', 'crashed', 0);
    old.close();

    const attempts = createAttemptStore(openDb(file));
    expect(attempts.leasesOn('gpu')).toEqual([
      { gpu: 0, attemptId: 1 },
      { gpu: 1, attemptId: 1 },
    ]);
    expect(attempts.get(1)!.nodeHosts).toEqual([]);
    // The old live attempt still holds its GPUs; another server fits beside it now.
    expect(() => attempts.open(next('1'))).toThrow(/GPU 1 held by attempt #1 \(p\), launched by alice/);
    const beside = attempts.open(next('2'));
    expect(attempts.allActiveOn('gpu').map((a) => a.id)).toEqual([1, beside.id]);
  });
});
