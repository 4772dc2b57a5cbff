// The bot's /metrics after real crashes over sshd and the stand-in: the alert-latency histogram gets its sample (from
// the crash line read, or from the end found by a reconcile), and the other families say what happened.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBotMetrics } from '../../src/metrics/bot.ts';
import { serveMetrics } from '../../src/metrics/serve.ts';
import { freshDirs, makeChatBot, postGenerate, testConfig, until } from '../helpers/app.ts';
import { alive } from '../helpers/proc.ts';
import { freePort, userDir } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

/** A long-lived chat bot serving /metrics on an ephemeral port, as the session with GLM_METRICS_PORT does. */
async function scrapedBot(dirs: { workdir: string; dataDir: string }, env: Record<string, string>) {
  const b = shared.keep(makeChatBot(testConfig(shared.sshd, { ...dirs, env })));
  const metrics = createBotMetrics(b.app.engine);
  b.app.engine.metrics = metrics;
  const server = await serveMetrics(metrics, () => true, 0);
  shared.later(() => server.close());
  const scrape = async () => (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
  return { ...b, scrape };
}

/** A crash armed by the stand-in's control file: the next request NaNs in decode. */
function control(): string {
  const file = join(userDir('glm-ctl-'), 'control');
  writeFileSync(file, '', { mode: 0o666 });
  return file;
}

describe('/metrics after a real crash', () => {
  it('a crash read from the log: one alert-latency sample from=log, and the attempt, SSH and command families', async () => {
    const ctl = control();
    const b = await scrapedBot(freshDirs(), { STANDIN_CONTROL: ctl });
    const port = await freePort();
    expect((await b.run(`launch small --port ${port}`)).exitCode ?? 0, b.said.join('\n')).toBe(0);
    expect(await b.scrape()).not.toMatch(/^glm_alert_latency_seconds_count/m);
    const a = b.app.engine.attempts.activeOn('gpu')!;
    writeFileSync(ctl, 'nan_decode\n');
    await postGenerate(b.app, 'gpu', port);
    await until(() => b.printed.some((p) => p.includes('CRASH ')), 20_000);
    // The alert is told when the crash is read; the attempt (glm_attempts) is closed at the server's exit, after,
    // and its message updated then: flushed once that is queued too.
    await until(() => b.app.engine.attempts.get(a.id)?.active === false, 20_000);
    await b.app.delivery!.flush(5000);
    const m = await b.scrape();
    expect(m).toMatch(/^# TYPE glm_alert_latency_seconds histogram$/m);
    expect(m).toMatch(/^glm_alert_latency_seconds_count\{from="log"\} 1$/m);
    expect(m).toMatch(/^glm_alert_latency_seconds_bucket\{le="\+Inf",from="log"\} 1$/m);
    const sum = Number(/^glm_alert_latency_seconds_sum\{from="log"\} (\S+)$/m.exec(m)?.[1]);
    // At least the settle time the early alert waits for the rest of the traceback; well under the bench's bound.
    expect(sum).toBeGreaterThan(0.1);
    expect(m).not.toMatch(/^glm_alert_latency_seconds_count\{from="exit"\}/m);
    // The other families the issue lists, for the same events.
    expect(m).toMatch(/^glm_attempts\{outcome="nan_in_sampling",crash_class="nan_in_sampling"\} 1$/m);
    expect(m).toMatch(/^glm_command_duration_seconds_count\{command="launch",result="ok"\} 1$/m);
    expect(m).toMatch(/^glm_ssh_connections_opened\{host="gpu"\} [1-9]\d*$/m);
    expect(m).toMatch(/^glm_ssh_reconnects\{host="gpu"\} \d+$/m);
    expect(m).toMatch(/^glm_outbox_messages\{status="sent"\} [1-9]\d*$/m);
    expect(m).toMatch(/^glm_outbox_oldest_pending_age_seconds 0$/m);
  }, 60_000);

  it('a crash nobody watched, found by status: the sample counts from the end being seen (from=exit)', async () => {
    const dirs = freshDirs();
    const ctl = control();
    // Launched by a one-shot bot that then goes away: the server runs on, unwatched.
    const first = shared.bot({ dirs, env: { STANDIN_CONTROL: ctl } });
    const port = await freePort();
    expect((await first.run(`launch small --port ${port}`)).exitCode, first.said.join('\n')).toBe(0);
    const a = first.app.engine.attempts.activeOn('gpu')!;
    writeFileSync(ctl, 'nan_decode\n');
    await postGenerate(first.app, 'gpu', port);
    await first.app.close();
    // The server crashed: its process group leader is gone (or a zombie nobody reaps).
    await until(() => !alive(a.pgid!), 20_000);
    const b = await scrapedBot(dirs, { STANDIN_CONTROL: ctl });
    await b.run('status');
    expect(b.app.engine.attempts.get(a.id)?.active).toBe(false);
    await b.app.engine.notifier!.idle();
    await b.app.delivery!.flush(5000);
    expect(b.printed.some((p) => p.includes('CRASH nan_in_sampling'))).toBe(true);
    const m = await b.scrape();
    expect(m).toMatch(/^glm_alert_latency_seconds_count\{from="exit"\} 1$/m);
    expect(m).not.toMatch(/^glm_alert_latency_seconds_count\{from="log"\}/m);
  }, 60_000);
});
