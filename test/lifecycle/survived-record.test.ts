// A server whose log ends on a failure record alone (no traceback, signature or death) and which then exited 0 by
// itself survived that record: the attempt is closed `exited`, not `crashed` (showsCrash, src/logs/diagnosis.ts).
// Here the unwatched close: the server ended while no bot ran, and the next bot reads its log and the host's record.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Diagnosis } from '../../src/logs/diagnosis.ts';
import { freshDirs, makeBot, testConfig, until } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

describe('an attempt that ended on a failure record alone', () => {
  it('is exited when its server exited 0, the record kept as evidence', async () => {
    const dirs = freshDirs();
    const cfg = testConfig(shared.sshd, dirs);
    const first = shared.keep(makeBot(cfg, dirs));
    expect((await first.run(`launch small --gpus 3 --port ${await freePort()}`)).exitCode).toBe(0);
    const a = first.app.engine.attempts.get(1)!;
    await first.app.close();
    // The wrapper traps TERM and records the server's status; the server drains and exits 0.
    process.kill(-a.pgid!, 'SIGTERM');
    const exitFile = join(a.runDir!, 'exit');
    await until(() => existsSync(exitFile), 20_000);
    expect(readFileSync(exitFile, 'utf8').trim()).toBe('0');
    const record = '[2025-11-05 12:01:00] Failed to push metrics to the collector: connection refused';
    appendFileSync(a.logPath!, `${record}\n`);

    const restarted = shared.keep(makeBot(cfg, dirs));
    const r = await restarted.run('status --json');
    expect(r.exitCode, r.text).toBe(0);
    const closed = restarted.app.engine.attempts.get(1)!;
    expect(closed).toMatchObject({ active: false, status: 'exited', outcome: 'exited', exitCode: 0 });
    const d = closed.classification as Diagnosis;
    expect(d.category).toBe('none');
    expect(d.evidence.map((e) => e.text)).toContain(record);
  });
});
