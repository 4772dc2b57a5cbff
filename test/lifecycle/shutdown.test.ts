// Stopping the bot while a server it watches is live (issue 17, item 24): the monitor's follower stops, and its last
// ledger write (the log offset) lands, before the ledger closes; nothing logs "The database connection is not open".
// The same for a launch still loading: its follower ends, the command answers and its audit row lands first.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resumeWatches } from '../../src/lifecycle/resume.ts';
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
});
