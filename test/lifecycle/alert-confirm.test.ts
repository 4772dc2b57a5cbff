// A crash read in a ready server's log is confirmed by the server itself before it is told (early-alert.ts): over a
// real sshd and the stand-in, a server that logs a crash-looking traceback and serves on gets no crash alert, an
// `error_survived` event, and stays ready; the same server dying after it is told once, at the exit, with the
// traceback's class; a server whose crash kills it is told early as before, its alert-latency sample from the log.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Diagnosis } from '../../src/logs/diagnosis.ts';
import { createBotMetrics } from '../../src/metrics/bot.ts';
import { serveMetrics } from '../../src/metrics/serve.ts';
import { appendAndSettle, freshDirs, makeChatBot, postGenerate, testConfig, until } from '../helpers/app.ts';
import { freePort, userDir } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
const crashAlerts = (printed: string[]) => printed.filter((p) => p.includes('CRASH '));
// The stand-in's thread_traceback (standin/messages.mjs helperThreadTraceback): its root line, as the classifier names it.
const ROOT = 'ConnectionRefusedError: [Errno 111] Connection refused';

/** A long-lived chat bot with a ready `small` server whose stand-in reads the control file it returns. */
async function readyServer() {
  const control = join(userDir('glm-ctl-'), 'control');
  writeFileSync(control, '', { mode: 0o666 });
  const b = shared.keep(makeChatBot(testConfig(shared.sshd, { ...freshDirs(), env: { STANDIN_CONTROL: control } })));
  const metrics = createBotMetrics(b.app.engine);
  b.app.engine.metrics = metrics;
  const server = await serveMetrics(metrics, () => true, 0);
  shared.later(() => server.close());
  const scrape = async () => (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
  const port = await freePort();
  const r = await b.run(`launch small --port ${port}`);
  expect(r.exitCode ?? 0, b.said.join('\n')).toBe(0);
  return { b, control, port, scrape, id: b.app.engine.attempts.activeOn('gpu')!.id };
}

/** A helper thread's traceback (survived by a serving SGLang) ending in `root`. */
const helperTraceback = (root: string) =>
  [
    'Exception in thread Thread-3 (push_metrics):',
    'Traceback (most recent call last):',
    '  File "/usr/lib/python3.12/threading.py", line 1075, in _bootstrap_inner',
    '    self.run()',
    root,
  ].join('\n');

/** The stand-in exits 1 with nothing more in its log; once the attempt has ended and every post is out: its alerts. */
async function exitQuietly(b: Awaited<ReturnType<typeof readyServer>>['b'], control: string, id: number) {
  writeFileSync(control, 'exit_quietly\n');
  await until(() => b.app.engine.attempts.get(id)?.active === false, 20_000);
  await b.app.engine.notifier!.idle();
  await b.app.delivery!.flush(5000);
  return crashAlerts(b.printed);
}

const kinds = (b: { app: { engine: { attempts: { events(id: number): Array<{ kind: string }> } } } }, id: number) =>
  b.app.engine.attempts.events(id).map((e) => e.kind);

describe('a crash in a ready server is confirmed before it is told', () => {
  it('a traceback it serves on: no crash alert, an error_survived event, still ready', async () => {
    const { b, control, port, id } = await readyServer();
    writeFileSync(control, 'thread_traceback\n');
    // The request that makes the stand-in log the traceback is answered as always.
    const res = (await postGenerate(b.app, 'gpu', port)) as { status?: number } | undefined;
    expect(res?.status).toBe(200);
    await until(() => kinds(b, id).includes('error_survived'), 20_000);
    const ev = b.app.engine.attempts.events(id).find((e) => e.kind === 'error_survived')!;
    expect(ev.data).toMatchObject({ category: 'other', root: ROOT });
    expect((ev.data as { why: string }).why).toMatch(/its process is alive and \/health_generate answered 200/);
    expect(kinds(b, id)).not.toContain('crash_seen');
    expect(b.app.engine.attempts.get(id)).toMatchObject({ active: true, status: 'ready', classification: null });
    // It serves on, and a second traceback of the same kind is not asked about (nor recorded) again.
    expect(((await postGenerate(b.app, 'gpu', port)) as { status?: number } | undefined)?.status).toBe(200);
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    expect(crashAlerts(b.printed)).toEqual([]);
    expect(kinds(b, id).filter((k) => k === 'error_survived')).toHaveLength(1);
    expect(kinds(b, id)).not.toContain('crash_seen');
    // Nothing told, but not invisible: status has one quiet line, attempts a count.
    const line = (await b.run('status')).text.split('\n').find((l) => l.startsWith(`attempt #${id} survived`));
    expect(line).toMatch(/^attempt #\d+ survived 1 error \(the last at \d{4}-\d\d-\d\d \d\d:\d\d UTC: other: /);
    expect(line).toContain(`: other: ${ROOT})`);
    const json = JSON.parse((await b.run('status --json')).text) as { hosts: Array<{ survived: unknown }> };
    expect(json.hosts[0]!.survived).toMatchObject({ count: 1, category: 'other', root: ROOT });
    const attempts = (await b.run('attempts')).text.split('\n');
    expect(attempts[0]).toMatch(/\boutcome +survived$/);
    expect(attempts[2]).toMatch(new RegExp(`^${id} .* ready +1$`));
    expect(JSON.parse((await b.run('attempts --json')).text)).toMatchObject([{ id, survived: 1 }]);
    const probe = await b.run('probe');
    expect(probe.exitCode).toBe(0);
    expect(probe.text).toMatch(/^ {2}survived: {4}1 error \(the last at .* UTC: other: /m);
    expect(probe.text).toContain(`: other: ${ROOT})`);
  });

  it("a survived error's root line is shown redacted and shortened, in status and in the alert", async () => {
    const { b, control, id } = await readyServer();
    // A helper thread's traceback whose root line names a token (a URL it pushed to), long enough to be shortened.
    const token = `hf_${'A1b2C3d4E5'.repeat(3)}`;
    const root = `RuntimeError: push to https://hub.example/api/metrics?token=${token} was refused by the collector after ${'30 retries, '.repeat(12)}giving up`;
    const tb = [
      'Exception in thread Thread-3 (push_metrics):',
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.12/threading.py", line 1075, in _bootstrap_inner',
      '    self.run()',
      '  File "/usr/lib/python3.12/threading.py", line 1012, in run',
      '    self._target(*self._args, **self._kwargs)',
      root,
    ].join('\n');
    await appendAndSettle(b.app, id, 0, tb);
    await until(() => kinds(b, id).includes('error_survived'), 20_000);
    const line = (await b.run('status')).text.split('\n').find((l) => l.startsWith(`attempt #${id} survived`));
    expect(line).toMatch(
      /: other: RuntimeError: push to https:\/\/hub\.example\/api\/metrics\?token=\[REDACTED\] was refused/,
    );
    expect(line).toMatch(/…\)$/);
    expect(line!.length).toBeLessThan(220);
    expect(line).not.toContain('hf_');
    // Then it dies: the alert links the crash to what it survived, redacted alike.
    const alerts = await exitQuietly(b, control, id);
    expect(alerts).toHaveLength(1);
    // Its root is the error it had served on: not said to be survived (a later test has an alert that names a survived error).
    expect(alerts[0]).toContain('RuntimeError: push to https://hub.example/api/metrics?token=[REDACTED] was refused');
    expect(alerts[0]).not.toContain('survived before this');
    expect(alerts.join('\n')).not.toContain(token.slice(0, 12));
  });

  it('the same, then the process exits 1: one crash alert, at the exit, with the traceback as its root', async () => {
    const { b, control, port, id } = await readyServer();
    writeFileSync(control, 'thread_traceback\n');
    await postGenerate(b.app, 'gpu', port);
    await until(() => kinds(b, id).includes('error_survived'), 20_000);
    writeFileSync(control, 'exit_quietly\n');
    await until(() => b.app.engine.attempts.get(id)?.active === false, 20_000);
    const a = b.app.engine.attempts.get(id)!;
    expect(a).toMatchObject({ status: 'crashed', outcome: 'other', exitCode: 1 });
    expect((a.classification as Diagnosis).evidence[0]?.text).toBe(ROOT);
    expect(kinds(b, id)).not.toContain('crash_seen');
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    const alerts = crashAlerts(b.printed);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatch(/CRASH other .*attempt #1 small on gpu/);
    expect(alerts[0]).toContain(ROOT);
    // It did not survive the error it died of: the alert does not say it did (the ledger still has the event).
    expect(alerts[0]).not.toContain('survived before this');
    expect(kinds(b, id)).toContain('error_survived');
  });

  it('a different error within the quiet window is counted and named; a repeat is not counted again', async () => {
    const { b, control, id } = await readyServer();
    const status = async () =>
      (await b.run('status')).text.split('\n').find((l) => l.startsWith(`attempt #${id} survived`));
    await appendAndSettle(b.app, id, 0, helperTraceback('RuntimeError: first helper failure A'));
    const count = () => b.app.engine.attempts.survived([id]).get(id)?.count;
    await until(() => count() === 1, 20_000);
    await appendAndSettle(b.app, id, 0, helperTraceback('ValueError: second, different helper failure B'));
    await until(() => count() === 2, 20_000);
    expect(await status()).toMatch(/survived 2 different errors \(the last at .* UTC: other: ValueError: second, /);
    // A repeats: nothing more to count (it is not even asked about again).
    await appendAndSettle(b.app, id, 0, helperTraceback('RuntimeError: first helper failure A'));
    await b.app.engine.notifier!.idle();
    expect(await status()).toMatch(/survived 2 different errors \(.*helper failure B\)$/);
    // One event for the window, holding both.
    expect(kinds(b, id).filter((k) => k === 'error_survived')).toHaveLength(1);
    expect(JSON.parse((await b.run('status --json')).text).hosts[0].survived).toMatchObject({ count: 2 });
    // It then dies (after B again).
    await appendAndSettle(b.app, id, 0, helperTraceback('ValueError: second, different helper failure B'));
    const alerts = await exitQuietly(b, control, id);
    expect(alerts).toHaveLength(1);
    // The log's first failure is its root: A. The alert leaves A out of what was survived and names B.
    expect((b.app.engine.attempts.get(id)!.classification as Diagnosis).evidence[0]?.text).toBe(
      'RuntimeError: first helper failure A',
    );
    expect(alerts[0]).toMatch(
      /^[ |]*1 error was survived before this \(the last at .* UTC: other: ValueError: second, different helper failure B\)$/m,
    );
  });

  it('a crash that kills it: told early, once, its latency sample from the log line', async () => {
    const { b, control, port, id, scrape } = await readyServer();
    writeFileSync(control, 'nan_decode\n');
    await postGenerate(b.app, 'gpu', port);
    await until(() => b.app.engine.attempts.get(id)?.active === false, 20_000);
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    expect(kinds(b, id)).toContain('crash_seen');
    expect(kinds(b, id)).not.toContain('error_survived');
    const alerts = crashAlerts(b.printed);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatch(/CRASH nan_in_sampling during decode/);
    const m = await scrape();
    expect(m).toMatch(/^glm_alert_latency_seconds_count\{from="log"\} 1$/m);
    expect(m).not.toMatch(/^glm_alert_latency_seconds_count\{from="exit"\}/m);
  });
});
