// Part src/metrics: owns the bot's Prometheus metrics and their endpoint.
// May import: chat, hosts, ledger, lifecycle.
//
// The bot's own Prometheus metrics (prom-client), served at /metrics by its long-lived face next to /healthz.
// Ledger-backed figures (attempts by outcome and crash class, the outbox) are read from SQLite at scrape time, so they
// survive restarts and agree with `attempts`; event figures (command durations, Slack Web API calls) count from start.
import client from 'prom-client';
import type { ChatMessage } from '../chat/types.ts';
import type { SshHost } from '../hosts/ssh.ts';
import type { OutboxItem } from '../ledger/outbox.ts';
import type { Engine } from '../lifecycle/engine.ts';

export interface BotMetrics {
  registry: client.Registry;
  /** A command finished (dispatch): its name, ok/failed/error/denied, and how long it took. */
  commandDone(command: string, result: string, ms: number): void;
  /** One Slack Web API call: ok, retry (the outbox will try again) or error (it never will). */
  slackCall(method: string, result: 'ok' | 'retry' | 'error'): void;
  /** An outbox item reached the chat at `at`: a crash alert's latency is observed. */
  delivered(item: OutboxItem, at: number): void;
}

export function createBotMetrics(engine: Pick<Engine, 'ledger' | 'outbox' | 'clock' | 'pool'>): BotMetrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'glm_' });
  const commands = new client.Histogram({
    name: 'glm_command_duration_seconds',
    help: 'Duration of chat and terminal commands, by command and result.',
    labelNames: ['command', 'result'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
    registers: [registry],
  });
  const alertLatency = new client.Histogram({
    name: 'glm_alert_latency_seconds',
    help: "Crash alerts: from the crash being seen (from=log: its root line read from the server's log; from=exit: the server's end seen) to the alert delivered to the chat.",
    labelNames: ['from'],
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800],
    registers: [registry],
  });
  const slack = new client.Counter({
    name: 'glm_slack_api_calls_total',
    help: 'Slack Web API calls by method and result (retry: transient, the outbox tries again; error: permanent).',
    labelNames: ['method', 'result'],
    registers: [registry],
  });
  new client.Gauge({
    name: 'glm_attempts',
    help: 'Attempts in the ledger by outcome (status while live) and crash class.',
    labelNames: ['outcome', 'crash_class'],
    registers: [registry],
    collect() {
      this.reset();
      const rows = engine.ledger.outcomeCounts();
      for (const r of rows) this.set({ outcome: r.outcome, crash_class: r.cls }, r.n);
    },
  });
  new client.Gauge({
    name: 'glm_outbox_messages',
    help: "This face's outbox by status (pending: not yet delivered to chat).",
    labelNames: ['status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [status, n] of Object.entries(engine.outbox.counts())) this.set({ status }, n);
    },
  });
  new client.Gauge({
    name: 'glm_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest undelivered outbox message (0: none waiting).',
    registers: [registry],
    collect() {
      const oldest = engine.outbox.pending(1)[0];
      this.set(oldest ? Math.max(0, (engine.clock.now() - oldest.createdAt) / 1000) : 0);
    },
  });
  const sshStat = (name: string, help: string, f: (s: SshHost['stats']) => number) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['host'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [host, h] of engine.pool.connected()) {
          const stats = (h as Partial<SshHost>).stats;
          if (stats) this.set({ host }, f(stats));
        }
      },
    });
  sshStat('glm_ssh_connections_opened', 'SSH connections opened per host since start.', (s) => s.connectionsOpened);
  sshStat('glm_ssh_reconnects', 'SSH reconnects per host since start (connections after the first).', (s) =>
    Math.max(0, s.connectionsOpened - 1),
  );
  return {
    registry,
    commandDone: (command, result, ms) => commands.observe({ command, result }, ms / 1000),
    slackCall: (method, result) => slack.inc({ method, result }),
    delivered(item, at) {
      const alert = (item.payload as ChatMessage | undefined)?.alert;
      if (alert) alertLatency.observe({ from: alert.from }, Math.max(0, at - alert.seenAt) / 1000);
    },
  };
}
