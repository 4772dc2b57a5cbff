// The teardown the test files share (sshdWithBots): what a file started is undone after its tests, last started
// first, and one step that fails neither stops the others nor goes unreported.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { TestBot } from './app.ts';
import { freePort, groupMembers } from './sshd.ts';
import { sshdWithBots, undoAll } from './sshd-bots.ts';

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });

describe('undoAll', () => {
  it('runs every step last first, past one that throws, then throws the first failure', async () => {
    const ran: string[] = [];
    const steps = [
      () => ran.push('sshd'),
      () => {
        ran.push('bot');
        throw new Error('close failed');
      },
      async () => {
        ran.push('relay');
        throw new Error('relay failed');
      },
      () => ran.push('face'),
    ];
    await expect(undoAll(steps)).rejects.toThrow('relay failed');
    expect(ran).toEqual(['face', 'relay', 'bot', 'sshd']);
    expect(steps).toEqual([]);
  });
});

describe('sshdWithBots', () => {
  let live: { bot: TestBot; pgid: number; sshdPort: number } | undefined;
  const order: string[] = [];

  describe('a file whose test leaves a server running', () => {
    const shared = sshdWithBots();
    it('launches a server, and closes another bot itself', async () => {
      const bot = shared.bot();
      const r = await bot.run(`launch small --no-check --port ${await freePort()}`);
      expect(r.exitCode, r.text).toBe(0);
      live = { bot, pgid: bot.app.engine.attempts.activeOn('gpu')!.pgid!, sshdPort: shared.sshd.port };
      expect(groupMembers(live.pgid).length).toBeGreaterThan(0);
      shared.later(() => order.push('started before the second bot'));
      const other = shared.bot();
      const close = other.app.close;
      await other.app.close();
      // Closed by the test: the teardown does not close it again (a second close would record here).
      other.app.close = async () => {
        order.push('closed twice');
        await close();
      };
      shared.later(() => order.push('started last'));
    });
  });

  it("after the file's tests: the server is stopped, the bot closed, the sshd gone, last started first", async () => {
    expect(live).toBeDefined();
    expect(groupMembers(live!.pgid)).toEqual([]);
    expect(() => live!.bot.app.engine.attempts.list()).toThrow(/not open/);
    expect(await refused(live!.sshdPort)).toBe(true);
    expect(order).toEqual(['started last', 'started before the second bot']);
  });
});
