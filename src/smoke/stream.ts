// A streamed (SSE) HTTP request to a server port as seen from its host: over one SSH direct-tcpip channel per
// request for SSH hosts (RemoteHost.tunnel: RemoteHost.http buffers the whole body, which would hide time to first
// token), a plain TCP socket for the local host. Every event is stamped with performance.now() the moment its bytes arrive.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { decorate } from '../hosts/http.ts';
import type { RemoteHost } from '../hosts/types.ts';

export interface SseRequest {
  path: string;
  body: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export interface SseResult {
  status: number;
  /**
   * performance.now() just before the request was written, on an already open connection: the SSH channel's own
   * set-up (a round trip through sshd, sometimes delayed by Nagle) is the tunnel's cost, not the server's TTFT.
   */
  startedAt: number;
  /** performance.now() of the last byte (or of the failure). */
  endedAt: number;
  /** The stream ended with `data: [DONE]`. */
  done: boolean;
  /** Why the stream broke off, when it did: reset, timeout, a non-200 answer. */
  error?: string;
  /** The body of a non-200 answer. */
  body?: string;
}

/** POSTs JSON and calls onEvent(data, at) for each SSE `data:` payload except [DONE]. Never throws. */
export async function streamSse(
  host: RemoteHost,
  port: number,
  req: SseRequest,
  onEvent: (data: string, at: number) => void,
): Promise<SseResult> {
  const payload = JSON.stringify(req.body);
  let socket: Duplex;
  try {
    socket = decorate(await host.tunnel('127.0.0.1', port));
  } catch (e) {
    const at = performance.now();
    return { status: 0, startedAt: at, endedAt: at, done: false, error: `cannot connect: ${(e as Error).message}` };
  }
  const startedAt = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let done = false;
    const finish = (r: Omit<SseResult, 'startedAt' | 'endedAt' | 'done'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, startedAt, endedAt: performance.now(), done });
    };
    const options: http.RequestOptions = {
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: req.path,
      agent: false,
      headers: {
        connection: 'close',
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'content-length': String(Buffer.byteLength(payload)),
        ...req.headers,
      },
      createConnection: (() => socket) as unknown as http.RequestOptions['createConnection'],
    };
    const r = http.request(options, (res) => {
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => finish({ status, body: Buffer.concat(chunks).toString('utf8'), error: `HTTP ${status}` }));
        res.on('error', (e) => finish({ status, error: e.message }));
        return;
      }
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (text: string) => {
        const at = performance.now();
        buf += text;
        for (;;) {
          const m = /\r?\n\r?\n/.exec(buf);
          if (!m) break;
          const block = buf.slice(0, m.index);
          buf = buf.slice(m.index + m[0].length);
          const data = block
            .split(/\r?\n/)
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).replace(/^ /, ''))
            .join('\n');
          if (!data) continue;
          if (data === '[DONE]') done = true;
          else onEvent(data, at);
        }
      });
      res.on('end', () => finish({ status, error: done ? undefined : 'the stream ended before [DONE]' }));
      res.on('error', (e) => finish({ status, error: `the stream broke off: ${e.message}` }));
      res.on('close', () => finish({ status, error: done ? undefined : 'the connection closed mid-stream' }));
    });
    const timer = setTimeout(
      () => r.destroy(new Error(`no end of stream after ${req.timeoutMs ?? 120_000} ms`)),
      req.timeoutMs ?? 120_000,
    );
    r.on('error', (e) => finish({ status: 0, error: e.message }));
    r.end(payload);
  });
}
