// The bot killed with SIGKILL at chosen moments (a child process), and a bot started again on the same ledger: the
// ledger never says a server is gone while its host runs it, and what ended meanwhile is classified and told.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAttemptStore } from '../../src/ledger/attempts.ts';
import { openDb } from '../../src/ledger/db.ts';
import { stampOf } from '../../src/lifecycle/log-read.ts';
import { freshDirs, makeBot, testConfig, until } from '../helpers/app.ts';
import { configFile, spawnBot } from '../helpers/child-bot.ts';
import { freePort, groupMembers, testUser } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

const psArgs = () => execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' });

describe('the bot killed mid-launch', () => {
  it('while "starting" (holding for the host lock): the host starts it anyway; the next bot adopts it and stops it', async () => {
    const dirs = freshDirs();
    const loaded = testConfig(shared.sshd, dirs);
    // Another launch holds the host lock, so this one waits in "starting" on the host (-o: the lock is flock's own,
    // not its child's, so killing flock releases it).
    const lock = join(dirs.workdir, 'host.lock');
    writeFileSync(lock, '');
    const u = testUser();
    chownSync(lock, u.uid, u.gid);
    const holder = spawn('flock', ['-o', lock, 'sleep', '60'], { stdio: 'ignore' });
    shared.later(() => void holder.kill('SIGKILL'));
    await until(() => spawnSync('flock', ['-n', lock, 'true']).status !== 0, 5000);

    const child = spawnBot(configFile(loaded), ['launch', 'small', '--no-check', '--port', String(await freePort())]);
    shared.later(() => child.kill());
    const ledger = createAttemptStore(openDb(join(dirs.dataDir, 'ledger.sqlite')));
    await until(
      () =>
        ledger.get(1)?.status === 'starting' &&
        psArgs()
          .split('\n')
          .some((l) => l.includes('glm-launch') && l.includes(dirs.workdir)),
      30_000,
    );
    await child.kill();
    holder.kill('SIGKILL');
    // The host goes on without the bot: its own record of the run appears.
    const runDir = join(dirs.workdir, 'runs', ledger.get(1)!.runId);
    await until(() => existsSync(join(runDir, 'pgid')), 20_000);
    const pgid = Number(readFileSync(join(runDir, 'pgid'), 'utf8').split(' ')[0]);
    expect(groupMembers(pgid).length).toBeGreaterThan(0);

    const b = shared.keep(makeBot(loaded, dirs));
    const status = await b.run('status');
    expect(status.text).toMatch(/#1 +small/);
    expect(status.text).not.toMatch(/ended while nobody watched/);
    expect(b.app.engine.attempts.get(1)).toMatchObject({ active: true, pgid, logPath: join(runDir, 'out.log') });
    const stopped = await b.run('stop --attempt 1');
    expect(stopped.text).toMatch(/stopped attempt #1 \(small\) on gpu: it exited on SIGTERM/);
    expect(groupMembers(pgid)).toEqual([]);
    expect(b.app.engine.attempts.leasesOn('gpu')).toEqual([]);
  }, 90_000);

  it('an orphaned launch that got ready: one-shot status, probe and smoke see it ready, since the log says', async () => {
    const dirs = freshDirs();
    // Slow enough to kill the launcher while it loads.
    const loaded = testConfig(shared.sshd, { ...dirs, env: { STANDIN_TIME_SCALE: '0.05' } });
    const child = spawnBot(configFile(loaded), ['launch', 'small', '--port', String(await freePort())]);
    shared.later(() => child.kill());
    const ledger = createAttemptStore(openDb(join(dirs.dataDir, 'ledger.sqlite')));
    await until(() => ledger.get(1)?.status === 'loading', 30_000);
    await child.kill();
    const a = ledger.get(1)!;
    await until(() => /fired up and ready to roll/.test(readFileSync(a.logPath!, 'utf8')), 30_000);

    const b = shared.keep(makeBot(loaded, dirs));
    const status = await b.run('status');
    expect(status.text).toMatch(/gpu +ready +#1 +small/);
    const ready = b.app.engine.attempts.get(1)!;
    // The ready time is the log's, not when this bot noticed.
    const log = readFileSync(a.logPath!, 'utf8').split('\n');
    const first = stampOf(log.find((l) => stampOf(l) !== undefined)!)!;
    const readyLine = stampOf(log.find((l) => /fired up and ready to roll/.test(l))!)!;
    expect(ready.readyAt! - ready.startedAt).toBe(readyLine - first);
    const probe = await b.run('probe --attempt 1');
    expect(probe.text).toMatch(/attempt #1 small, ready/);
    const smoke = await b.run('smoke');
    expect(smoke.text).not.toMatch(/still loading/);
  }, 90_000);
});
