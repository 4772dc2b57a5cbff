// A host reached over SSH (ssh2): one connection per host for commands and tunnels, log streams on connections of
// their own, host keys pinned from known_hosts, keepalive, reconnect with backoff on demand, and a timeout on every
// operation that covers its wait for a channel.
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type {
  AgentAuthMethod,
  ClientChannel,
  Client as ClientType,
  ConnectConfig,
  NoAuthMethod,
  ParsedKey,
  PublicKeyAuthMethod,
  utils,
} from 'ssh2';
import { RemoteError } from '../errors.ts';
import { httpRequest } from './http.ts';
import { knownHostsName, readKnownHosts, unsupportedWarning, type Verdict, verifyHostKey } from './known-hosts.ts';
import { ChunkQueue, TailBuffer } from './output.ts';
import { shArgv } from './quote.ts';
import { Semaphore } from './semaphore.ts';
import type { ExecOptions, ExecResult, HttpRequest, HttpResponse, RemoteHost, StreamHandle } from './types.ts';

// ssh2 is loaded on the first connection, not at start-up: a one-shot `glm help` or a local-only host never pays for
// it. It is CommonJS whose named exports Node's ESM loader cannot see: take Client off the default export.
let ssh2Module: Promise<{ Client: typeof ClientType; parseKey: typeof utils.parseKey }> | undefined;
function loadSsh2(): Promise<{ Client: typeof ClientType; parseKey: typeof utils.parseKey }> {
  ssh2Module ??= import('ssh2').then((m) => ({ Client: m.default.Client, parseKey: m.default.utils.parseKey }));
  return ssh2Module;
}

/**
 * Private keys parsed (and, with a passphrase, decrypted) once per process. ssh2 parses the key it is given at every
 * connect, synchronously: a passphrase-protected OpenSSH key costs ~180 ms of bcrypt there (npm run bench), so 64
 * hosts connecting at once would wait ~11 s one after the other. ssh2 takes a key it parsed itself as it is.
 */
const parsedKeys = new Map<string, ParsedKey>();

/** The parsed key for `raw` (and `passphrase`); `raw` itself when it does not parse, so ssh2 says why. */
export function parsedKey(
  parse: typeof utils.parseKey,
  raw: Buffer | string,
  passphrase?: string,
): ParsedKey | Buffer | string {
  const id = createHash('sha256')
    .update(raw)
    .update('\0')
    .update(passphrase ?? '')
    .digest('hex');
  const known = parsedKeys.get(id);
  if (known) return known;
  const r = parse(raw, passphrase);
  // OpenSSH's format holds one key per file.
  const key = r instanceof Error ? undefined : Array.isArray(r) ? r[0] : r;
  if (!key) return raw;
  parsedKeys.set(id, key);
  return key;
}

export interface SshTarget {
  /** The host's name in the bot's config (for messages). */
  name: string;
  host: string;
  port: number;
  username: string;
  privateKey?: Buffer | string;
  passphrase?: string;
  /** Path of an ssh-agent socket. */
  agent?: string;
  knownHostsPath: string;
  keepaliveIntervalMs: number;
  connectTimeoutMs: number;
  /** Default per-command timeout when the caller gives none. */
  execTimeoutMs: number;
  jump?: SshTarget;
  /** Where warnings about the host's pinning go (a known_hosts line skipped); the log, from the pool. */
  warn?: (text: string) => void;
}

export interface SshStats {
  connectionsOpened: number;
}

/**
 * OpenSSH allows 10 sessions per connection (sshd_config MaxSessions). Commands get 8 of them on the command
 * connection; long-lived streams (`tail -F`) never take those: they ride connections of their own, up to 8 each, so
 * any number of followed servers cannot starve `stop`, `status` or `probe`. Tunnels (direct-tcpip) are not sessions.
 */
const COMMAND_CHANNELS = 8;
const STREAMS_PER_CONNECTION = 8;
/** How long a signalled session gets to end before we close its channel anyway. */
const KILL_GRACE_MS = 1000;
const RETRYABLE = new Set(['client-socket', 'client-timeout']);

export interface SshHost extends RemoteHost {
  readonly stats: SshStats;
}

/** One SSH connection, made on demand and remade after a drop, with its own channel budget. */
interface Connection {
  channels: Semaphore;
  get(): Promise<ClientType>;
  drop(c: ClientType): void;
  end(): void;
}

