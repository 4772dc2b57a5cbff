import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RemoteError } from '../../src/errors.ts';
import { createSshHost, type SshTarget } from '../../src/hosts/ssh.ts';
import { freePort, sshTarget, userDir } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

/** Remote processes (the sshd runs on this machine) whose command line contains `needle`. */
function processesMatching(needle: string): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(needle) && !l.includes('ps -eo'));
}

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

const shared = sshdWithBots();
const target = (over: Partial<SshTarget> = {}): SshTarget => sshTarget(shared.sshd, over);

describe('ssh host', () => {
  it('runs argv with exit status, stdout and stderr', async () => {
    const h = createSshHost(target());
    const r = await h.exec(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r).toMatchObject({ stdout: 'out\n', stderr: 'err\n', code: 3 });
    await h.close();
  });

  it('passes hostile arguments literally: no canary file appears', async () => {
    const dir = userDir('glm-canary-');
    const canary = join(dir, 'pwned');
    const hostile = [
      `$(touch ${canary})`,
      `\`touch ${canary}\``,
      `; touch ${canary}`,
      `' ; touch ${canary}; '`,
      `"; touch ${canary}; "`,
      `a\ntouch ${canary}`,
      '-rf',
      `&& touch ${canary}`,
      `| touch ${canary}`,
    ];
    const h = createSshHost(target());
    const r = await h.exec(['printf', '%s\\0', ...hostile]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\0').slice(0, -1)).toEqual(hostile);
    expect(existsSync(canary)).toBe(false);
    await h.close();
  });

  it('carries 50 concurrent commands on one connection (OpenSSH allows 10 sessions)', async () => {
    const h = createSshHost(target());
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => h.exec(['echo', String(i)])));
    expect(results.map((r) => r.stdout.trim())).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
    expect(h.stats.connectionsOpened).toBe(1);
    await h.close();
  });

  it('refuses an unknown host key with its fingerprint and how to trust it', async () => {
    const empty = join(mkdtempSync(join(tmpdir(), 'glm-kh-')), 'known_hosts');
    writeFileSync(empty, '');
    const h = createSshHost(target({ knownHostsPath: empty }));
    const err = await h.exec(['true']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteError);
    const re = err as RemoteError;
    expect(re.details.kind).toBe('host-key');
    expect(re.message).toMatch(/not known: it presented SHA256:[A-Za-z0-9+/]{43} \(ssh-ed25519\)/);
    expect(re.details.hint).toContain(`[127.0.0.1]:${shared.sshd.port} ssh-ed25519 `);
  });

  it('accepts a hashed known_hosts entry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-kh-'));
    const file = join(dir, 'known_hosts');
    writeFileSync(file, readFileSync(shared.sshd.knownHostsPath));
    const { execFileSync } = await import('node:child_process');
    execFileSync('ssh-keygen', ['-H', '-f', file], { stdio: 'ignore' });
    expect(readFileSync(file, 'utf8')).toMatch(/^\|1\|/);
    const h = createSshHost(target({ knownHostsPath: file }));
    expect((await h.exec(['true'])).code).toBe(0);
    await h.close();
  });

  it('refuses a wrong user key without retrying', async () => {
    const { execFileSync } = await import('node:child_process');
    const dir = mkdtempSync(join(tmpdir(), 'glm-key-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
    const h = createSshHost(target({ privateKey: readFileSync(join(dir, 'k')) }));
    const started = Date.now();
    const err = (await h.exec(['true']).catch((e: unknown) => e)) as RemoteError;
    expect(err.details.kind).toBe('auth');
    expect(err.details.hint).toMatch(/authorized_keys/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('reports an unreachable host within the connect timeout', async () => {
    const port = await freePort();
    const h = createSshHost(target({ port, connectTimeoutMs: 1500 }));
    const started = Date.now();
    const err = (await h.exec(['true']).catch((e: unknown) => e)) as RemoteError;
    expect(err).toBeInstanceOf(RemoteError);
    expect(err.details.kind).toBe('connect');
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('a connection the server closes mid-handshake (FIN, no error) is retried, not waited on forever', async () => {
    // A loopback relay in front of the sshd: the first two connections get the server's banner and then a clean
    // close, as from an sshd killed during the handshake; later ones reach the sshd.
    let connections = 0;
    const relay = createNetServer((sock) => {
      connections += 1;
      if (connections <= 2) {
        sock.once('data', () => sock.end('SSH-2.0-OpenSSH_9.2p1\r\n'));
        return;
      }
      const up = connect(shared.sshd.port, '127.0.0.1');
      sock.pipe(up).pipe(sock);
      up.on('error', () => sock.destroy());
      sock.on('error', () => up.destroy());
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const port = (relay.address() as { port: number }).port;
    const known = join(mkdtempSync(join(tmpdir(), 'glm-relay-')), 'known_hosts');
    writeFileSync(known, `[127.0.0.1]:${port} ${shared.sshd.hostKeyPub}\n`);
    const h = createSshHost(target({ port, knownHostsPath: known }));
    try {
      const r = await h.exec(['echo', 'through']);
      expect(r.stdout).toBe('through\n');
      expect(connections).toBe(3);
    } finally {
      await h.close();
      relay.close();
    }
  });

  it('times out a command that runs too long', async () => {
    const h = createSshHost(target());
    const err = (await h.exec(['sleep', '5'], { timeoutMs: 300 }).catch((e: unknown) => e)) as RemoteError;
    expect(err.details.kind).toBe('timeout');
    await h.close();
  });

  it('streams output and ends the remote command on close', async () => {
    const dir = userDir('glm-stream-');
    const file = join(dir, 'log');
    writeFileSync(file, 'one\n', { mode: 0o644 });
    const h = createSshHost(target());
    const s = h.stream(['tail', '-c', '+0', '-F', '--', file]);
    const got: string[] = [];
    for await (const chunk of s.chunks) {
      got.push(String(chunk));
      if (got.join('').includes('one')) break;
    }
    s.close();
    await s.done;
    const ps = await h.exec(['sh', '-c', `ps -eo args | grep -c "[t]ail -c +0 -F -- ${file}" || true`]);
    expect(ps.stdout.trim()).toBe('0');
    await h.close();
  });

  it('reaches an HTTP server on the host loopback through a tunnel', async () => {
    const srv = createServer((req, res) => res.end(`hello ${req.url}`));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    const h = createSshHost(target());
    const r = await h.http(port, { method: 'GET', path: '/health' });
    expect(r).toMatchObject({ status: 200, body: 'hello /health' });
    await h.close();
    srv.close();
  });

  it('runs commands while more log streams than one connection has sessions follow files on the host', async () => {
    const dir = userDir('glm-streams-');
    const h = createSshHost(target());
    // 12 followers: more than OpenSSH's 10 sessions per connection, more than the command budget.
    const streams = Array.from({ length: 12 }, (_, i) => {
      const file = join(dir, `log${i}`);
      writeFileSync(file, `line ${i}\n`, { mode: 0o644 });
      return h.stream(['tail', '-c', '+0', '-F', '--', file]);
    });
    for (const s of streams) {
      for await (const chunk of s.chunks) if (String(chunk).includes('line')) break;
    }
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => h.exec(['echo', `cmd ${i}`], { timeoutMs: 5000 })),
    );
    expect(results.map((r) => r.stdout.trim())).toEqual(Array.from({ length: 10 }, (_, i) => `cmd ${i}`));
    for (const s of streams) s.close();
    await Promise.all(streams.map((s) => s.done));
    await h.close();
  }, 30_000);

  it("a command's timeout covers its wait for a channel", async () => {
    const h = createSshHost(target());
    const busy = Array.from({ length: 8 }, () => h.exec(['sleep', '3'], { timeoutMs: 10_000 }));
    const err = (await h.exec(['true'], { timeoutMs: 300 }).catch((e: unknown) => e)) as RemoteError;
    expect(err).toBeInstanceOf(RemoteError);
    expect(err.details.kind).toBe('timeout');
    expect(err.message).toMatch(/waiting for one of the 8 command channels/);
    await Promise.all(busy);
    await h.close();
  }, 20_000);

  it("kills a timed-out command's process group on the host, even one that ignores TERM", async () => {
    const marker = `${4000 + Math.floor(Math.random() * 900)}.${process.pid}`;
    const started = join(userDir('glm-kill-'), 'started');
    const h = createSshHost(target());
    const script = `trap '' TERM; sleep ${marker} & sleep ${marker} & echo $$ > ${started}; wait`;
    const err = (await h.exec(['sh', '-c', script], { timeoutMs: 1000 }).catch((e: unknown) => e)) as RemoteError;
    expect(err.details.kind).toBe('timeout');
    expect(existsSync(started)).toBe(true);
    expect(await until(() => processesMatching(`sleep ${marker}`).length === 0, 8000)).toBe(true);
    await h.close();
  }, 20_000);
});

describe('ssh host pinned by an RSA key', () => {
  const rsaOnly = sshdWithBots({ hostKeyType: 'rsa' });

  it('connects to an sshd whose only host key is RSA (SHA-2 signatures, as OpenSSH 8.8+ requires)', async () => {
    expect(readFileSync(rsaOnly.sshd.knownHostsPath, 'utf8')).toMatch(/ ssh-rsa /);
    const h = createSshHost(sshTarget(rsaOnly.sshd));
    expect((await h.exec(['echo', 'rsa ok'])).stdout).toBe('rsa ok\n');
    await h.close();
  });

  it('an RSA-only pin for a host that offers ed25519 says so, not "firewall"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-kh-'));
    const file = join(dir, 'known_hosts');
    // The RSA key pinned for the ed25519-only sshd's address.
    writeFileSync(file, `[127.0.0.1]:${shared.sshd.port} ${rsaOnly.sshd.hostKeyPub}\n`);
    const h = createSshHost(target({ knownHostsPath: file }));
    const err = (await h.exec(['true']).catch((e: unknown) => e)) as RemoteError;
    expect(err).toBeInstanceOf(RemoteError);
    expect(err.details.kind).toBe('host-key');
    expect(err.message).toMatch(/no pinned key of the type the host offers/);
    expect(err.message).toMatch(/offers ssh-ed25519/);
    expect(err.message).toMatch(/pins only ssh-rsa/);
    expect(err.details.hint).not.toMatch(/firewall/);
  });
});
