// Issue 15's fleet figure: `status` over 64 hosts against 16, each host its own SSH connection (host entries with
// names of their own, which an ssh config maps to the loopback sshd), every host holding one live attempt whose record
// `status` must check there. The checks run at once, so 4x the hosts should cost well under 4x the time; where they do
// not, the rows after say where the time goes, each beside OpenSSH's own client doing the same in the same run.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { validate } from '../src/config/load.ts';
import { parsedKey } from '../src/hosts/ssh.ts';
import { resolveSshAliases } from '../src/hosts/ssh-config.ts';
import { PACKAGE_ROOT } from '../src/package-root.ts';
import { makeBot, seedUnwatched, standinHost, type TestBot } from '../test/helpers/app.ts';
import { descendants, type Sshd } from '../test/helpers/sshd.ts';
import { ms, pct, type Row, ratio } from './stats.ts';

const RUNS = 7;

const names = (n: number) => Array.from({ length: n }, (_, i) => `h${i}`);

/** An ssh config naming h0..h(n-1) as the loopback sshd: each host a name of its own for `ssh -G`, as in a fleet. */
function sshConfig(dir: string, n: number): string {
  const file = join(dir, 'ssh_config');
  writeFileSync(file, `Host ${names(n).join(' ')}\n  HostName 127.0.0.1\n`);
  return file;
}

function fleet(sshd: Sshd, n: number): TestBot {
  const dataDir = mkdtempSync(join(tmpdir(), `glm-bench-fleet-${n}-`));
  const config = sshConfig(dataDir, n);
  const hosts: Record<string, unknown> = {};
  for (const name of names(n)) {
    const workdir = join(dataDir, name);
    mkdirSync(workdir);
    const h = standinHost(sshd, workdir) as { ssh: Record<string, unknown> };
    hosts[name] = { ...h, ssh: { ...h.ssh, host: name, ssh_config: config } };
  }
  const loaded = {
    config: validate({ default_host: 'h0', hosts }, 'bench config'),
    source: 'bench config',
    dataDir,
    profilesDir: join(PACKAGE_ROOT, 'profiles'),
    defaultHost: 'h0',
  };
  return makeBot(loaded, { dataDir, workdir: join(dataDir, 'h0') });
}