/**
 * The host-key algorithms to offer for the pinned keys. An RSA pin (`ssh-rsa` in known_hosts) is offered as the
 * SHA-2 signature algorithms of RFC 8332 only: the `ssh-rsa` algorithm means SHA-1 signatures, which OpenSSH 8.8+
 * servers no longer make (and OpenSSH's own client no longer accepts).
 */
export function hostKeyAlgorithms(pinnedTypes: readonly string[]): string[] {
  return [...new Set(pinnedTypes.flatMap((t) => (t === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256'] : [t])))];
}

/**
 * Sends a signal to a session's remote command. OpenSSH (>= 7.9) delivers it to the session's process group, so the
 * command and whatever it started in its group get it. ssh2's Channel.signal() drops the request once our side has
 * sent EOF (every exec closes stdin), though RFC 4254 allows it then, so the request goes to the protocol directly.
 */
function signalSession(ch: ClientChannel, name: 'TERM' | 'KILL'): void {
  const raw = ch as unknown as {
    outgoing?: { id: number; state: string };
    _client?: { _protocol?: { signal(id: number, sig: string): void } };
  };
  // 'eof': we sent EOF (stdin closed) but the channel is still open both ways.
  if (raw.outgoing?.state !== 'open' && raw.outgoing?.state !== 'eof') return;
  raw._client?._protocol?.signal(raw.outgoing.id, name);
}

/**
 * Ends a session's remote command with `sig` to its process group, then closes the channel (at once if the command
 * does not end within a grace period). A timed-out command gets KILL straight away: a TERM-first grace cannot work
 * through sshd, because once the group's leader (the login shell) dies of TERM, sshd ends the session and the rest
 * of the group (anything that ignores TERM) can no longer be signalled.
 */
function endSession(ch: ClientChannel, sig: 'TERM' | 'KILL', graceMs = KILL_GRACE_MS): void {
  signalSession(ch, sig);
  const timer = setTimeout(() => ch.close(), graceMs);
  ch.once('close', () => clearTimeout(timer));
}

export function createSshHost(target: SshTarget): SshHost {
  const stats: SshStats = { connectionsOpened: 0 };
  let jumpHost: SshHost | undefined;
  let closed = false;

  async function connectOnce(onClose: (c: ClientType) => void): Promise<ClientType> {
    const { Client, parseKey } = await loadSsh2();
    return new Promise((resolve, reject) => {
      const c = new Client();
      let verdict: Verdict | undefined;
      let offered: string | undefined;
      const known = readKnownHosts(target.knownHostsPath, target.host, target.port);
      const pinnedTypes = [...new Set(known.keys.map((k) => k.type))];
      const cfg: ConnectConfig = {
        host: target.host,
        port: target.port,
        username: target.username,
        readyTimeout: target.connectTimeoutMs,
        keepaliveInterval: target.keepaliveIntervalMs,
        keepaliveCountMax: 3,
        hostVerifier: (key: Buffer) => {
          verdict = verifyHostKey(key, known, {
            host: target.host,
            port: target.port,
            knownHostsPath: target.knownHostsPath,
          });
          return verdict.ok;
        },
        // ssh2 reports the host's key types only in its debug lines; we keep that one line for the error below.
        debug: (line: string) => {
          const m = line.match(/^Handshake: \(remote\) Host key format: (.*)$/);
          if (m) offered = m[1];
        },
      };
      // Offer only the key types we have pins for, so the server presents one we can check.
      if (pinnedTypes.length > 0) cfg.algorithms = { serverHostKey: hostKeyAlgorithms(pinnedTypes) as never };
      const key = target.privateKey && parsedKey(parseKey, target.privateKey, target.passphrase);
      if (key && typeof key !== 'string' && !Buffer.isBuffer(key)) {
        // A parsed key goes through authHandler (connect's privateKey takes only the unparsed forms), in the order
        // ssh2 tries by default: none, the key, the agent.
        const username = target.username;
        const methods: Array<NoAuthMethod | PublicKeyAuthMethod | AgentAuthMethod> = [
          { type: 'none', username },
          { type: 'publickey', username, key },
        ];
        if (target.agent) methods.push({ type: 'agent', username, agent: target.agent });
        cfg.authHandler = methods;
      } else if (key) {
        // Not parsed: ssh2 parses it again and says why it cannot.
        cfg.privateKey = key;
        if (target.passphrase) cfg.passphrase = target.passphrase;
      }
      if (target.agent) cfg.agent = target.agent;
      // Lines of a key type ssh2 cannot check were left out of `known` (so never offered): say so, and go on.
      for (const u of known.unsupported)
        target.warn?.(unsupportedWarning(target.knownHostsPath, target.host, target.port, u));
      c.on('ready', () => {
        // Small request/response exchanges (channel opens, probes) must not wait on Nagle's algorithm.
        c.setNoDelay(true);
        stats.connectionsOpened += 1;
        resolve(c);
      });
      c.on('error', (err: Error & { level?: string }) => {
        const name = knownHostsName(target.host, target.port);
        if (verdict && !verdict.ok) {
          reject(
            new RemoteError(verdict.message, {
              host: target.name,
              kind: 'host-key',
              hint: verdict.hint,
            }),
          );
        } else if (/no matching host key format/i.test(err.message)) {
          const offers = offered ? offered.split(',').join(', ') : 'other types';
          reject(
            new RemoteError(
              `no pinned key of the type the host offers: ${name} offers ${offers}; ${target.knownHostsPath} pins only ${pinnedTypes.join(', ')} for it`,
              {
                host: target.name,
                kind: 'host-key',
                hint: `check the host's key out of band (on the host: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub, or ssh-keyscan -p ${target.port} ${target.host}), then add its line to ${target.knownHostsPath}`,
              },
            ),
          );
        } else if (err.level === 'client-authentication') {
          reject(
            new RemoteError(`${target.username}@${target.host}:${target.port} refused our key (${err.message})`, {
              host: target.name,
              kind: 'auth',
              hint: `check the user name and that the public key of the configured key file is in ~${target.username}/.ssh/authorized_keys on the host`,
            }),
          );
        } else if (err.level === 'handshake' || err.level === 'protocol') {
          reject(
            new RemoteError(`${name} and the bot could not agree on a secure connection: ${err.message}`, {
              host: target.name,
              kind: 'connect',
              hint: "the host's sshd allows no algorithm the bot speaks: compare its sshd_config (HostKeyAlgorithms, KexAlgorithms, Ciphers) with a current OpenSSH",
            }),
          );
        } else {
          const e = new RemoteError(`cannot reach ${target.host}:${target.port}: ${err.message}`, {
            host: target.name,
            kind: err.level === 'client-timeout' ? 'timeout' : 'connect',
            hint: 'check the address and port in the config, that sshd runs there, and that no firewall is in the way',
          });
          (e as RemoteError & { level?: string }).level = err.level;
          reject(e);
        }
      });
      c.on('close', () => {
        onClose(c);
        // ssh2 reports a socket the server closed cleanly before 'ready' (an sshd killed mid-handshake sends FIN,
        // not RST) only as 'close', and clears its ready timeout: without this the connection would wait forever,
        // and so would every command and log stream queued on it. A no-op once ready or rejected.
        const e = new RemoteError(
          `cannot reach ${target.host}:${target.port}: the connection closed during the SSH handshake`,
          {
            host: target.name,
            kind: 'connect',
            hint: 'check that sshd runs there and accepts the bot (its log says why it closed the connection)',
          },
        );
        (e as RemoteError & { level?: string }).level = 'client-socket';
        reject(e);
      });
      if (target.jump) {
        jumpHost ??= createSshHost(target.jump);
        const jump = jumpHost;
        jump
          .tunnel(target.host, target.port)
          .then((sock) => c.connect({ ...cfg, sock }))
          .catch((e: Error) =>
            reject(
              new RemoteError(`cannot reach ${target.name} through jump host ${target.jump?.name}: ${e.message}`, {
                host: target.name,
                kind: 'connect',
              }),
            ),
          );
      } else {
        c.connect(cfg);
      }
    });
  }

  async function connectWithBackoff(onClose: (c: ClientType) => void): Promise<ClientType> {
    const deadline = Date.now() + target.connectTimeoutMs;
    let delay = 200;
    for (;;) {
      try {
        return await connectOnce(onClose);
      } catch (e) {
        const level = (e as { level?: string }).level;
        // Never retry a host-key or authentication failure: those need a person.
        if (!level || !RETRYABLE.has(level) || Date.now() + delay > deadline) throw e;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  function makeConnection(limit: number): Connection {
    let client: ClientType | undefined;
    let connecting: Promise<ClientType> | undefined;
    const forget = (c: ClientType) => {
      if (client === c) client = undefined;
    };
    return {
      channels: new Semaphore(limit),
      async get() {
        if (closed) throw new RemoteError('host connection is closed', { host: target.name, kind: 'connect' });
        if (client) return client;
        connecting ??= connectWithBackoff(forget).finally(() => {
          connecting = undefined;
        });
        client = await connecting;
        return client;
      },
      drop(c) {
        forget(c);
        c.destroy();
      },
      end() {
        client?.end();
        client = undefined;
      },
    };
  }

  const commands = makeConnection(COMMAND_CHANNELS);
  const streamConnections: Connection[] = [];

  /** A stream slot that never waits: the first stream connection with room, else a new connection. */
  async function streamSlot(): Promise<{ conn: Connection; release: () => void }> {
    let conn = streamConnections.find((s) => s.channels.inUse < s.channels.limit);
    if (!conn) {
      conn = makeConnection(STREAMS_PER_CONNECTION);
      streamConnections.push(conn);
    }
    const release = await conn.channels.acquire();
    return { conn, release: release! };
  }

  /**
   * Opens an exec channel, with a timeout on the open itself (a half-open transport never calls back). sshd frees a
   * session slot a moment after the channel's close reaches us, so an "open failed" right after a close is retried.
   */
  async function openExec(
    conn: Connection,
    argv: readonly string[],
    timeoutMs: number,
  ): Promise<{ ch: ClientChannel; c: ClientType }> {
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await openExecOnce(conn, argv, Math.max(deadline - Date.now(), 1));
      } catch (e) {
        const transient = e instanceof RemoteError && e.details.kind === 'channel' && /open failed/i.test(e.message);
        if (!transient || Date.now() > deadline - 50 || attempt > 20) throw e;
        await new Promise((r) => setTimeout(r, 10 * 2 ** Math.min(attempt, 4)));
      }
    }
  }

  async function openExecOnce(
    conn: Connection,
    argv: readonly string[],
    timeoutMs: number,
  ): Promise<{ ch: ClientChannel; c: ClientType }> {
    const c = await conn.get();
    const command = shArgv(argv);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        conn.drop(c);
        reject(
          new RemoteError(`opening a channel timed out after ${timeoutMs} ms`, {
            host: target.name,
            argv,
            kind: 'timeout',
          }),
        );
      }, timeoutMs);
      c.exec(command, (err, ch) => {
        clearTimeout(timer);
        if (err) {
          reject(
            new RemoteError(`cannot open a channel: ${err.message}`, { host: target.name, argv, kind: 'channel' }),
          );
        } else {
          resolve({ ch, c });
        }
      });
    });
  }

  const host: SshHost = {
    name: target.name,
    stats,
    async exec(argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
      const timeoutMs = opts.timeoutMs ?? target.execTimeoutMs;
      // The timeout covers the whole command: its wait for a channel, the open, and the run.
      const deadline = Date.now() + timeoutMs;
      const left = () => Math.max(deadline - Date.now(), 1);
      const timedOut = (what: string) =>
        new RemoteError(`command timed out after ${timeoutMs} ms ${what}`, {
          host: target.name,
          argv,
          kind: 'timeout',
        });
      const release = await commands.channels.acquire(timeoutMs);
      if (!release)
        throw timedOut(`waiting for one of the ${COMMAND_CHANNELS} command channels (all busy with other commands)`);
      let opened: { ch: ClientChannel; c: ClientType };
      try {
        opened = await openExec(commands, argv, Math.min(left(), target.connectTimeoutMs));
      } catch (e) {
        release();
        throw e;
      }
      const { ch, c } = opened;
      return await new Promise<ExecResult>((resolve, reject) => {
        const max = opts.maxOutputBytes ?? 1 << 20;
        const out = new TailBuffer(max);
        const err = new TailBuffer(max);
        let exit: { code: number | null; signal: string | null } = { code: null, signal: null };
        ch.on('data', (d: Buffer) => out.push(d));
        ch.stderr.on('data', (d: Buffer) => err.push(d));
        ch.on('exit', (code: number | null, signal?: string) => {
          exit = { code: code ?? null, signal: signal ?? null };
        });
        const timer = setTimeout(() => {
          // Closing the channel alone would leave the command running on the host: end its process group. The
          // channel's slot is freed when the channel has closed.
          endSession(ch, 'KILL');
          reject(timedOut('while it ran (its process group on the host was killed)'));
        }, left());
        const onClientClose = () => {
          clearTimeout(timer);
          release();
          reject(
            new RemoteError('connection lost while the command ran', { host: target.name, argv, kind: 'connect' }),
          );
        };
        c.once('close', onClientClose);
        ch.on('close', (code?: number | null, signal?: string) => {
          clearTimeout(timer);
          release();
          c.removeListener('close', onClientClose);
          const codeOut = exit.code ?? (typeof code === 'number' ? code : null);
          resolve({
            stdout: out.toString(),
            stderr: err.toString(),
            code: codeOut,
            signal: exit.signal ?? signal ?? null,
          });
        });
        ch.end(opts.stdin ?? '');
      });
    },
    stream(argv: readonly string[]): StreamHandle {
      const queue = new ChunkQueue();
      let channel: ClientChannel | undefined;
      let closing = false;
      let release: (() => void) | undefined;
      const done = (async (): Promise<ExecResult> => {
        const slot = await streamSlot();
        release = slot.release;
        try {
          const { ch, c } = await openExec(slot.conn, argv, target.connectTimeoutMs);
          channel = ch;
          if (closing) endSession(ch, 'TERM');
          return await new Promise<ExecResult>((resolve) => {
            const err = new TailBuffer(64 * 1024);
            // ssh2 decrypts each packet in place, in the socket read it came in (up to 64 KiB: two packets, perhaps
            // of two channels), and hands out views into that read: a queued 32 KiB chunk kept all of it alive, and
            // so did a slow stream for a fast one's packets. Copied out (a memcpy, next to nothing beside the
            // classifier), the read is garbage at once and a queued chunk holds its own bytes.
            queue.from(ch, true);
            ch.stderr.on('data', (d: Buffer) => err.push(d));
            const onClientClose = () => {
              queue.end(
                new RemoteError('connection lost while streaming', { host: target.name, argv, kind: 'connect' }),
              );
              resolve({ stdout: '', stderr: err.toString(), code: null, signal: null });
            };
            c.once('close', onClientClose);
            ch.on('close', (code?: number | null, signal?: string) => {
              c.removeListener('close', onClientClose);
              queue.end();
              resolve({
                stdout: '',
                stderr: err.toString(),
                code: typeof code === 'number' ? code : null,
                signal: signal ?? null,
              });
            });
          });
        } catch (e) {
          queue.end(e as Error);
          throw e;
        } finally {
          release?.();
        }
      })();
      done.catch(() => {});
      return {
        chunks: queue,
        done,
        close() {
          closing = true;
          // Closing alone would leave a quiet `tail -F` running on the host.
          if (channel) endSession(channel, 'TERM');
        },
      };
    },
    async http(port: number, req: HttpRequest): Promise<HttpResponse> {
      const to = req.address ?? '127.0.0.1';
      return httpRequest(req, { host: to, port, connect: () => host.tunnel(to, port) });
    },
    async close() {
      closed = true;
      commands.end();
      for (const s of streamConnections) s.end();
      await jumpHost?.close();
    },
    tunnel(toHost: string, toPort: number): Promise<Duplex> {
      return commands.get().then(
        (c) =>
          new Promise<Duplex>((resolve, reject) => {
            const timer = setTimeout(() => {
              commands.drop(c);
              reject(new RemoteError('opening a tunnel timed out', { host: target.name, kind: 'timeout' }));
            }, target.connectTimeoutMs);
            c.forwardOut('127.0.0.1', 0, toHost, toPort, (err, ch) => {
              clearTimeout(timer);
              if (err)
                reject(
                  new RemoteError(`tunnel to ${toHost}:${toPort} refused: ${err.message}`, {
                    host: target.name,
                    kind: 'channel',
                  }),
                );
              else resolve(ch);
            });
          }),
      );
    },
  };
  return host;
}
