// Crash diagnosis end to end over a real sshd: the stand-in crashes, the follower classifies the crash, and one alert
// with the team's findings reaches the chat abstraction through the persistent outbox.
import { writeFileSync } from 'node:fs';
import { connect, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDirs, makeChatBot, postGenerate, testConfig, until } from '../helpers/app.ts';
import { alive } from '../helpers/proc.ts';
import { freePort, userDir } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

function chatBot(env: Record<string, string>, dirs = freshDirs(), timeouts: Record<string, number> = {}) {
  const loaded = testConfig(shared.sshd, { ...dirs, env });
  Object.assign(loaded.config.timeouts, timeouts);
  return shared.keep(makeChatBot(loaded));
}

const alertsIn = (printed: string[]) => printed.filter((p) => p.includes('CRASH '));

describe('crash alerts', () => {
  it('a crash mid-decode on a ready server: one alert with class, root lines and findings', async () => {
    const control = join(userDir('glm-ctl-'), 'control');
    writeFileSync(control, '', { mode: 0o666 });
    const b = chatBot({ STANDIN_CONTROL: control });
    const port = await freePort();
    const r = await b.run(`launch small --port ${port}`);
    expect(r.exitCode ?? 0, b.said.join('\n')).toBe(0);
    // The server serves; now the next request NaNs in decode, as the seeds' GLM-5 did.
    writeFileSync(control, 'nan_decode\n');
    const a = b.app.engine.attempts.activeOn('gpu')!;
    await postGenerate(b.app, 'gpu', port);
    await until(() => alertsIn(b.printed).length > 0, 20_000);
    await b.app.delivery!.flush(5000);
    const alerts = alertsIn(b.printed);
    expect(alerts).toHaveLength(1);
    const alert = alerts[0]!;
    expect(alert).toMatch(/CRASH nan_in_sampling during decode: attempt #1 small on gpu \(launched by U-tester\)/);
    expect(alert).toMatch(/root lines:/);
    expect(alert).toMatch(/probability tensor contains either/);
    expect(alert).toMatch(/findings: .*FINDINGS\.md:\d+-\d+ {2}.*NaN in decode/);
    // Why it was decided, and the public reports that look like it (the shipped corpus).
    expect(alert).toMatch(/why: signature nan-probability-tensor matched line \d+ \(confidence [0-9.]+\)/);
    expect(alert).toMatch(/looks like [\w.-]+\/[\w.-]+#\d+: .+ \((open|closed|merged)\)/);
    const stored = b.app.engine.attempts.get(a.id)?.classification as { reason?: string } | null;
    expect(stored?.reason).toContain('nan-probability-tensor');
    // The alert is told as soon as the crash is read (before the server's exit); the attempt closes at the exit.
    await until(() => b.app.engine.attempts.get(a.id)?.active === false, 20_000);
    expect(b.app.engine.attempts.get(a.id)).toMatchObject({ status: 'crashed', active: false });
    // The parent message was updated to say so, and the alert went into its thread.
    expect(b.printed.some((p) => /attempt #1 small on gpu by U-tester: crashed \(nan_in_sampling\)/.test(p))).toBe(
      true,
    );
    expect(alert.startsWith('  | ')).toBe(true);
  });

  it('sshd killed and restarted during a launch: the crash written meanwhile is alerted exactly once', async () => {
    // glm5-attempt1 runs out of memory in CUDA graph capture; slow enough to take sshd away while it loads.
    const b = chatBot({ STANDIN_TIME_SCALE: '0.02' });
    const pending = b.run(`launch glm5-attempt1 --yes --port ${await freePort()}`);
    // Killed once the follower reads the log (a first milestone), so sshd goes away from under a live follow.
    await until(() => Boolean(b.app.engine.attempts.activeOn('gpu')?.lastMilestone), 20_000);
    await shared.sshd.stop();
    // The server runs on; it crashes while nobody can read its log.
    const a = b.app.engine.attempts.activeOn('gpu')!;
    // Gone or a zombie (kill -0 succeeds on a zombie nobody reaps, as in a container whose init does not).
    await until(() => !alive(a.pgid!), 30_000).catch(() => {});
    await shared.sshd.start();
    const r = await pending;
    expect(r.exitCode).toBe(1);
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    const alerts = alertsIn(b.printed);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatch(/CRASH cuda_oom during cuda_graph_capture: attempt #1 glm5-attempt1/);
    expect(b.app.outbox.counts().failed ?? 0).toBe(0);
    // The server may take up to 30 s to die unseen, then the follower reconnects with backoff: a bound, not a timing.
  }, 75_000);

  it("sshd killed before the follower's first stream is up: the launch still follows its log to the crash", async () => {
    // The host is reached through a loopback TCP relay (a bastion's port forward). Once the server's process group
    // is recorded, a new connection (the follower's first stream) is let through only from sshd to the bot: sshd's
    // banner arrives, the bot's handshake waits, and sshd is killed right then, closing the connection cleanly
    // (FIN) mid-handshake; that once left the launch waiting forever. Twice, to show it is not a lucky timing.
    let holding = false;
    let held: Promise<void> | undefined;
    const relay = createNetServer((sock) => {
      sock.on('error', () => {});
      const up = connect(shared.sshd.port, '127.0.0.1');
      up.on('error', () => sock.end());
      up.on('close', () => sock.end());
      sock.on('close', () => up.destroy());
      if (holding) {
        // The bot's bytes stay here; sshd's banner goes through.
        sock.pause();
        held = new Promise((r) => up.once('data', (d) => sock.write(d, () => r())));
        return;
      }
      sock.pipe(up).pipe(sock);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    shared.later(() => void relay.close());
    const port = (relay.address() as { port: number }).port;
    const known = join(userDir('glm-relay-'), 'known_hosts');
    writeFileSync(known, `[127.0.0.1]:${port} ${shared.sshd.hostKeyPub}\n`);
    for (let i = 0; i < 2; i++) {
      const loaded = testConfig(shared.sshd, { ...freshDirs(), env: { STANDIN_TIME_SCALE: '0.005' } });
      Object.assign(loaded.config.hosts.gpu!.ssh!, { port, known_hosts: known });
      const b = shared.keep(makeChatBot(loaded));
      const pending = b.run(`launch glm5-attempt1 --yes --port ${await freePort()}`);
      // Polled between event-loop turns: the follower's connection is made right after the process group is known.
      const end = Date.now() + 20_000;
      while (!b.app.engine.attempts.activeOn('gpu')?.pgid) {
        if (Date.now() > end) throw new Error('the launch never started its server');
        await new Promise((r) => setImmediate(r));
      }
      holding = true;
      await until(() => held !== undefined, 10_000);
      await held;
      await shared.sshd.stop();
      holding = false;
      held = undefined;
      await shared.sshd.start();
      const r = await pending;
      expect(r.exitCode, `round ${i}: ${r.text}`).toBe(1);
      expect(r.text).toMatch(/cuda_oom during cuda_graph_capture/);
      await b.app.engine.notifier!.idle();
      await b.app.delivery!.flush(5000);
      expect(alertsIn(b.printed), `round ${i}`).toHaveLength(1);
    }
  }, 60_000);

  it('the same crash again bumps the count on the first alert instead of posting a new one', async () => {
    const b = chatBot({});
    for (let i = 0; i < 2; i++) {
      const r = await b.run(`launch glm5-attempt3 --yes --port ${await freePort()}`);
      expect(r.exitCode).toBe(1);
    }
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    const alerts = alertsIn(b.printed);
    // One alert post, then the same alert re-rendered with its count, plus a pointer in the second attempt's thread.
    expect(alerts.filter((x) => !/seen \d+ times/.test(x))).toHaveLength(1);
    expect(alerts.some((x) => /seen 2 times/.test(x))).toBe(true);
    expect(b.printed.some((p) => /same crash as attempt #1 \(backend_assertion/.test(p))).toBe(true);
  });

  it('a repeat names the new attempt and the first; what changed is against a good run of the same model only', async () => {
    const b = chatBot({});
    // A good run of another model: nothing to compare GLM-5 with.
    expect((await b.run(`launch small --no-check --port ${await freePort()}`)).exitCode ?? 0).toBe(0);
    await b.run('stop');
    for (let i = 0; i < 2; i++)
      expect((await b.run(`launch glm5-attempt3 --yes --port ${await freePort()}`)).exitCode).toBe(1);
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    const alerts = alertsIn(b.printed);
    const first = alerts.find((x) => !/seen \d+ times/.test(x))!;
    expect(first).toMatch(/CRASH backend_assertion during .*: attempt #2 glm5-attempt3/);
    expect(first).toMatch(/what changed: no earlier good attempt of lukealonso\/GLM-5-NVFP4 on gpu to compare with/);
    expect(alerts.join('\n')).not.toMatch(/changed from last good attempt #1 \(small\)/);
    const repeat = alerts.find((x) => /seen 2 times/.test(x))!;
    expect(repeat).toMatch(
      /attempt #3 glm5-attempt3 on gpu \(launched by U-tester\) \(seen 2 times; first in attempt #2\)/,
    );
  });

  it('a stall in CUDA graph capture is reported as a hang and the server is left running', async () => {
    const b = chatBot({ STANDIN_SCENARIO: 'stall:cuda_graph_capture' }, freshDirs(), { stall_s: 1 });
    const r = await b.run(`launch small --port ${await freePort()}`);
    expect(r.exitCode).toBe(1);
    expect(r.text).toMatch(/^hung: attempt #1 \(small\) on gpu: no progress for .* during cuda_graph_capture/);
    expect(b.app.engine.attempts.activeOn('gpu')?.id).toBe(1);
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    expect(alertsIn(b.printed)[0]).toMatch(/CRASH watchdog_timeout during cuda_graph_capture/);
  });
});
