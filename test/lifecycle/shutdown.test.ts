// Stopping the bot while a server it watches is live (issue 17, item 24): the monitor's follower stops, and its last
// ledger write (the log offset) lands, before the ledger closes; nothing logs "The database connection is not open".
// The same for a launch still loading: its follower ends, the command answers and its audit row lands first.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resumeWatches } from '../../src/lifecycle/resume.ts';
import { startScheduler } from '../../src/schedule/scheduler.ts';
import { freshDirs, makeBot, testConfig, until } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

describe('bot shutdown with a live server', () => {
  it('stops the watchers before closing the ledger, and keeps their offset', async () => {
    const dirs = freshDirs();
    const loaded = testConfig(shared.sshd, dirs);
    const port = await freePort();
    const bot = shared.keep(makeBot(loaded, { ...dirs, longLived: true }));
    expect((await bot.run(`launch small --port ${port}`)).text).toMatch(/^ready: attempt #1/);
    // The monitor follows the live server; the bot goes away under it.
    await new Promise((r) => setTimeout(r, 300));
    await bot.app.close();
    await new Promise((r) => setTimeout(r, 500));
    const bad = bot.logLines.filter((l) => /database connection is not open|monitor failed/.test(l));
    expect(bad).toEqual([]);

    // The next bot finds the server where it was left, resumes from the saved offset, and stops it.
    const next = shared.keep(makeBot(loaded, dirs));
    const a = next.app.engine.attempts.get(1)!;
    expect(a.status).toBe('ready');
    expect(a.logOffset).toBeGreaterThan(0);
    expect((await next.run('stop --attempt 1')).text).toMatch(/stopped/);
    await next.app.close();
  });

  it('a launch still loading when the bot closes: it answers interrupted, its audit row lands, the attempt stays loading, and the next bot follows it to ready', async () => {
    // The server stalls in weight loading while the file says so (readable by the account the test's sshd logs in as).
    const dir = mkdtempSync(join(tmpdir(), 'glm-shutdown-'));
    chmodSync(dir, 0o755);
    const control = join(dir, 'control');
    writeFileSync(control, 'stall:weight_load\n', { mode: 0o644 });
    const dirs = freshDirs();
    const loaded = testConfig(shared.sshd, { ...dirs, env: { STANDIN_CONTROL: control } });
    const port = await freePort();
    const bot = shared.keep(makeBot(loaded, { ...dirs, longLived: true }));
    const launching = bot.run(`launch small --port ${port}`);
    await until(() => /^loading weights/.test(bot.app.engine.attempts.get(1)?.lastMilestone ?? ''), 30_000);
    await bot.app.close();
    const r = await launching;
    expect(r.exitCode).toBe(1);
    expect(r.text).toMatch(
      /^interrupted: the bot is closing while attempt #1 \(small\) on gpu\S* is loading; it is left as it is and the bot follows it again when it next starts/,
    );
    const bad = bot.logLines.filter((l) => /database connection is not open|could not write the audit row/.test(l));
    expect(bad).toEqual([]);

    const next = shared.keep(makeBot(loaded, { ...dirs, longLived: true }));
    const engine = next.app.engine;
    expect(engine.audit.list().find((e) => e.command === 'launch')).toMatchObject({
      decision: 'allow',
      result: 'failed (1)',
    });
    expect(engine.attempts.get(1)).toMatchObject({ status: 'loading', active: true });
    const ended: string[] = [];
    expect(await resumeWatches(engine, (e) => ended.push(e.kind), next.app.diagnoser)).toBe(1);
    writeFileSync(control, '');
    await until(() => engine.attempts.get(1)?.status === 'ready', 30_000);
    expect((await next.run('stop --attempt 1')).text).toMatch(/^stopped attempt #1 /);
    await next.app.close();
  }, 90_000);

  /** A control file the stand-in reads (readable by the account the test's sshd logs in as), saying `word`. */
  function controlFile(word: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'glm-shutdown-'));
    chmodSync(dir, 0o755);
    const control = join(dir, 'control');
    writeFileSync(control, `${word}\n`, { mode: 0o644 });
    return control;
  }

  it('a launch whose readiness check (its first real request) is under way when the bot closes: interrupted, and no monitor outlives the close', async () => {
    // 8 tokens 600 ms apart: the first real request takes seconds.
    const b = shared.bot({ env: { STANDIN_TPOT_MS: '600' }, longLived: true });
    const launching = b.run(`launch small --port ${await freePort()}`);
    await until(() => b.app.engine.attempts.get(1)?.lastMilestone === 'ready line seen', 60_000);
    const pgid = b.app.engine.attempts.get(1)!.pgid!;
    await b.app.close();
    expect((await launching).text).toMatch(/^interrupted: /);
    // The server dies now: a monitor that outlived the close would follow it and write to the closed ledger.
    process.kill(-pgid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 2000));
    expect(b.logLines.filter((l) => /not open|monitor failed|did not stop|still running|audit row/.test(l))).toEqual(
      [],
    );
  }, 90_000);

  it('a scheduled launch loading at shutdown: beginClose ends it, the scheduler stops at once, and its report says INTERRUPTED and pages nobody', async () => {
    const dirs = freshDirs();
    const loaded = testConfig(shared.sshd, {
      ...dirs,
      env: { STANDIN_CONTROL: controlFile('stall:weight_load') },
      extra: {
        schedule: {
          jobs: [{ name: 'nightly', cron: '0 3 1 1 *', timezone: 'UTC', run: 'launch small', on_call: ['U0123ABCD'] }],
        },
      },
    });
    const bot = shared.keep(makeBot(loaded, { ...dirs, longLived: true }));
    const said: string[] = [];
    const scheduler = startScheduler(bot.app, { say: (t) => said.push(t) });
    void scheduler.fire('nightly', Date.now());
    await until(() => /^loading weights/.test(bot.app.engine.attempts.get(1)?.lastMilestone ?? ''), 30_000);
    // src/slack/main.ts's order: beginClose, the scheduler's jobs, then close.
    bot.app.beginClose();
    const t0 = Date.now();
    await scheduler.stop();
    expect(Date.now() - t0).toBeLessThan(8000);
    await bot.app.close();
    const report = said.join('\n');
    expect(report).toMatch(/INTERRUPTED/);
    expect(report).not.toMatch(/FAIL|U0123ABCD/);
  }, 90_000);

  it('smoke --launch at shutdown: no verdict on the server (error: interrupted), and it stops the server it started', async () => {
    const dirs = freshDirs();
    const loaded = testConfig(shared.sshd, { ...dirs, env: { STANDIN_CONTROL: controlFile('stall:weight_load') } });
    const bot = shared.keep(makeBot(loaded, { ...dirs, longLived: true }));
    const smoking = bot.run('smoke --launch --profile small');
    await until(() => /^loading weights/.test(bot.app.engine.attempts.get(1)?.lastMilestone ?? ''), 30_000);
    await bot.app.close();
    const r = await smoking;
    expect(r.exitCode).toBe(1);
    expect(r.data).toMatchObject({ verdict: 'error', interrupted: true });
    expect(r.text).toMatch(/interrupted: the bot closed while small was loading/);
    const next = shared.keep(makeBot(loaded, dirs));
    expect(next.app.engine.attempts.get(1)).toMatchObject({ active: false, status: 'stopped' });
    await next.app.close();
  }, 90_000);
});
