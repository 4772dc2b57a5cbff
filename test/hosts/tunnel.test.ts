// Streaming HTTP goes through the capability RemoteHost declares (tunnel), for the local host and an SSH host
// alike: the smoke and bench clients' SSE requests reach a real server on 127.0.0.1 through the host they were given.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalHost } from '../../src/hosts/local.ts';
import { createSshHost } from '../../src/hosts/ssh.ts';
import type { RemoteHost } from '../../src/hosts/types.ts';
import { streamSse } from '../../src/smoke/stream.ts';
import { sshTarget } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(`data: ${JSON.stringify({ path: req.url })}\n\n`);
    res.write('data: two\n\n');
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** The host as its users see it: only what RemoteHost declares, each tunnel counted. */
function declaredOnly(h: RemoteHost): RemoteHost & { tunnels: string[] } {
  const tunnels: string[] = [];
  return {
    name: h.name,
    tunnels,
    exec: (argv, opts) => h.exec(argv, opts),
    stream: (argv) => h.stream(argv),
    http: (p, req) => h.http(p, req),
    tunnel: (to, p) => {
      tunnels.push(`${to}:${p}`);
      return h.tunnel(to, p);
    },
    close: () => h.close(),
  };
}

describe('RemoteHost.tunnel', () => {
  it('carries a streamed request for the local host and for an SSH host', async () => {
    const ssh = createSshHost(sshTarget(shared.sshd));
    try {
      for (const real of [createLocalHost('standin'), ssh]) {
        const h = declaredOnly(real);
        const events: string[] = [];
        const r = await streamSse(h, port, { path: '/v1/chat/completions', body: { stream: true } }, (d) =>
          events.push(d),
        );
        expect({ host: real.name, status: r.status, done: r.done, events }).toEqual({
          host: real.name,
          status: 200,
          done: true,
          events: ['{"path":"/v1/chat/completions"}', 'two'],
        });
        expect(h.tunnels).toEqual([`127.0.0.1:${port}`]);
      }
      // A port nobody serves is a connection error, said as such, not a hang.
      const closed = await streamSse(createLocalHost('standin'), 1, { path: '/', body: {} }, () => {});
      expect(closed.error).toMatch(/^cannot connect: .*ECONNREFUSED/);
    } finally {
      await ssh.close();
    }
  });
});
