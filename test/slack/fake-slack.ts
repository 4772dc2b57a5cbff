// A local stand-in for Slack's Web API (node:http on 127.0.0.1, ephemeral port) that records every call: the
// methods the bot uses, the file upload sink and response_url endpoints. Switches make it rate-limit (429 with
// Retry-After), fail (500), carry a call out and then lose its answer (reset the connection, or answer too late for
// the client's timeout), or go away (connection refused) so delivery can be tested against a misbehaving Slack.
// conversations.history / conversations.replies return what was posted, with message metadata only when asked for
// with include_all_metadata, as Slack does for metadata the app has not subscribed to. files.info tells where a
// completed upload was shared (its `shares`), so a lost answer to files.completeUploadExternal can be checked.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Call {
  /** Web API method (`chat.postMessage`), `upload` (the file sink) or `respond` (a response_url). */
  method: string;
  body: Record<string, unknown>;
  /** Raw request body as received (for secret checks). */
  raw: string;
  auth?: string;
  at: number;
}

export interface Message {
  channel: string;
  ts: string;
  thread_ts?: string;
  text: string;
  blocks: unknown[];
  reply_broadcast?: boolean;
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  /** Every version the message had, oldest first (posted, then each chat.update). */
  versions: Array<{ text: string; blocks: unknown[] }>;
}

export interface FakeSlack {
  url: string;
  apiUrl: string;
  port: number;
  /** Every accepted call, in order (refused ones are not recorded). */
  calls: Call[];
  /** Calls answered with a fault, for assertions about retries. */
  faults: Array<{ method: string; fault: string; at: number }>;
  messages: Message[];
  /** Files shared by files.completeUploadExternal, each with the ts of its share (files.info's `shares`). */
  files: Array<{
    id: string;
    filename: string;
    title?: string;
    content: string;
    channel?: string;
    thread_ts?: string;
    share_ts: string;
  }>;
  responses: Array<{ id: string; body: Record<string, unknown> }>;
  groups: Record<string, string[]>;
  /** The next N Web API calls get these answers: '429' (Retry-After: retryAfterS), '500'. */
  failNext(...faults: Fault[]): void;
  /** The next call of one method gets this answer. */
  failMethod(method: string, fault: Fault): void;
  retryAfterS: number;
  /** How long an 'accept-timeout' call holds its answer back (longer than the client's timeout). */
  stallMs: number;
  /** Connection refused until up(). */
  down(): Promise<void>;
  up(): Promise<void>;
  responseUrl(id: string): string;
  /** Makes response_url `id` answer 404 (expired/used) from now on. */
  expire(id: string): void;
  named(method: string): Call[];
  /** Socket Mode: envelopes the bot acknowledged over the WebSocket (apps.connections.open hands out its URL). */
  socketAcks: Array<{ envelope_id: string; payload?: unknown }>;
  /** Sends an envelope to every connected Socket Mode client. */
  sendEnvelope(type: string, payload: unknown): string;
  socketClients(): number;
  close(): Promise<void>;
}

/**
 * '429' and '500' refuse the call; 'accept-reset' carries it out and then drops the connection without an answer;
 * 'accept-timeout' carries it out and answers only after stallMs.
 */
export type Fault = '429' | '500' | 'accept-reset' | 'accept-timeout';

