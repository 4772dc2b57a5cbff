// A server stopped by someone other than the bot (systemd, `docker stop`, a person's `kill`): SGLang logs the signal,
// drains, and kills its own process tree, itself last (exit 137, the stand-in's STANDIN_EXIT_STYLE=real).
import { describe, expect, it } from 'vitest';
import { until } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

describe('a server stopped from outside the bot', () => {
  it('is told as exited on a signal, with its log line, not as a crash', async () => {
    const b = shared.bot({ env: { STANDIN_EXIT_STYLE: 'real' }, longLived: true });
    expect((await b.run(`launch small --port ${await freePort()}`)).text).toMatch(/^ready: attempt #1/);
    const a = b.app.engine.attempts.get(1)!;
    process.kill(-a.pgid!, 'SIGTERM');
    await until(() => b.app.engine.attempts.get(1)?.active === false, 30_000);
    const done = b.app.engine.attempts.get(1)!;
    expect(done).toMatchObject({ status: 'exited', outcome: 'exited', exitCode: 137 });
    expect(done.outcomeDetail).toMatch(
      /^stopped from outside the bot: the server logged a stop signal at line \d+ \(.*SIGTERM received\. signum=.*\), then ended with status 137$/,
    );
    expect((done.classification as { category: string }).category).toBe('none');
    // Told once, as an exit, not a crash alert.
    const told = b.said.filter((l) => /^attempt #1: (EXITED|CRASHED)/.test(l));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/^attempt #1: EXITED \(exited, exit 137\) on gpu/);
  }, 60_000);
});
