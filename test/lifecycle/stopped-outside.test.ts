// A server stopped by someone other than the bot (systemd, `docker stop`, a person's `kill`): SGLang logs the signal,
// drains, and kills its own process tree, itself last (exit 137, the stand-in's STANDIN_EXIT_STYLE=real).
import { describe, expect, it } from 'vitest';
import { appendAndSettle, until } from '../helpers/app.ts';
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

  it('after an error it served past: the stop is still how it ended, not a crash of that old error', async () => {
    const b = shared.bot({ env: { STANDIN_EXIT_STYLE: 'real' }, longLived: true });
    expect((await b.run(`launch small --port ${await freePort()}`)).text).toMatch(/^ready: attempt #1/);
    // one batch's failure, logged with its traceback; the server answers its health check and serves on
    const traceback = [
      '[2025-11-05 12:01:00] Traceback (most recent call last):',
      '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/managers/scheduler.py", line 1200, in process_batch',
      '    self.check_shapes(batch)',
      'ValueError: odd shape in batch',
    ].join('\n');
    await appendAndSettle(b.app, 1, 0, traceback);
    await until(() => b.app.engine.attempts.events(1).some((e) => e.kind === 'error_survived'), 20_000);
    const a = b.app.engine.attempts.get(1)!;
    process.kill(-a.pgid!, 'SIGTERM');
    await until(() => b.app.engine.attempts.get(1)?.active === false, 30_000);
    const done = b.app.engine.attempts.get(1)!;
    expect(done).toMatchObject({ status: 'exited', outcome: 'exited', exitCode: 137 });
    expect(done.outcomeDetail).toMatch(/^stopped from outside the bot: /);
  }, 60_000);
});