async function readBuffer(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The file sink gets what the Web API client sends: multipart form data with the bytes in a `body` field. */
async function uploadedContent(buf: Buffer, type: string | undefined): Promise<string> {
  if (!type?.includes('multipart/form-data')) return buf.toString('utf8');
  const form = await new Response(new Uint8Array(buf), { headers: { 'content-type': type } }).formData();
  const part = form.get('body') ?? form.get('file');
  return typeof part === 'string' ? part : part ? await part.text() : '';
}

function parseBody(raw: string, type: string | undefined): Record<string, unknown> {
  if (type?.includes('application/json')) return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  const out: Record<string, unknown> = Object.fromEntries(new URLSearchParams(raw));
  for (const k of ['blocks', 'view', 'attachments', 'metadata']) {
    if (typeof out[k] === 'string') out[k] = JSON.parse(out[k] as string);
  }
  return out;
}

// A minimal WebSocket server (RFC 6455 text frames, ping/pong, close), enough to play Slack's Socket Mode.
function wsFrame(opcode: number, data: Buffer): Buffer {
  const len = data.length;
  const head =
    len < 126
      ? Buffer.from([0x80 | opcode, len])
      : len < 65536
        ? Buffer.from([0x80 | opcode, 126, len >> 8, len & 0xff])
        : Buffer.concat([
            Buffer.from([0x80 | opcode, 127]),
            (() => {
              const b = Buffer.alloc(8);
              b.writeBigUInt64BE(BigInt(len));
              return b;
            })(),
          ]);
  return Buffer.concat([head, data]);
}

function wsAccept(socket: Socket, key: string, onText: (t: string) => void): void {
  const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
  );
  let buf = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (buf.length < 2) return;
      const opcode = buf[0]! & 0x0f;
      const masked = (buf[1]! & 0x80) !== 0;
      let len = buf[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (buf.length < 4) return;
        len = buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (buf.length < 10) return;
        len = Number(buf.readBigUInt64BE(2));
        off = 10;
      }
      const maskAt = off;
      if (masked) off += 4;
      if (buf.length < off + len) return;
      const data = Buffer.from(buf.subarray(off, off + len));
      if (masked) for (let i = 0; i < len; i++) data[i]! ^= buf[maskAt + (i % 4)]!;
      buf = buf.subarray(off + len);
      if (opcode === 0x1) onText(data.toString('utf8'));
      else if (opcode === 0x9) socket.write(wsFrame(0xa, data));
      else if (opcode === 0x8) {
        socket.end(wsFrame(0x8, Buffer.alloc(0)));
        return;
      }
    }
  });
  socket.on('error', () => {});
}

