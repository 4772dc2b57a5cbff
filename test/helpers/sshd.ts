// A real OpenSSH sshd on 127.0.0.1, with host and user keys made for the test. Tests talk to it exactly as the bot
// talks to a GPU host.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { SshTarget } from '../../src/hosts/ssh.ts';

export interface Sshd {
  port: number;
  dir: string;
  user: string;
  hostKeyPub: string;
  userKeyPath: string;
  knownHostsPath: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Makes a new host key (the "changed host key" case); takes effect on the next start. */
  rotateHostKey(): void;
}

/**
 * How an SSH RemoteHost reaches a test sshd directly: the test's user key, the sshd's pinned host key, short
 * timeouts; at `address` under `name` for a host of a network group (127.0.0.1, gpu-test otherwise).
 */
export function sshTarget(s: Sshd & { address?: string; name?: string }, over: Partial<SshTarget> = {}): SshTarget {
  return {
    name: s.name ?? 'gpu-test',
    host: s.address ?? '127.0.0.1',
    port: s.port,
    username: s.user,
    privateKey: readFileSync(s.userKeyPath),
    knownHostsPath: s.knownHostsPath,
    keepaliveIntervalMs: 2000,
    connectTimeoutMs: 5000,
    execTimeoutMs: 10_000,
    ...over,
  };
}

/**
 * A port nothing listens on now: one the kernel picks (from the ephemeral range), or, with `range`, a random one
 * in [lo, hi). A test whose server may move to the next ports up takes a range below the ephemeral one (32768 up),
 * where no other test's kernel-picked port or outgoing connection lands.
 */
export async function freePort(range?: [number, number]): Promise<number> {
  for (let i = 0; ; i++) {
    const want = range ? range[0] + Math.floor(Math.random() * (range[1] - range[0])) : 0;
    try {
      return await listenOnce(want);
    } catch (e) {
      if (!range || i >= 50) throw e;
    }
  }
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      const got = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(got));
    });
  });
}

export type KeyType = 'ed25519' | 'rsa';

export function keygen(path: string, type: KeyType = 'ed25519'): void {
  rmSync(path, { force: true });
  rmSync(`${path}.pub`, { force: true });
  const size = type === 'rsa' ? ['-b', '3072'] : [];
  execFileSync('ssh-keygen', ['-q', '-t', type, ...size, '-N', '', '-C', 'glm-test', '-f', path]);
}

async function waitListening(port: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  const { connect } = await import('node:net');
  while (Date.now() < until) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

/** Every process below `root` (children, grandchildren...). */
export function descendants(root: number): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift();
    for (const [pid, ppid] of rows) {
      if (ppid === parent) {
        out.push(pid);
        queue.push(pid);
      }
    }
  }
  return out;
}

/** Live members of a process group, one `pid pgid stat args` line each (zombies do not count), from ps. */
export function groupMembers(pgid: number): string[] {
  return execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => Number(f[1]) === pgid && !f[2]?.startsWith('Z'))
    .map((f) => f.join(' '));
}

export interface TestUser {
  name: string;
  uid: number;
  gid: number;
}

/**
 * The account the tests log in as. As root we use a dedicated account with a plain POSIX shell, as a GPU host should
 * have for the bot: root's own login shell may run slow or interactive start-up files on every SSH command.
 */
export function testUser(): TestUser {
  const me = userInfo();
  if (me.uid !== 0) return { name: me.username, uid: me.uid, gid: me.gid };
  const name = 'glmtest';
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
  } catch {
    try {
      // `-p '*'`: no password, but not a locked account (sshd without PAM refuses locked accounts even for keys).
      execFileSync('useradd', ['-m', '-s', '/bin/sh', '-p', '*', name], { stdio: 'ignore' });
    } catch {
      // another test file created it at the same moment
    }
  }
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  return { name, uid, gid };
}

/** A fresh directory the test user owns (a host-side work directory). */
export function userDir(prefix = 'glm-host-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const u = testUser();
  chownSync(dir, u.uid, u.gid);
  chmodSync(dir, 0o755);
  return dir;
}

/** The test sshd's config: keys only, no PAM, forwarding on (the bot's HTTP tunnels), OpenSSH's 10 sessions. */
export function sshdConfig(
  dir: string,
  listen: string,
  port: number,
  hostKey: string,
  setEnv: Record<string, string> = {},
): string {
  return [
    // sshd_config(5) SetEnv: variables every session gets, as a site's login environment would set them.
    ...Object.entries(setEnv).map(([k, v]) => `SetEnv ${k}=${v}`),
    `Port ${port}`,
    `ListenAddress ${listen}`,
    `HostKey ${hostKey}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'UsePAM no',
    'StrictModes no',
    'PermitRootLogin prohibit-password',
    'AllowTcpForwarding yes',
    'MaxSessions 10',
    // A bot reaching a fleet opens one connection per host at once (npm run bench: 64): OpenSSH's default
    // MaxStartups 10:30:100 would drop most of them before they authenticate.
    'MaxStartups 200',
    'LogLevel ERROR',
    '',
  ].join('\n');
}

/** A directory for one test sshd: a fresh host key, a fresh user key, and that user key authorized. */
export function sshdKeys(
  prefix: string,
  hostKeyType: KeyType = 'ed25519',
): { dir: string; hostKey: string; userKeyPath: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  mkdirSync('/run/sshd', { recursive: true });
  const hostKey = join(dir, `host_${hostKeyType}`);
  const userKeyPath = join(dir, 'user_ed25519');
  keygen(hostKey, hostKeyType);
  keygen(userKeyPath);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${userKeyPath}.pub`));
  return { dir, hostKey, userKeyPath };
}

/**
 * `hostKeyType`: the sshd's only host key (an RSA-only host is what older fleets have). `setEnv`: variables every
 * session gets (sshd_config SetEnv), as a login node's site environment would set them.
 */
export async function startSshd(opts: { hostKeyType?: KeyType; setEnv?: Record<string, string> } = {}): Promise<Sshd> {
  const { dir, hostKey, userKeyPath } = sshdKeys('glm-sshd-', opts.hostKeyType);
  const port = await freePort();
  const user = testUser().name;
  writeFileSync(join(dir, 'sshd_config'), sshdConfig(dir, '127.0.0.1', port, hostKey, opts.setEnv));
  let proc: ChildProcess | undefined;
  const knownHostsPath = join(dir, 'known_hosts');
  const writeKnownHosts = (): string => {
    const pub = readFileSync(`${hostKey}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
    writeFileSync(knownHostsPath, `[127.0.0.1]:${port} ${pub}\n`);
    return pub;
  };
  const sshd: Sshd = {
    port,
    dir,
    user,
    hostKeyPub: writeKnownHosts(),
    userKeyPath,
    knownHostsPath,
    async start() {
      proc = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config')], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      proc.stderr?.on('data', (d) => {
        err += String(d);
      });
      if (!(await waitListening(port, 5000))) throw new Error(`sshd did not start: ${err}`);
    },
    async stop() {
      const p = proc;
      proc = undefined;
      if (!p || p.exitCode !== null || p.pid === undefined) return;
      // Established sessions are served by forked sshd children: kill the whole tree, as a host going away would.
      // (Detached servers started with setsid were reparented away and survive, as on a real host.)
      const victims = [p.pid, ...descendants(p.pid)];
      await new Promise<void>((resolve) => {
        p.once('exit', () => resolve());
        for (const pid of victims) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      });
    },
    rotateHostKey() {
      keygen(hostKey, opts.hostKeyType);
    },
  };
  await sshd.start();
  return sshd;
}