/** CPU time (user + system, ms) of the sshd and everything under it: its connections' sessions and their shells. */
function sshdCpuMs(sshd: Sshd): number {
  const root = Number(readFileSync(join(sshd.dir, 'sshd.pid'), 'utf8'));
  let ticks = 0;
  for (const pid of [root, ...descendants(root)]) {
    try {
      // utime, stime, cutime, cstime: fields 14-17 of /proc/PID/stat, after the command name in parentheses.
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

interface StatusFigures {
  wallMs: number;
  botCpuMs: number;
  sshdCpuMs: number;
}

/** Median `status --json`; `fresh`: every host connected anew each run (else over the pool's kept connections). */
async function statusTime(sshd: Sshd, n: number, fresh: boolean): Promise<StatusFigures> {
  const b = fleet(sshd, n);
  const times: number[] = [];
  const bot: number[] = [];
  const host: number[] = [];
  if (!fresh) {
    seedUnwatched(b.app, names(n));
    await b.run('status --json');
  }
  for (let i = 0; i < RUNS; i++) {
    seedUnwatched(b.app, names(n));
    if (fresh) await b.app.engine.pool.closeAll();
    const cpu = process.cpuUsage();
    const sshdCpu = sshdCpuMs(sshd);
    const t = performance.now();
    const r = await b.run('status --json');
    times.push(performance.now() - t);
    const used = process.cpuUsage(cpu);
    bot.push((used.user + used.system) / 1000);
    host.push(sshdCpuMs(sshd) - sshdCpu);
    const closed = (JSON.parse(r.text) as { closedSinceLastLook: number[] }).closedSinceLastLook;
    if (r.exitCode !== 0 || closed.length !== n) throw new Error(`status over ${n} hosts: ${r.text.slice(0, 300)}`);
  }
  await b.app.close();
  // CPU as the mean of the runs: the kernel counts it in 10 ms ticks, too coarse for one run.
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  return { wallMs: pct(times, 50), botCpuMs: mean(bot), sshdCpuMs: mean(host) };
}

/** Median wall time of `n` concurrent `exec true`, one per host, over the bot's kept connections. */
async function execTrue(sshd: Sshd, n: number): Promise<number> {
  const b = fleet(sshd, n);
  const pool = b.app.engine.pool;
  const all = () => Promise.all(names(n).map((h) => pool.get(h).exec(['true'])));
  await all();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await all();
    times.push(performance.now() - t);
  }
  await b.app.close();
  return pct(times, 50);
}

function ssh(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('ssh', args, { timeout: 30_000 }, (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * The same with OpenSSH's client: `fresh`, n concurrent `ssh HOST true`, each a connection of its own (key exchange,
 * authentication, one session); else n concurrent `ssh HOST true` over a ControlMaster connection per host.
 */
async function openssh(sshd: Sshd, n: number, fresh: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'glm-bench-openssh-'));
  const base = [
    '-F',
    sshConfig(dir, n),
    '-o',
    'BatchMode=yes',
    '-o',
    `UserKnownHostsFile=${sshd.knownHostsPath}`,
    '-i',
    sshd.userKeyPath,
    '-p',
    String(sshd.port),
    '-l',
    sshd.user,
  ];
  const masters: ChildProcess[] = [];
  const mux = (i: number) => (fresh ? [] : ['-o', `ControlPath=${join(dir, `m${i}`)}`]);
  if (!fresh) {
    for (let i = 0; i < n; i++)
      masters.push(spawn('ssh', [...base, ...mux(i), '-o', 'ControlMaster=yes', '-N', `h${i}`], { stdio: 'ignore' }));
    // Ready once each master answers a check.
    for (let i = 0; i < n; i++) {
      for (let tries = 0; ; tries++) {
        try {
          execFileSync('ssh', [...base, ...mux(i), '-O', 'check', `h${i}`], { stdio: 'ignore' });
          break;
        } catch (e) {
          if (tries > 200) throw e;
          await new Promise((r) => setTimeout(r, 25));
        }
      }
    }
  }
  const all = () => Promise.all(names(n).map((h, i) => ssh([...base, ...mux(i), h, 'true'])));
  await all();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await all();
    times.push(performance.now() - t);
  }
  for (const m of masters) m.kill();
  return pct(times, 50);
}

/** `ssh -G` for n names: one after another (as the bot did when it made each host), and all at once (as it does). */
async function sshG(n: number): Promise<{ serialMs: number; concurrentMs: number }> {
  const config = sshConfig(mkdtempSync(join(tmpdir(), 'glm-bench-sshg-')), n);
  const serial: number[] = [];
  const together: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let t = performance.now();
    for (const h of names(n)) execFileSync('ssh', ['-F', config, '-G', '--', h], { stdio: 'ignore' });
    serial.push(performance.now() - t);
    t = performance.now();
    const got = await resolveSshAliases(names(n).map((h) => [config, h] as const));
    together.push(performance.now() - t);
    if (got.size !== n) throw new Error(`ssh -G answered for ${got.size} of ${n} names`);
  }
  return { serialMs: pct(serial, 50), concurrentMs: pct(together, 50) };
}