export async function startFakeSlack(): Promise<FakeSlack> {
  let seq = 0;
  let fileSeq = 0;
  const pendingFiles = new Map<string, { filename: string; content?: string }>();
  const queue: Fault[] = [];
  const byMethod = new Map<string, Fault[]>();
  const expired = new Set<string>();
  let server: Server;
  let port = 0;
  const sockets = new Set<Socket>();
  let envelopeSeq = 0;

  const fake: FakeSlack = {
    url: '',
    apiUrl: '',
    port: 0,
    calls: [],
    faults: [],
    messages: [],
    files: [],
    responses: [],
    groups: {},
    retryAfterS: 1,
    stallMs: 3000,
    failNext: (...f) => void queue.push(...f),
    failMethod: (m, f) => void byMethod.set(m, [...(byMethod.get(m) ?? []), f]),
    async down() {
      for (const s of sockets) s.destroy();
      sockets.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
    async up() {
      server = listen();
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    },
    responseUrl: (id) => `${fake.url}/respond/${id}`,
    expire: (id) => void expired.add(id),
    named: (m) => fake.calls.filter((c) => c.method === m),
    socketAcks: [],
    sendEnvelope(type, payload) {
      const envelope_id = `env-${++envelopeSeq}`;
      const frame = wsFrame(
        0x1,
        Buffer.from(JSON.stringify({ envelope_id, type, payload, accepts_response_payload: true })),
      );
      for (const s of sockets) s.write(frame);
      return envelope_id;
    },
    socketClients: () => sockets.size,
    close: () => fake.down(),
  };

  const json = (res: import('node:http').ServerResponse, body: unknown, status = 200) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  function api(method: string, body: Record<string, unknown>): unknown {
    switch (method) {
      case 'auth.test':
        return { ok: true, user: 'glm-ops', user_id: 'U0BOT', bot_id: 'B0BOT', team: 'Test', team_id: 'T1' };
      case 'chat.postMessage': {
        seq += 1;
        // Real seconds (history lookups filter by `oldest`), and a sequence number that keeps them unique and ordered.
        const ts = `${Math.floor(Date.now() / 1000)}.${String(seq).padStart(6, '0')}`;
        const text = String(body.text ?? '');
        const blocks = (body.blocks as unknown[]) ?? [];
        fake.messages.push({
          channel: String(body.channel),
          ts,
          thread_ts: body.thread_ts as string | undefined,
          text,
          blocks,
          reply_broadcast: body.reply_broadcast === 'true' || body.reply_broadcast === true,
          metadata: body.metadata as Message['metadata'],
          versions: [{ text, blocks }],
        });
        return { ok: true, channel: body.channel, ts, message: { text } };
      }
      case 'chat.update': {
        const m = fake.messages.find((x) => x.ts === body.ts && x.channel === body.channel);
        if (!m) return { ok: false, error: 'message_not_found' };
        m.text = String(body.text ?? '');
        m.blocks = (body.blocks as unknown[]) ?? [];
        m.versions.push({ text: m.text, blocks: m.blocks });
        return { ok: true, channel: m.channel, ts: m.ts };
      }
      case 'conversations.history':
      case 'conversations.replies': {
        const withMeta = body.include_all_metadata === true || body.include_all_metadata === 'true';
        const oldest = Number(body.oldest ?? 0);
        const inThread = (m: Message) => m.ts === body.ts || m.thread_ts === body.ts;
        const found = fake.messages
          .filter((m) => m.channel === body.channel && Number(m.ts) > oldest)
          .filter((m) => (method === 'conversations.replies' ? inThread(m) : !m.thread_ts || m.reply_broadcast));
        // history is newest first, replies oldest first; one page of `limit`, then a cursor (an offset here).
        if (method === 'conversations.history') found.reverse();
        const from = Number(body.cursor ?? 0);
        const limit = Number(body.limit ?? 100);
        const page = found.slice(from, from + limit);
        return {
          ok: true,
          messages: page.map((m) => ({
            type: 'message',
            ts: m.ts,
            thread_ts: m.thread_ts,
            text: m.text,
            ...(withMeta && m.metadata ? { metadata: m.metadata } : {}),
          })),
          has_more: from + limit < found.length,
          response_metadata: { next_cursor: from + limit < found.length ? String(from + limit) : '' },
        };
      }
      case 'chat.getPermalink': {
        const m = fake.messages.find((x) => x.ts === body.message_ts && x.channel === body.channel);
        if (!m) return { ok: false, error: 'message_not_found' };
        return {
          ok: true,
          channel: m.channel,
          permalink: `${fake.url}/archives/${m.channel}/p${m.ts.replace('.', '')}`,
        };
      }
      case 'chat.postEphemeral':
        seq += 1;
        return { ok: true, message_ts: `1700000000.${String(seq).padStart(6, '0')}` };
      case 'views.open':
        return { ok: true, view: { id: `V${++seq}` } };
      case 'apps.connections.open':
        return { ok: true, url: `ws://127.0.0.1:${port}/socket` };
      case 'usergroups.users.list':
        return { ok: true, users: fake.groups[String(body.usergroup)] ?? [] };
      case 'files.getUploadURLExternal': {
        const id = `F${++fileSeq}`;
        pendingFiles.set(id, { filename: String(body.filename) });
        return { ok: true, upload_url: `${fake.url}/upload/${id}`, file_id: id };
      }
      case 'files.completeUploadExternal': {
        const files = JSON.parse(String(body.files)) as Array<{ id: string; title?: string }>;
        for (const f of files) {
          const p = pendingFiles.get(f.id);
          if (!p || p.content === undefined) return { ok: false, error: 'file_not_uploaded' };
          seq += 1;
          fake.files.push({
            share_ts: `${Math.floor(Date.now() / 1000)}.${String(seq).padStart(6, '0')}`,
            id: f.id,
            filename: p.filename,
            title: f.title,
            content: p.content,
            channel: body.channel_id as string | undefined,
            thread_ts: body.thread_ts as string | undefined,
          });
        }
        return { ok: true, files: files.map((f) => ({ id: f.id, title: f.title })) };
      }
      case 'files.info': {
        // A file that was uploaded and completed, with where it was shared (`shares.public` here: the tests'
        // channels are public); one only uploaded (never completed) or never made is unknown, as Slack says.
        const f = fake.files.find((x) => x.id === body.file);
        if (!f) return { ok: false, error: 'file_not_found' };
        const share = { ts: f.share_ts, ...(f.thread_ts ? { thread_ts: f.thread_ts } : {}), channel_name: f.channel };
        return {
          ok: true,
          file: {
            id: f.id,
            name: f.filename,
            title: f.title,
            channels: f.channel ? [f.channel] : [],
            shares: f.channel ? { public: { [f.channel]: [share] } } : {},
          },
        };
      }
      default:
        return { ok: false, error: 'unknown_method' };
    }
  }

  const handler = async (req: IncomingMessage, res: import('node:http').ServerResponse) => {
    const buf = await readBuffer(req);
    const raw = buf.toString('utf8');
    const url = new URL(req.url ?? '/', 'http://x');
    const at = Date.now();
    if (url.pathname.startsWith('/upload/')) {
      const id = url.pathname.slice('/upload/'.length);
      const p = pendingFiles.get(id);
      const content = await uploadedContent(buf, req.headers['content-type']);
      fake.calls.push({ method: 'upload', body: { id, content }, raw, at });
      if (p) p.content = content;
      res.writeHead(p ? 200 : 404).end('OK');
      return;
    }
    if (url.pathname.startsWith('/respond/')) {
      const id = url.pathname.slice('/respond/'.length);
      if (expired.has(id)) {
        res.writeHead(404).end('expired_url');
        return;
      }
      const body = parseBody(raw, req.headers['content-type']);
      fake.calls.push({ method: 'respond', body: { id, ...body }, raw, at });
      fake.responses.push({ id, body });
      res.writeHead(200).end('ok');
      return;
    }
    if (!url.pathname.startsWith('/api/')) {
      res.writeHead(404).end();
      return;
    }
    const method = url.pathname.slice('/api/'.length);
    const fault = byMethod.get(method)?.shift() ?? queue.shift();
    if (fault === 'accept-reset' || fault === 'accept-timeout') {
      fake.faults.push({ method, fault, at });
      const body = parseBody(raw, req.headers['content-type']);
      fake.calls.push({ method, body, raw, auth: req.headers.authorization, at });
      const answer = api(method, body);
      if (fault === 'accept-reset') req.socket.destroy();
      else setTimeout(() => json(res, answer), fake.stallMs).unref();
      return;
    }
    if (fault) {
      fake.faults.push({ method, fault, at });
      if (fault === '429') res.writeHead(429, { 'retry-after': String(fake.retryAfterS) }).end();
      else res.writeHead(500).end('internal error');
      return;
    }
    const body = parseBody(raw, req.headers['content-type']);
    fake.calls.push({ method, body, raw, auth: req.headers.authorization, at });
    json(res, api(method, body));
  };

  function listen(): Server {
    const srv = createServer(handler);
    srv.on('upgrade', (req, socket: Socket) => {
      if (!req.url?.startsWith('/socket')) return socket.destroy();
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      wsAccept(socket, String(req.headers['sec-websocket-key']), (text) => {
        const msg = JSON.parse(text) as { envelope_id: string; payload?: unknown };
        fake.socketAcks.push(msg);
      });
      socket.write(
        wsFrame(
          0x1,
          Buffer.from(JSON.stringify({ type: 'hello', num_connections: 1, connection_info: { app_id: 'A1' } })),
        ),
      );
    });
    return srv;
  }
  server = listen();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as AddressInfo).port;
  fake.port = port;
  fake.url = `http://127.0.0.1:${port}`;
  fake.apiUrl = `${fake.url}/api/`;
  return fake;
}
