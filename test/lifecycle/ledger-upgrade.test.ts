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

describe('a new ledger opened by several processes at once', () => {
  it('is created once: every process opens it, none fails on a table another one just made', async () => {
    const { spawn } = await import('node:child_process');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { fileURLToPath } = await import('node:url');
    const dir = mkdtempSync(join(tmpdir(), 'glm-ledger-race-'));
    const file = join(dir, 'ledger.sqlite');
    const script = join(dir, 'open.mts');
    const db = fileURLToPath(new URL('../../src/ledger/db.ts', import.meta.url));
    // Every process loads first, then all open the file at the same instant (a busy wait to a shared start time).
    writeFileSync(
      script,
      `import { openDb } from ${JSON.stringify(db)};\nconst at = Number(process.argv[3]);\nwhile (Date.now() < at) {}\nopenDb(process.argv[2]!).close();\n`,
    );
    const at = String(Date.now() + 4000);
    const runner = fileURLToPath(new URL('../../bin/tsx-run.js', import.meta.url));
    const codes = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<{ code: number | null; err: string }>((resolve) => {
            const p = spawn(process.execPath, [runner, script, file, at], { stdio: ['ignore', 'ignore', 'pipe'] });
            let err = '';
            p.stderr.on('data', (d: Buffer) => {
              err += d.toString();
            });
            // A process killed by a signal prints nothing: say which signal, so a failure names its cause.
            p.on('close', (code, signal) =>
              resolve({ code, err: err || `killed by ${signal ?? 'nothing'}, no output` }),
            );
          }),
      ),
    );
    // (a failure's first line that says something: Node opens an uncaught error's report with a blank line)
    const said = (err: string) => err.split('\n').find((l) => l.trim() !== '') ?? err;
    expect(codes.map((c) => (c.code === 0 ? 0 : said(c.err)))).toEqual([0, 0, 0, 0, 0, 0]);
    const check = new Database(file);
    expect(check.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    check.close();
  });
});
