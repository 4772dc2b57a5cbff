// Both ways Slack reaches the bot: Socket Mode (a WebSocket the bot opens; the stand-in plays Slack's end) and HTTP,
// here as the deployable process `glm slack` with its tokens in the environment, its health check and SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config/load.ts';
import { readSlackEnv } from '../../src/slack/env.ts';
import { startSlackFace } from '../../src/slack/face.ts';
import { freePort } from '../helpers/sshd.ts';
import { type FakeSlack, startFakeSlack } from './fake-slack.ts';
import { blockText, localConfig, logSink, OPS, postSigned, SECRET, slashBody, waitFor } from './helpers.ts';

const fakes: FakeSlack[] = [];
const procs: ChildProcess[] = [];
afterAll(async () => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  for (const f of fakes) await f.close();
});

describe('transport choice', () => {
  it('Socket Mode with an app token, HTTP with only a signing secret, a clear error with neither', () => {
    const base = { SLACK_BOT_TOKEN: 'xoxb-1' };
    expect(readSlackEnv({ ...base, SLACK_APP_TOKEN: 'xapp-1' }).transport).toBe('socket');
    // Both set: no silent pick (test/cli/oneshot.test.ts has the cases).
    expect(() => readSlackEnv({ ...base, SLACK_APP_TOKEN: 'xapp-1', SLACK_SIGNING_SECRET: 's' })).toThrow(/both/);
    expect(readSlackEnv({ ...base, SLACK_SIGNING_SECRET: 's' })).toMatchObject({
      transport: 'http',
      apiUrl: 'https://slack.com/api/',
    });
    expect(
      readSlackEnv({ ...base, SLACK_SIGNING_SECRET: 's', SLACK_API_URL: 'https://slack-gov.com/api' }).apiUrl,
    ).toBe('https://slack-gov.com/api/');
    expect(() => readSlackEnv(base)).toThrow(/set SLACK_APP_TOKEN .* or SLACK_SIGNING_SECRET/);
    expect(() => readSlackEnv({})).toThrow(/SLACK_BOT_TOKEN is not set/);
  });
});

describe('Socket Mode', () => {
  it('connects with the app token, gets a /glm command over the socket and acks it there', async () => {
    const fake = await startFakeSlack();
    fakes.push(fake);
    const sink = logSink();
    const face = await startSlackFace({
      loaded: localConfig(mkdtempSync(join(tmpdir(), 'glm-data-'))),
      settings: {
        botToken: 'xoxb-test',
        transport: 'socket',
        appToken: 'xapp-test',
        apiUrl: fake.apiUrl,
      },
      log: pino({ level: 'debug' }, sink.stream),
      listenHost: '127.0.0.1',
      port: 0,
      updateIntervalMs: 100,
    });
    try {
      await waitFor('socket connected', () => fake.socketClients() === 1);
      expect(fake.named('apps.connections.open')[0]!.auth).toBe('Bearer xapp-test');
      const health = await fetch(`http://127.0.0.1:${face.port}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ ok: true, transport: 'socket' });

      const env = fake.sendEnvelope('slash_commands', {
        command: '/glm',
        text: 'help launch',
        user_id: 'UVIEW',
        channel_id: OPS,
        team_id: 'T1',
        response_url: fake.responseUrl('sock1'),
        trigger_id: 't',
        api_app_id: 'A1',
      });
      const ack = await waitFor('ack over the socket', () => fake.socketAcks.find((a) => a.envelope_id === env));
      expect(JSON.stringify(ack.payload)).toContain('/glm help launch');
      const r = await waitFor('answer', () => fake.responses.find((x) => x.id === 'sock1'));
      expect(blockText(r.body.blocks)).toMatch(/usage: launch PROFILE/);
    } finally {
      await face.stop();
    }
  });
});

describe('glm slack (the process)', () => {
  it('starts from the environment, answers signed requests, reports health, and stops on SIGTERM', async () => {
    const fake = await startFakeSlack();
    fakes.push(fake);
    const dir = mkdtempSync(join(tmpdir(), 'glm-proc-'));
    const port = await freePort();
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      [
        `data_dir: ${join(dir, 'data')}`,
        'hosts:',
        '  gpu:',
        '    local: true',
        `    workdir: ${join(dir, 'host')}`,
        'slack:',
        `  channel: ${OPS}`,
        `  port: ${port}`,
        'access:',
        `  channels: [${OPS}]`,
        '  users: { UVIEW: viewer }',
        '',
      ].join('\n'),
    );
    const proc = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'glm.js'), 'slack'], {
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        GLM_CONFIG: config,
        GLM_HTTP_HOST: '127.0.0.1',
        SLACK_BOT_TOKEN: 'xoxb-proc',
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: fake.apiUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    procs.push(proc);
    let out = '';
    proc.stderr?.on('data', (d) => {
      out += String(d);
    });
    await waitFor('healthz', () => /Slack face started/.test(out) || proc.exitCode !== null, 20_000);
    expect(proc.exitCode, out).toBeNull();
    // The start line says which mode runs and where Slack's requests go.
    expect(out).toContain(`Slack face started: HTTP mode, Slack's requests to http://127.0.0.1:${port}/slack/events`);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(await health.json()).toMatchObject({ ok: true, transport: 'http', slack: 'authenticated' });
    expect(fake.named('auth.test')[0]!.auth).toBe('Bearer xoxb-proc');

    const { body, rid } = slashBody(fake, 'profiles', 'UVIEW');
    expect((await postSigned(port, body)).status).toBe(200);
    const r = await waitFor('answer', () => fake.responses.find((x) => x.id === rid));
    expect(blockText(r.body.blocks)).toMatch(/glm5-nvfp4/);
    expect((await postSigned(port, body, { secret: 'wrong' })).status).toBe(401);

    // Prometheus metrics next to /healthz: the command just run, the ledger's outbox, the process.
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = await metrics.text();
    expect(m).toMatch(/^glm_command_duration_seconds_count\{command="profiles",result="ok"\} 1$/m);
    expect(m).toMatch(/^# TYPE glm_outbox_oldest_pending_age_seconds gauge$/m);
    expect(m).toMatch(/^glm_outbox_oldest_pending_age_seconds 0$/m);
    expect(m).toMatch(/^# TYPE glm_attempts gauge$/m);
    expect(m).toMatch(/^glm_process_resident_memory_bytes \d+/m);
    expect(m).not.toContain('xoxb-proc');

    proc.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
    expect(code).toBe(0);
    expect(out).not.toContain('xoxb-proc');
  }, 40_000);
});
