// A server whose log ends on a failure record alone (no traceback, signature or death) and which then exited 0 by
// itself survived that record: the attempt is closed `exited`, not `crashed` (showsCrash, src/logs/diagnosis.ts).
// Here the unwatched close (the server ended while no bot ran, and the next bot reads its log and the host's record),
// and a followed server: a record it serves on is no crash and is not told (crashedBeforeExit); one it then exits 1
// after is its crash, told once, at the exit. A death line read while the server still serves is confirmed with the
// server first (early-alert.ts) and told at the exit too.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Diagnosis } from '../../src/logs/diagnosis.ts';
import { appendAndSettle, freshDirs, makeBot, makeChatBot, postGenerate, testConfig, until } from '../helpers/app.ts';
import { freePort, userDir } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
const RECORD = '[2025-11-05 12:01:00] Failed to push metrics to the collector: connection refused';
const crashAlerts = (printed: string[]) => printed.filter((p) => p.includes('CRASH '));

/** A long-lived bot with a ready `small` server whose stand-in reads the control file it returns. */
async function readyServer() {
  const control = join(userDir('glm-ctl-'), 'control');
  writeFileSync(control, '', { mode: 0o666 });
  const b = shared.keep(makeChatBot(testConfig(shared.sshd, { ...freshDirs(), env: { STANDIN_CONTROL: control } })));
  const port = await freePort();
  const r = await b.run(`launch small --port ${port}`);
  expect(r.exitCode ?? 0, b.said.join('\n')).toBe(0);
  return { b, control, port, id: b.app.engine.attempts.activeOn('gpu')!.id };
}

describe('an attempt that ended on a failure record alone', () => {
  it('is exited when its server exited 0 on a stop from outside the bot, as that stop, not a crash', async () => {
    const dirs = freshDirs();
    const cfg = testConfig(shared.sshd, dirs);
    const first = shared.keep(makeBot(cfg, dirs));
    expect((await first.run(`launch small --gpus 3 --port ${await freePort()}`)).exitCode).toBe(0);
    const a = first.app.engine.attempts.get(1)!;
    await first.app.close();
    // The record, while it still served: it served on, until the stop (the server's `SIGTERM received`).
    const record = '[2025-11-05 12:01:00] Failed to push metrics to the collector: connection refused';
    appendFileSync(a.logPath!, `${record}\n`);
    // The wrapper traps TERM and records the server's status; the server drains and exits 0.
    process.kill(-a.pgid!, 'SIGTERM');
    const exitFile = join(a.runDir!, 'exit');
    await until(() => existsSync(exitFile), 20_000);
    expect(readFileSync(exitFile, 'utf8').trim()).toBe('0');

    const restarted = shared.keep(makeBot(cfg, dirs));
    const r = await restarted.run('status --json');
    expect(r.exitCode, r.text).toBe(0);
    const closed = restarted.app.engine.attempts.get(1)!;
    expect(closed).toMatchObject({ active: false, status: 'exited', outcome: 'exited', exitCode: 0 });
    const d = closed.classification as Diagnosis;
    expect(d.category).toBe('none');
    expect(closed.outcomeDetail).toMatch(
      /^ended while the bot was not watching: stopped from outside the bot: the server logged a stop signal at line \d+ /,
    );
  });

  it('logged by a followed server that serves on: no alert, no crash_seen, still ready', async () => {
    const { b, port, id } = await readyServer();
    await appendAndSettle(b.app, id, 0, RECORD);
    // It answers a real request, and the attempt is what it was: ready, nothing told.
    const res = (await postGenerate(b.app, 'gpu', port)) as { status?: number } | undefined;
    expect(res?.status).toBe(200);
    expect(b.app.engine.attempts.events(id).map((e) => e.kind)).not.toContain('crash_seen');
    expect(b.app.engine.attempts.get(id)).toMatchObject({ active: true, status: 'ready', classification: null });
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    expect(crashAlerts(b.printed)).toEqual([]);
  });

  it('followed by an exit 1: told once, at the exit, with the record as evidence', async () => {
    const { b, control, id } = await readyServer();
    await appendAndSettle(b.app, id, 0, RECORD);
    expect(b.app.engine.attempts.events(id).map((e) => e.kind)).not.toContain('crash_seen');
    writeFileSync(control, 'exit_quietly\n');
    await until(() => b.app.engine.attempts.get(id)?.active === false, 20_000);
    const a = b.app.engine.attempts.get(id)!;
    expect(a).toMatchObject({ status: 'crashed', outcome: 'other', exitCode: 1 });
    expect((a.classification as Diagnosis).evidence.map((e) => e.text)).toContain(RECORD);
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    const alerts = crashAlerts(b.printed);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatch(/CRASH other .*attempt #1 small on gpu/);
    expect(alerts[0]).toContain('Failed to push metrics to the collector');
  });

  it('followed by a death line (Killed) while it still serves: not told then; once, at the exit', async () => {
    const { b, control, id } = await readyServer();
    await appendAndSettle(b.app, id, 0, `${RECORD}\nKilled`);
    // The log says a death, the server says otherwise (its process alive, /health_generate 200): no crash yet.
    await until(() => b.app.engine.attempts.events(id).some((e) => e.kind === 'error_survived'), 20_000);
    expect(b.app.engine.attempts.events(id).map((e) => e.kind)).not.toContain('crash_seen');
    expect(b.app.engine.attempts.get(id)).toMatchObject({ active: true, status: 'ready' });
    writeFileSync(control, 'exit_quietly\n');
    await until(() => b.app.engine.attempts.get(id)?.active === false, 20_000);
    const a = b.app.engine.attempts.get(id)!;
    expect(a).toMatchObject({ status: 'crashed', outcome: 'other', exitCode: 1 });
    // The classifier's view at the exit: the lines the server logged after the record took the record back, the
    // death stands.
    expect((a.classification as Diagnosis).evidence.map((e) => e.text)).toContain('Killed');
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    const alerts = crashAlerts(b.printed);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatch(/CRASH other .*attempt #1 small on gpu/);
  });

  it('followed by a real crash: told early, as that crash, once', async () => {
    const { b, control, port, id } = await readyServer();
    await appendAndSettle(b.app, id, 0, RECORD);
    writeFileSync(control, 'nan_decode\n');
    await postGenerate(b.app, 'gpu', port);
    await until(() => b.app.engine.attempts.events(id).some((e) => e.kind === 'crash_seen'), 20_000);
    const seen = b.app.engine.attempts.events(id).filter((e) => e.kind === 'crash_seen');
    expect(seen.map((e) => (e.data as { category: string }).category)).toEqual(['nan_in_sampling']);
    await until(() => b.app.engine.attempts.get(id)?.active === false, 20_000);
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    const alerts = crashAlerts(b.printed);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatch(/CRASH nan_in_sampling during decode/);
  });
});
