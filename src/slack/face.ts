// The Slack face, wired: the bot (createApp) with the Slack ChatAdapter behind its outbox, a Bolt app on Socket Mode
// or HTTP (signatures verified by Bolt's HTTPReceiver), the /glm command and the buttons, and /healthz.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App as BoltApp, HTTPReceiver, SocketModeReceiver } from '@slack/bolt';
import { createGroupDirectory } from '../access/groups.ts';
import { createAccessPolicy } from '../access/policy.ts';
import { type App, type AppOptions, createApp } from '../app.ts';
import { ConfigError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { type BotMetrics, createBotMetrics } from '../metrics/bot.ts';
import { sendMetrics } from '../metrics/serve.ts';
import {
  onAutopilotStopClick,
  onCancelClick,
  onDraftClick,
  onLogsClick,
  onProbeClick,
  onReplaceClick,
  onStopClick,
  onStopConfirmed,
} from './actions.ts';
import { createSlackAdapter } from './adapter.ts';
import { ACTIONS } from './blocks.ts';
import { clientOptions, createClient } from './client.ts';
import { onSlashCommand } from './commands.ts';
import type { SlackSettings } from './env.ts';
import type { FaceDeps } from './face-deps.ts';
import { slackLogger } from './logger.ts';
import { createPendingStore } from './pending.ts';
import { createRequestGuard, MAX_BODY_BYTES } from './requests.ts';
import { REPLACE, STOP_MODAL } from './views.ts';

export interface SlackFaceOptions extends Omit<AppOptions, 'chat' | 'log'> {
  settings: SlackSettings;
  log: Logger;
  /** Listen address for /slack/events (HTTP mode) and /healthz; default 0.0.0.0 (a container's port). */
  listenHost?: string;
  /** Overrides slack.port from the config (tests: 0, an ephemeral port). */
  port?: number;
  /** Overrides slack.update_interval_s (tests). */
  updateIntervalMs?: number;
  maxBackoffMs?: number;
}

export interface SlackFace {
  glm: App;
  bolt: BoltApp;
  /** The bound port of the HTTP server (events in HTTP mode, /healthz always). */
  port: number;
  stop(): Promise<void>;
}

export async function startSlackFace(opts: SlackFaceOptions): Promise<SlackFace> {
  const { settings, log } = opts;
  // Config first: a missing slack: section is a config error, reported before anything starts.
  const loaded = opts.loaded ?? (await import('../config/load.ts')).loadConfig(opts.env);
  const slack = loaded.config.slack;
  if (!slack) {
    throw new ConfigError(loaded.source, [
      {
        path: 'slack',
        message: 'is required for the Slack face',
        fix: 'add slack: { channel: C0123ABCD } (the channel for attempt messages and alerts), and an access: section',
      },
    ]);
  }
  const timeoutMs = slack.timeout_s * 1000;
  const client = createClient(settings.botToken, { apiUrl: settings.apiUrl, timeoutMs, log });
  let metrics: BotMetrics | undefined;
  const adapter = createSlackAdapter({
    client,
    apiUrl: settings.apiUrl,
    timeoutMs,
    log: log.child({ part: 'slack-out' }),
    onCall: (method, result) => metrics?.slackCall(method, result),
  });
  const glm = createApp({
    ...opts,
    loaded,
    log,
    chat: {
      face: 'slack',
      adapter,
      channel: slack.channel,
      parentMessages: true,
      milestonesInThread: true,
      updateIntervalMs: opts.updateIntervalMs ?? slack.update_interval_s * 1000,
      maxBackoffMs: opts.maxBackoffMs,
    },
  });
  glm.preload();
  metrics = createBotMetrics(glm.engine);
  glm.engine.metrics = metrics;

  const access = loaded.config.access;
  const groups = createGroupDirectory(
    {
      list: async (usergroup) => (await client.usergroups.users.list({ usergroup })).users ?? [],
    },
    { ttlMs: (access?.group_cache_s ?? 300) * 1000, clock: glm.engine.clock },
  );
  const policy = createAccessPolicy({ access, teamId: slack.team_id, groups });
  if (!access) log.warn('no access: section in the config: every /glm request will be refused');

  const running = new Set<Promise<unknown>>();
  const deps: FaceDeps = {
    glm,
    client,
    policy,
    channel: slack.channel,
    log: log.child({ face: 'slack' }),
    pending: createPendingStore(),
    track(work) {
      const p = work
        .catch((e: Error) => log.error({ err: e.message }, 'slack handler failed'))
        .finally(() => running.delete(p));
      running.add(p);
    },
  };

  // Who the bot is (auth.test), learned once it succeeds; requests are served meanwhile (commands and buttons do not
  // need it), so a Slack hiccup at start-up does not take the bot down.
  let me: { botId?: string; botUserId?: string; team?: string } | undefined;
  const whoAmI = async () => {
    if (me) return;
    const r = await client.auth.test();
    me = { botId: r.bot_id, botUserId: r.user_id, team: r.team };
    log.info({ bot: r.user, team: r.team, transport: settings.transport }, 'connected to Slack');
  };
  await whoAmI().catch((e: Error) =>
    log.warn({ err: e.message }, 'auth.test failed; will try again on the next request'),
  );

  const boltLogger = slackLogger(log, 'bolt');
  const receiver =
    settings.transport === 'socket'
      ? new SocketModeReceiver({
          appToken: settings.appToken!,
          logger: boltLogger,
          installerOptions: { clientOptions: { slackApiUrl: settings.apiUrl } },
        })
      : new HTTPReceiver({
          signingSecret: settings.signingSecret!,
          endpoints: '/slack/events',
          logger: boltLogger,
          processBeforeResponse: false,
          signatureVerification: true,
          bodyLimit: MAX_BODY_BYTES,
        });
  const guard =
    receiver instanceof HTTPReceiver
      ? createRequestGuard({ signingSecret: settings.signingSecret!, clock: glm.engine.clock, log: deps.log })
      : undefined;
  const bolt = new BoltApp({
    receiver,
    // No conversation store: the bot keeps no per-conversation state, and it costs every request a lookup.
    convoStore: false,
    logger: boltLogger,
    clientOptions: clientOptions({ apiUrl: settings.apiUrl, timeoutMs, log }),
    authorize: async () => {
      if (!me) void whoAmI().catch(() => {});
      return { botToken: settings.botToken, botId: me?.botId, botUserId: me?.botUserId };
    },
  });
  bolt.error(async (e) => {
    log.error({ err: e.message, code: (e as { code?: string }).code }, 'bolt error');
  });
  bolt.command('/glm', onSlashCommand(deps));
  bolt.action(ACTIONS.stop, onStopClick(deps));
  bolt.action(ACTIONS.probe, onProbeClick(deps));
  bolt.action(ACTIONS.logs, onLogsClick(deps));
  bolt.action(ACTIONS.draft, onDraftClick(deps));
  bolt.action(ACTIONS.autopilotStop, onAutopilotStopClick(deps));
  bolt.action(REPLACE.confirm, onReplaceClick(deps));
  bolt.action(REPLACE.cancel, onCancelClick(deps));
  bolt.view(STOP_MODAL, onStopConfirmed(deps));

  let socketUp = false;
  const health = (_req: IncomingMessage, res: ServerResponse) => {
    let outbox: Record<string, number> = {};
    let ok = true;
    try {
      outbox = glm.outbox.counts();
    } catch {
      ok = false; // the ledger does not answer
    }
    if (settings.transport === 'socket' && !socketUp) ok = false;
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok, transport: settings.transport, slack: me ? 'authenticated' : 'not yet', outbox }));
  };
  const server: Server = createServer((req, res) => {
    if (req.url === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) return health(req, res);
    if (req.url === '/metrics' && req.method === 'GET') return sendMetrics(metrics!, res);
    if (receiver instanceof HTTPReceiver && guard)
      return guard.handle(req, res, () => receiver.requestListener(req, res));
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? slack.port, opts.listenHost ?? '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  if (receiver instanceof SocketModeReceiver) {
    receiver.client.on('connected', () => {
      socketUp = true;
    });
    receiver.client.on('disconnected', () => {
      socketUp = false;
    });
    await bolt.start();
  }
  const listen = opts.listenHost ?? '0.0.0.0';
  const base = `http://${listen.includes(':') ? `[${listen}]` : listen}:${port}`;
  log.info(
    { transport: settings.transport, listen, port, channel: slack.channel },
    settings.transport === 'socket'
      ? `Slack face started: Socket Mode (the bot connects out to Slack; no public URL); health on ${base}/healthz`
      : `Slack face started: HTTP mode, Slack's requests to ${base}/slack/events (the app's Request URL: https://YOUR-HOST/slack/events, behind HTTPS); health on ${base}/healthz`,
  );

  return {
    glm,
    bolt,
    port,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (receiver instanceof SocketModeReceiver) await bolt.stop().catch(() => {});
      // Work in flight gets a moment to finish its ledger writes; a launch still following its server is left to
      // the ledger (status reconciles it after a restart).
      await Promise.race([Promise.allSettled([...running]), new Promise((r) => setTimeout(r, 2000))]);
      await glm.close();
    },
  };
}
