// A host reached over SSH (ssh2): one connection per host carrying many channels, host keys pinned from
// known_hosts, keepalive, reconnect with backoff on demand, and a timeout on every operation.
import type { Duplex } from 'node:stream';
import ssh2, { type ClientChannel, type Client as ClientType, type ConnectConfig } from 'ssh2';
import { RemoteError } from '../errors.ts';
import { httpRequest } from './http.ts';
import { readKnownHosts, type Verdict, verifyHostKey } from './known-hosts.ts';
import { ChunkQueue, TailBuffer } from './output.ts';
import { shArgv } from './quote.ts';
import { Semaphore } from './semaphore.ts';
import type { ExecOptions, ExecResult, HttpRequest, HttpResponse, RemoteHost, StreamHandle } from './types.ts';

// ssh2 is CommonJS whose named exports Node's ESM loader cannot see: take them off the default export.
const { Client } = ssh2;

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
}

export interface SshStats {
  connectionsOpened: number;
}

const MAX_CHANNELS = 8;
const RETRYABLE = new Set(['client-socket', 'client-timeout']);

export interface SshHost extends RemoteHost {
  readonly stats: SshStats;
  /** A raw TCP stream to toHost:toPort as seen from the host (SSH direct-tcpip); used for HTTP and jump hosts. */
  tunnel(toHost: string, toPort: number): Promise<Duplex>;
}

export function createSshHost(target: SshTarget): SshHost {
  const stats: SshStats = { connectionsOpened: 0 };
  const channels = new Semaphore(MAX_CHANNELS);
  let client: ClientType | undefined;
  let connecting: Promise<ClientType> | undefined;
  let jumpHost: SshHost | undefined;
  let closed = false;

  function connectOnce(): Promise<ClientType> {
    return new Promise((resolve, reject) => {
      const c = new Client();
      let verdict: Verdict | undefined;
      const known = readKnownHosts(target.knownHostsPath, target.host, target.port);
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
      };
      // Offer only the key types we have pins for, so the server presents one we can check.
      const types = [...new Set(known.keys.map((k) => k.type))];
      if (types.length > 0) cfg.algorithms = { serverHostKey: types as never };
      if (target.privateKey) cfg.privateKey = target.privateKey;
      if (target.passphrase) cfg.passphrase = target.passphrase;
      if (target.agent) cfg.agent = target.agent;
      c.on('ready', () => {
        // Small request/response exchanges (channel opens, probes) must not wait on Nagle's algorithm.
        c.setNoDelay(true);
        stats.connectionsOpened += 1;
        resolve(c);
      });
      c.on('error', (err: Error & { level?: string }) => {
        if (verdict && !verdict.ok) {
          reject(
            new RemoteError(verdict.message, {
              host: target.name,
              kind: 'host-key',
              hint: verdict.hint,
            }),
          );
        } else if (err.level === 'client-authentication') {
          reject(
            new RemoteError(`${target.username}@${target.host}:${target.port} refused our key (${err.message})`, {
              host: target.name,
              kind: 'auth',
              hint: `check the user name and that the public key of the configured key file is in ~${target.username}/.ssh/authorized_keys on the host`,
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
        if (client === c) client = undefined;
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

  async function connectWithBackoff(): Promise<ClientType> {
    const deadline = Date.now() + target.connectTimeoutMs;
    let delay = 200;
    for (;;) {
      try {
        return await connectOnce();
      } catch (e) {
        const level = (e as { level?: string }).level;
        // Never retry a host-key or authentication failure: those need a person.
        if (!level || !RETRYABLE.has(level) || Date.now() + delay > deadline) throw e;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  async function getClient(): Promise<ClientType> {
    if (closed) throw new RemoteError('host connection is closed', { host: target.name, kind: 'connect' });
    if (client) return client;
    connecting ??= connectWithBackoff().finally(() => {
      connecting = undefined;
    });
    client = await connecting;
    return client;
  }

  function dropClient(c: ClientType): void {
    if (client === c) client = undefined;
    c.destroy();
  }

  /**
   * Opens an exec channel, with a timeout on the open itself (a half-open transport never calls back). sshd frees a
   * session slot a moment after the channel's close reaches us, so an "open failed" right after a close is retried.
   */
  async function openExec(argv: readonly string[], timeoutMs: number): Promise<{ ch: ClientChannel; c: ClientType }> {
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await openExecOnce(argv, Math.max(deadline - Date.now(), 1));
      } catch (e) {
        const transient = e instanceof RemoteError && e.details.kind === 'channel' && /open failed/i.test(e.message);
        if (!transient || Date.now() > deadline - 50 || attempt > 20) throw e;
        await new Promise((r) => setTimeout(r, 10 * 2 ** Math.min(attempt, 4)));
      }
    }
  }

  async function openExecOnce(
    argv: readonly string[],
    timeoutMs: number,
  ): Promise<{ ch: ClientChannel; c: ClientType }> {
    const c = await getClient();
    const command = shArgv(argv);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        dropClient(c);
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
      const release = await channels.acquire();
      try {
        const { ch, c } = await openExec(argv, Math.min(timeoutMs, target.connectTimeoutMs));
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
            ch.close();
            reject(
              new RemoteError(`command timed out after ${timeoutMs} ms`, { host: target.name, argv, kind: 'timeout' }),
            );
          }, timeoutMs);
          const onClientClose = () => {
            clearTimeout(timer);
            reject(
              new RemoteError('connection lost while the command ran', { host: target.name, argv, kind: 'connect' }),
            );
          };
          c.once('close', onClientClose);
          ch.on('close', (code?: number | null, signal?: string) => {
            clearTimeout(timer);
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
      } finally {
        release();
      }
    },
    stream(argv: readonly string[]): StreamHandle {
      const queue = new ChunkQueue();
      let channel: ClientChannel | undefined;
      let closing = false;
      let release: (() => void) | undefined;
      const done = (async (): Promise<ExecResult> => {
        release = await channels.acquire();
        try {
          const { ch, c } = await openExec(argv, target.connectTimeoutMs);
          channel = ch;
          if (closing) {
            ch.signal('TERM');
            ch.close();
          }
          return await new Promise<ExecResult>((resolve) => {
            const err = new TailBuffer(64 * 1024);
            ch.on('data', (d: Buffer) => queue.push(d));
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
          if (channel) {
            // OpenSSH >= 7.9 delivers TERM to the session's process group; closing alone would leave a quiet
            // `tail -F` running on the host.
            channel.signal('TERM');
            channel.close();
          }
        },
      };
    },
    async http(port: number, req: HttpRequest): Promise<HttpResponse> {
      return httpRequest(req, { host: '127.0.0.1', port, connect: () => host.tunnel('127.0.0.1', port) });
    },
    async close() {
      closed = true;
      client?.end();
      client = undefined;
      await jumpHost?.close();
    },
    tunnel(toHost: string, toPort: number): Promise<Duplex> {
      return getClient().then(
        (c) =>
          new Promise<Duplex>((resolve, reject) => {
            const timer = setTimeout(() => {
              dropClient(c);
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
