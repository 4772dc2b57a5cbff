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
import { freshDirs, makeChatBot, postGenerate, testConfig, until } from '../helpers/app.ts';
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
