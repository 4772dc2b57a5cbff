// Minimal HTTP/1.1 client on node:http, so a request can ride on any duplex stream (an SSH direct-tcpip channel).
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpRequest, HttpResponse } from './types.ts';

export interface HttpTarget {
  host: string;
  port: number;
  /** Supplies the connection (e.g. an SSH tunnel); when absent node:http opens a TCP socket. */
  connect?: () => Promise<Duplex>;
}

export function httpRequest(req: HttpRequest, target: HttpTarget): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const timeoutMs = req.timeoutMs ?? 10_000;
    const headers: Record<string, string> = { connection: 'close', ...req.headers };
    if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
    const options: http.RequestOptions = {
      host: target.host,
      port: target.port,
      method: req.method,
      path: req.path,
      headers,
    };
    // `agent: false` makes node:http create a fresh Agent, and an Agent opens its own TCP socket, ignoring the
    // request's createConnection: the request would silently go to this machine's port instead of through the
    // tunnel (unnoticed while every test host was this machine; the network-namespace hosts showed it). Without an
    // agent and with createConnection, node:http uses the supplied connection.
    if (!target.connect) options.agent = false;
    if (target.connect) {
      const connect = target.connect;
      options.createConnection = ((_opts: unknown, cb: (err: Error | null, s?: Duplex) => void) => {
        connect().then(
          (s) => cb(null, decorate(s)),
          (e: Error) => cb(e),
        );
        return undefined;
      }) as unknown as http.RequestOptions['createConnection'];
    }
    const r = http.request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const timer = setTimeout(
      () => r.destroy(new Error(`HTTP ${req.method} ${req.path} timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    r.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    r.end(req.body);
  });
}

// node:http calls these socket methods; an SSH channel does not have them.
export function decorate(s: Duplex): Duplex {
  const d = s as Duplex & Record<string, unknown>;
  for (const m of ['setKeepAlive', 'setNoDelay', 'setTimeout', 'ref', 'unref']) {
    if (typeof d[m] !== 'function') d[m] = () => d;
  }
  return d;
}
