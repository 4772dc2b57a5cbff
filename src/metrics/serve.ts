// /metrics over HTTP: the handler the Slack face mounts next to its /healthz, and a small server of its own for the
// interactive session (GLM_METRICS_PORT), which has no other.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BotMetrics } from './bot.ts';

export function sendMetrics(metrics: BotMetrics, res: ServerResponse): void {
  metrics.registry
    .metrics()
    .then((text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text))
    .catch((e: Error) => res.writeHead(500).end(e.message));
}

/** Serves /metrics and /healthz (the ledger answers) on host:port; resolves with the bound port. */
export async function serveMetrics(
  metrics: BotMetrics,
  healthy: () => boolean,
  port: number,
  host = '127.0.0.1',
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET') return res.writeHead(405).end();
    if (req.url === '/metrics') return sendMetrics(metrics, res);
    if (req.url === '/healthz') {
      const ok = healthy();
      return res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ ok }));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