export async function benchStatusHosts(sshd: Sshd): Promise<Row[]> {
  const rows: Row[] = [];
  const figures: Record<string, [StatusFigures, StatusFigures]> = {};
  for (const fresh of [false, true]) {
    const s16 = await statusTime(sshd, 16, fresh);
    const s64 = await statusTime(sshd, 64, fresh);
    figures[String(fresh)] = [s16, s64];
    const what = fresh ? 'connecting to every host first' : 'connections kept (a running bot)';
    rows.push({
      metric: `status over 64 hosts, one live attempt each, ${what} (median of ${RUNS})`,
      value: ms(s64.wallMs),
      reference: `${ms(s16.wallMs)} over 16 hosts`,
      ratio: ratio(s64.wallMs, s16.wallMs),
      target: fresh ? '- (see below)' : '< 2x (see below)',
    });
  }
  const [k16, k64] = figures.false!;
  const [f16, f64] = figures.true!;
  // One row of "64 hosts against 16", its ratio the scale figure.
  const scaleRow = (metric: string, v16: number, v64: number): Row => ({
    metric,
    value: ms(v64),
    reference: `${ms(v16)} over 16 hosts`,
    ratio: ratio(v64, v16),
    target: '-',
  });
  const cpuRow = (label: string, a: StatusFigures, b: StatusFigures, key: keyof StatusFigures): Row =>
    scaleRow(`  ${label}`, a[key], b[key]);
  // Where the kept-connection time goes: the bot's own CPU, and the host side's (each host's sshd forks a session
  // and a login shell per command). On a real fleet the host side runs on 64 machines; here all on this one.
  rows.push(cpuRow('kept: the bot process CPU per status, 64 hosts', k16, k64, 'botCpuMs'));
  rows.push(cpuRow('kept: sshd + sessions + shells CPU per status, 64 hosts (the hosts side)', k16, k64, 'sshdCpuMs'));
  const t16 = await execTrue(sshd, 16);
  const t64 = await execTrue(sshd, 64);
  rows.push(
    scaleRow('  kept: 64 concurrent `exec true` over the kept connections (the floor: one session per host)', t16, t64),
  );
  const o16 = await openssh(sshd, 16, false);
  const o64 = await openssh(sshd, 64, false);
  rows.push(
    scaleRow(
      "  kept: OpenSSH's ssh, 64 concurrent `ssh HOST true` over a ControlMaster per host (reference)",
      o16,
      o64,
    ),
  );
  // (The sshd side of a fresh connection runs in processes that come and go; only the bot's side is counted.)
  rows.push(cpuRow('fresh: the bot process CPU per status, 64 hosts (ssh2 key exchanges)', f16, f64, 'botCpuMs'));
  const of16 = await openssh(sshd, 16, true);
  const of64 = await openssh(sshd, 64, true);
  rows.push(scaleRow("  fresh: OpenSSH's ssh, 64 concurrent `ssh HOST true`, each connecting (reference)", of16, of64));
  const g = await sshG(64);
  rows.push({
    metric: '  fresh: ssh -G for 64 host names, all at once (HostPool.prepare)',
    value: ms(g.concurrentMs),
    reference: `${ms(g.serialMs)} one after another (before)`,
    ratio: ratio(g.concurrentMs, g.serialMs),
    target: '-',
  });
  const k = keyDecrypt(8);
  rows.push({
    metric: '  fresh: a passphrase-protected key for 8 hosts, decrypted once (parsedKey)',
    value: ms(k.onceMs),
    reference: `${ms(k.perHostMs)} decrypted at each connect (before)`,
    ratio: ratio(k.onceMs, k.perHostMs),
    target: '-',
  });
  return rows;
}

/** ssh2's parse of an OpenSSH key with a passphrase (bcrypt KDF) for n hosts: at each connect, or once. */
function keyDecrypt(n: number): { perHostMs: number; onceMs: number } {
  const key = join(mkdtempSync(join(tmpdir(), 'glm-bench-key-')), 'id_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'bench passphrase', '-f', key]);
  const raw = readFileSync(key);
  let t = performance.now();
  for (let i = 0; i < n; i++) ssh2.utils.parseKey(raw, 'bench passphrase');
  const perHostMs = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < n; i++) parsedKey(ssh2.utils.parseKey, Buffer.from(raw), 'bench passphrase');
  return { perHostMs, onceMs: performance.now() - t };
}
