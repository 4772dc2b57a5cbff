// Talking to the bot the way Slack does: form bodies signed with HMAC-SHA256 over `v0:timestamp:body`, posted to the
// bot's HTTP endpoint on 127.0.0.1; and a bot whose Web API client points at the local Slack stand-in.
import { createHmac } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Clock } from '../../src/clock.ts';
import { type LoadedConfig, PACKAGE_ROOT, validate } from '../../src/config/load.ts';
import type { RemoteHost } from '../../src/hosts/types.ts';
import { createLogger } from '../../src/logger.ts';
import { type SlackFace, startSlackFace } from '../../src/slack/face.ts';
import type { FakeSlack } from './fake-slack.ts';

export const SECRET = 'test-signing-secret';
export const OPS = 'COPS';

export const ACCESS = {
  users: { UADMIN: 'admin', UOPER: 'operator', UVIEW: 'viewer' },
  groups: { SGPU: 'operator' },
  channels: [OPS, 'CDEV'],
};

export function sign(body: string, ts: number, secret = SECRET): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
}

export interface Posted {
  status: number;
  text: string;
  ms: number;
}

export async function postSigned(
  port: number,
  body: string,
  opts: { ts?: number; signature?: string | null; secret?: string } = {},
): Promise<Posted> {
  const ts = opts.ts ?? Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    'x-slack-request-timestamp': String(ts),
  };
  const signature = opts.signature === undefined ? sign(body, ts, opts.secret) : opts.signature;
  if (signature !== null) headers['x-slack-signature'] = signature;
  const t = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/slack/events`, { method: 'POST', body, headers });
  const text = await res.text();
  return { status: res.status, text, ms: performance.now() - t };
}

let seq = 0;

export function slashBody(fake: FakeSlack, text: string, user = 'UOPER', channel = OPS): { body: string; rid: string } {
  const rid = `cmd${++seq}`;
  const body = new URLSearchParams({
    token: 'legacy-unused',
    team_id: 'T1',
    team_domain: 'test',
    channel_id: channel,
    channel_name: 'ops',
    user_id: user,
    user_name: 'someone',
    command: '/glm',
    text,
    api_app_id: 'A1',
    response_url: fake.responseUrl(rid),
    trigger_id: `trig${seq}`,
  }).toString();
  return { body, rid };
}

export function clickBody(
  fake: FakeSlack,
  actionId: string,
  value: string,
  user = 'UOPER',
  channel = OPS,
): { body: string; rid: string; trigger: string } {
  const rid = `act${++seq}`;
  const trigger = `trig${seq}`;
  const payload = {
    type: 'block_actions',
    team: { id: 'T1', domain: 'test' },
    user: { id: user, username: 'someone', team_id: 'T1' },
    api_app_id: 'A1',
    token: 'legacy-unused',
    container: { type: 'message', channel_id: channel, message_ts: '1700000000.000001' },
    trigger_id: trigger,
    channel: { id: channel, name: 'ops' },
    response_url: fake.responseUrl(rid),
    actions: [
      {
        type: 'button',
        action_id: actionId,
        block_id: 'b1',
        value,
        text: { type: 'plain_text', text: actionId },
        action_ts: '1700000001.000000',
      },
    ],
  };
  return { body: new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), rid, trigger };
}

export function submitBody(callbackId: string, privateMetadata: string, user = 'UOPER'): string {
  const payload = {
    type: 'view_submission',
    team: { id: 'T1', domain: 'test' },
    user: { id: user, username: 'someone', team_id: 'T1' },
    api_app_id: 'A1',
    token: 'legacy-unused',
    trigger_id: `trig${++seq}`,
    view: {
      id: 'V1',
      type: 'modal',
      callback_id: callbackId,
      private_metadata: privateMetadata,
      state: { values: {} },
      hash: 'h',
      title: { type: 'plain_text', text: 'x' },
      blocks: [],
    },
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

export async function waitFor<T>(what: string, f: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function logSink(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  return {
    lines,
    stream: new Writable({
      write(chunk, _e, cb) {
        lines.push(String(chunk));
        cb();
      },
    }),
  };
}

/** A config with one local host (no SSH): for tests that exercise Slack delivery, not servers. */
export function localConfig(dataDir: string, extra: Record<string, unknown> = {}): LoadedConfig {
  const workdir = mkdtempSync(join(tmpdir(), 'glm-slack-host-'));
  const config = validate(
    { hosts: { gpu: { local: true, workdir } }, slack: { channel: OPS, port: 0 }, access: ACCESS, ...extra },
    'test config',
  );
  return { config, source: 'test config', dataDir, profilesDir: join(PACKAGE_ROOT, 'profiles'), defaultHost: 'gpu' };
}

export async function startFace(
  fake: FakeSlack,
  loaded: LoadedConfig,
  opts: { updateIntervalMs?: number; maxBackoffMs?: number; logLevel?: string; clock?: Clock } = {},
): Promise<SlackFace & { logLines: string[] }> {
  const sink = logSink();
  const face = await startSlackFace({
    loaded,
    settings: { botToken: 'xoxb-test-token', transport: 'http', signingSecret: SECRET, apiUrl: fake.apiUrl },
    // The bot's own logger (its redaction included), writing to the test's sink.
    log: createLogger({ level: opts.logLevel ?? 'debug', destination: sink.stream }),
    listenHost: '127.0.0.1',
    port: 0,
    updateIntervalMs: opts.updateIntervalMs ?? 150,
    maxBackoffMs: opts.maxBackoffMs ?? 1000,
    clock: opts.clock,
  });
  return Object.assign(face, { logLines: sink.lines });
}

/** A face as startFace returns it (with the lines its logger wrote). */
export type Face = Awaited<ReturnType<typeof startFace>>;

/**
 * A command's answer through its response_url: the newest one (which replaced "working on it") that matches `match`,
 * as its fallback text and the text of its blocks.
 */
export async function answerTo(fake: FakeSlack, rid: string, match?: RegExp): Promise<string> {
  const r = await waitFor(`answer to ${rid}`, () =>
    fake.responses
      .filter((x) => x.id === rid)
      .reverse()
      .find((x) => !match || match.test(String(x.body.text) + blockText(x.body.blocks))),
  );
  return `${r.body.text}\n${blockText(r.body.blocks)}`;
}

/** All text a block list shows, flattened (for assertions about what a person sees). */
export function blockText(blocks: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(blocks);
  return out.join('\n');
}

/** Every argv the bot runs on `host` from now on, recorded at the exec chokepoint (the real exec still runs). */
export function recordExecs(host: RemoteHost): string[][] {
  const execs: string[][] = [];
  const exec = host.exec.bind(host);
  host.exec = (argv, opts) => {
    execs.push([...argv]);
    return exec(argv, opts);
  };
  return execs;
}
