// Stopping the bot while a server it watches is live (issue 17, item 24): the monitor's follower stops, and its last
// ledger write (the log offset) lands, before the ledger closes; nothing logs "The database connection is not open".
import { describe, expect, it } from 'vitest';
import { freshDirs, makeBot, testConfig } from '../helpers/app.ts';
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
});
