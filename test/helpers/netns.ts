// Several test "hosts", each a Linux network namespace with its own address and its own sshd, joined by a bridge in
// the root namespace. A multi-node test can then show that the right address is used: a server bound on node0's
// address is reachable from node1, while node1's 127.0.0.1 is node1's own. Without root (no namespaces) the group
// falls back to plain sshds on 127.0.0.1, and tests assert only what a single machine can show.
//
// Everything made here is named with this process's pid and a counter, so parallel vitest workers and repeated runs
// never collide, and what a crashed run left behind can be told apart from what a live run owns.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { alive } from './proc.ts';
import { descendants, keygen, type Sshd, sshdConfig, sshdKeys, startSshd, testUser } from './sshd.ts';

export interface NetHost extends Sshd {
  /** The IP the bot (root namespace) and the other hosts of the group reach this host on. */
  address: string;
  /** The host's name in the group: node0, node1, ... */
  name: string;
  /** The network namespace the host lives in (netns kind only), for `ip netns exec` / `ip -n` in a test. */
  netns?: string;
}

export interface HostGroup {
  kind: 'netns' | 'loopback';
  hosts: NetHost[];
  /** Stops every sshd and removes everything the group made. Idempotent; never throws on what is already gone. */
  close(): Promise<void>;
}

export interface HostGroupOptions {
  /** Force a kind; default: netns when netnsAvailable(), else loopback. */
  kind?: HostGroup['kind'];
}

const SSHD = '/usr/sbin/sshd';
/** Marks our links (ifalias) so a later run can find leftovers of a crashed one without guessing from names. */
const ALIAS = 'glm-test-harness';
/** Namespace names: glmt-<pid>-<counter>-node<i>. */
const NS_RE = /^glmt-(\d+)-/;

function ip(args: readonly string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** For teardown: whatever is already gone stays gone. */
function ipQuiet(args: readonly string[]): void {
  try {
    ip(args);
  } catch {
    // already gone
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

// --- availability ----------------------------------------------------------------------------------------------

let available: boolean | undefined;

/** Root, and namespaces, veth pairs and bridges can actually be made here (probed once per process). */
export function netnsAvailable(): boolean {
  available ??= probe();
  return available;
}

function probe(): boolean {
  if (process.getuid?.() !== 0 || !existsSync(SSHD)) return false;
  const tag = process.pid.toString(36);
  const ns = `glmt-${process.pid}-probe`;
  const br = `glp${tag}b`;
  const veth = `glp${tag}v`;
  try {
    ip(['netns', 'add', ns]);
    ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    ip(['link', 'add', br, 'type', 'bridge']);
    return true;
  } catch {
    return false;
  } finally {
    ipQuiet(['link', 'del', veth]);
    ipQuiet(['link', 'del', br]);
    ipQuiet(['netns', 'del', ns]);
  }
}

// --- what a group made, for teardown (also from the exit handler, synchronously) ---------------------------------

interface Made {
  namespaces: string[];
  /** Root-namespace links: the veth ends (deleting one deletes its peer at once) and the bridge, in that order. */
  links: string[];
}

/** Groups not yet closed in this process. */
const live = new Set<Made>();
let exitHookInstalled = false;

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

function teardownLive(): void {
  for (const m of live) teardownSync(m);
  live.clear();
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A worker that exits without closing its groups (a crash, a forgotten afterAll) must not leave namespaces and
  // bridges on the machine. Only synchronous work is possible here.
  process.on('exit', teardownLive);
  // Vitest ends its fork workers with SIGTERM, which skips 'exit' handlers: tear down, then die of the same signal
  // as we would have, unless someone else handles it. SIGKILL skips all of this; sweepStale catches that later.
  for (const sig of SIGNALS) {
    process.once(sig, function onSignal() {
      teardownLive();
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    });
  }
}

function nsPids(ns: string): number[] {
  try {
    return ip(['netns', 'pids', ns])
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((p) => Number.isInteger(p) && p > 0);
  } catch {
    return [];
  }
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function teardownSync(m: Made): void {
  for (const ns of m.namespaces) killAll(nsPids(ns));
  // Links first and explicitly: a namespace's own teardown (and so its veth's) happens later, in a kernel work queue.
  for (const link of m.links) ipQuiet(['link', 'del', link]);
  for (const ns of m.namespaces) ipQuiet(['netns', 'del', ns]);
}

function ownedHere(name: string): boolean {
  for (const m of live) if (m.namespaces.includes(name) || m.links.includes(name)) return true;
  return false;
}

/** Leftovers of runs that died without their exit handler (SIGKILL), or of an earlier process with our pid. */
function stale(pid: number, name: string): boolean {
  return pid === process.pid ? !ownedHere(name) : !alive(pid);
}

function sweepStale(): void {
  for (const line of ip(['netns', 'list']).split('\n')) {
    const name = line.trim().split(/\s+/)[0] ?? '';
    const m = NS_RE.exec(name);
    if (m && stale(Number(m[1]), name)) teardownSync({ namespaces: [name], links: [] });
  }
  const links = JSON.parse(ip(['-j', 'link', 'show']) || '[]') as Array<{ ifname: string; ifalias?: string }>;
  for (const l of links) {
    const m = l.ifalias?.match(new RegExp(`^${ALIAS} pid=(\\d+)$`));
    if (m && stale(Number(m[1]), l.ifname)) ipQuiet(['link', 'del', l.ifname]);
  }
}

// --- picking a subnet nobody uses ------------------------------------------------------------------------------

interface Prefix {
  net: number;
  len: number;
  dev: string;
}

function parseIpv4(s: string): number | undefined {
  const parts = s.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

function parsePrefix(s: string, dev: string): Prefix | undefined {
  const [addr, len] = s.split('/');
  const net = parseIpv4(addr ?? '');
  if (net === undefined) return undefined;
  return { net, len: len === undefined ? 32 : Number(len), dev };
}

function mask(len: number): number {
  return len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
}

function overlaps(a: Prefix, b: Prefix): boolean {
  const m = mask(Math.min(a.len, b.len));
  return (a.net & m) >>> 0 === (b.net & m) >>> 0;
}

const ROUTE_TYPES = new Set(['unicast', 'local', 'broadcast', 'multicast', 'anycast', 'unreachable', 'blackhole']);

/** Every IPv4 prefix in use on the machine: addresses and routes of all tables, except default routes. */
function usedPrefixes(): Prefix[] {
  const out: Prefix[] = [];
  for (const line of ip(['-4', '-o', 'addr', 'show']).split('\n')) {
    const t = line.trim().split(/\s+/);
    const i = t.indexOf('inet');
    const p = i > 0 ? parsePrefix(t[i + 1] ?? '', t[1] ?? '') : undefined;
    if (p) out.push(p);
  }
  for (const line of ip(['-4', 'route', 'show', 'table', 'all']).split('\n')) {
    const t = line.trim().split(/\s+/);
    const dst = ROUTE_TYPES.has(t[0] ?? '') || t[0] === 'prohibit' || t[0] === 'throw' ? t[1] : t[0];
    if (!dst || dst === 'default') continue;
    const d = t.indexOf('dev');
    const p = parsePrefix(dst, d >= 0 ? (t[d + 1] ?? '') : '');
    if (p) out.push(p);
  }
  return out;
}

function subnet(x: number): Prefix {
  return { net: parseIpv4(`10.213.${x}.0`)!, len: 24, dev: '' };
}

function freeThirdOctets(used: readonly Prefix[]): number[] {
  const free: number[] = [];
  for (let x = 0; x < 256; x++) if (!used.some((p) => overlaps(p, subnet(x)))) free.push(x);
  return free;
}

/**
 * Gives the bridge 10.213.X.1/24 for an X no route or address on the machine overlaps. Another worker may pick the
 * same X at the same moment, so the claim is checked after it is made; on a clash both back off and pick again at
 * random (the kernel offers no atomic "take this subnet").
 */
async function claimSubnet(bridge: string): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const free = freeThirdOctets(usedPrefixes());
    if (free.length === 0) throw new Error('netns harness: every 10.213.X.0/24 overlaps a route on this machine');
    const x = free[Math.floor(Math.random() * free.length)]!;
    ip(['addr', 'add', `10.213.${x}.1/24`, 'dev', bridge]);
    const others = usedPrefixes().filter((p) => p.dev !== bridge && overlaps(p, subnet(x)));
    if (others.length === 0) return x;
    ipQuiet(['addr', 'del', `10.213.${x}.1/24`, 'dev', bridge]);
    await sleep(20 + Math.random() * 200);
  }
  throw new Error('netns harness: could not claim a free 10.213.X.0/24 (other workers kept taking the same one)');
}

// --- sshd inside a namespace -----------------------------------------------------------------------------------

/** Connects from the root namespace, as the bot would; gives up at once if the server process has ended. */
async function waitListening(host: string, port: number, ms: number, proc: ChildProcess): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until && proc.exitCode === null && proc.signalCode === null) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, host);
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return true;
    await sleep(25);
  }
  return false;
}

async function startNsSshd(ns: string, address: string, name: string): Promise<NetHost> {
  const { dir, hostKey, userKeyPath } = sshdKeys('glm-nssshd-');
  const port = 22;
  const user = testUser().name;
  const config = join(dir, 'sshd_config');
  writeFileSync(config, sshdConfig(dir, address, port, hostKey));
  let proc: ChildProcess | undefined;
  const knownHostsPath = join(dir, 'known_hosts');
  // Port 22: OpenSSH names the host plainly, without [host]:port brackets.
  const pub = readFileSync(`${hostKey}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  writeFileSync(knownHostsPath, `${address} ${pub}\n`);
  const host: NetHost = {
    port,
    dir,
    user,
    hostKeyPub: pub,
    userKeyPath,
    knownHostsPath,
    address,
    name,
    netns: ns,
    async start() {
      // With the namespace gone its address routes off the machine (on some VMs something there accepts any
      // connection): never dial it then.
      if (!existsSync(join('/run/netns', ns))) throw new Error(`netns harness: ${name}'s namespace ${ns} is gone`);
      // `ip netns exec` enters the namespace and execs sshd in place, so proc.pid is sshd itself.
      proc = spawn('ip', ['netns', 'exec', ns, SSHD, '-D', '-e', '-f', config], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      proc.stderr?.on('data', (d) => {
        err += String(d);
      });
      if (!(await waitListening(address, port, 5000, proc))) throw new Error(`sshd in ${ns} did not start: ${err}`);
    },
    async stop() {
      const p = proc;
      proc = undefined;
      if (!p || p.exitCode !== null || p.signalCode !== null || p.pid === undefined) return;
      // As startSshd: kill the tree (sessions are forked children); setsid'd servers survive, as on a real host.
      const victims = [p.pid, ...descendants(p.pid)];
      await new Promise<void>((resolve) => {
        p.once('exit', () => resolve());
        killAll(victims);
      });
    },
    rotateHostKey() {
      keygen(hostKey);
    },
  };
  await host.start();
  return host;
}

// --- groups ----------------------------------------------------------------------------------------------------

let counter = 0;

async function netnsGroup(n: number): Promise<HostGroup> {
  installExitHook();
  sweepStale();
  const c = counter++;
  // Interface names are at most 15 characters: pid and counter in base 36 (pid <= 4194304 is 5 characters).
  const tag = `${process.pid.toString(36)}-${c.toString(36)}`;
  const bridge = `glb${tag}`;
  const veths = Array.from({ length: n }, (_, i) => `glv${tag}-${i}`);
  const namespaces = Array.from({ length: n }, (_, i) => `glmt-${process.pid}-${c}-node${i}`);
  for (const name of [bridge, ...veths]) {
    if (name.length > 15) throw new Error(`netns harness: interface name ${name} is longer than 15 characters`);
  }
  // Registered before anything exists, so a failure (or exit) half-way still removes what was made.
  const made: Made = { namespaces, links: [...veths, bridge] };
  live.add(made);
  const hosts: NetHost[] = [];
  try {
    ip(['link', 'add', bridge, 'type', 'bridge']);
    ip(['link', 'set', bridge, 'alias', `${ALIAS} pid=${process.pid}`]);
    ip(['link', 'set', bridge, 'up']);
    const x = await claimSubnet(bridge);
    for (let i = 0; i < n; i++) {
      const ns = namespaces[i]!;
      const veth = veths[i]!;
      ip(['netns', 'add', ns]);
      // The namespace end is made inside the namespace, named eth0 as on a real host; no name clash is possible.
      ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      ip(['link', 'set', veth, 'alias', `${ALIAS} pid=${process.pid}`]);
      ip(['link', 'set', veth, 'master', bridge]);
      ip(['link', 'set', veth, 'up']);
      // lo up: servers inside listen on 127.0.0.1 as on a real host, and 127.0.0.1 there is the namespace's own.
      ip(['-n', ns, 'link', 'set', 'lo', 'up']);
      ip(['-n', ns, 'addr', 'add', `10.213.${x}.${i + 2}/24`, 'dev', 'eth0']);
      ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
      // No default route inside: a host can reach the group's subnet and nothing else.
    }
    const started = await Promise.allSettled(
      namespaces.map((ns, i) => startNsSshd(ns, `10.213.${x}.${i + 2}`, `node${i}`)),
    );
    for (const s of started) if (s.status === 'fulfilled') hosts.push(s.value);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (e) {
    await closeNetns(made, hosts);
    throw e;
  }
  let closing: Promise<void> | undefined;
  return {
    kind: 'netns',
    hosts,
    close() {
      closing ??= closeNetns(made, hosts);
      return closing;
    },
  };
}

async function closeNetns(made: Made, hosts: readonly NetHost[]): Promise<void> {
  await Promise.all(hosts.map((h) => h.stop()));
  // Whatever the tests left running inside (detached servers) goes with the host.
  for (let i = 0; i < 40; i++) {
    const pids = made.namespaces.flatMap(nsPids);
    if (pids.length === 0) break;
    killAll(pids);
    await sleep(25);
  }
  teardownSync(made);
  live.delete(made);
  for (const h of hosts) rmSync(h.dir, { recursive: true, force: true });
}

async function loopbackGroup(n: number): Promise<HostGroup> {
  const started = await Promise.allSettled(Array.from({ length: n }, () => startSshd()));
  const hosts: NetHost[] = [];
  started.forEach((s, i) => {
    if (s.status === 'fulfilled') hosts.push(Object.assign(s.value, { address: '127.0.0.1', name: `node${i}` }));
  });
  const close = async () => {
    await Promise.all(hosts.map((h) => h.stop()));
    for (const h of hosts) rmSync(h.dir, { recursive: true, force: true });
  };
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await close();
    throw failed.reason;
  }
  let closing: Promise<void> | undefined;
  return {
    kind: 'loopback',
    hosts,
    close() {
      closing ??= close();
      return closing;
    },
  };
}

/** n hosts (node0..node{n-1}), each with its own sshd: in network namespaces when possible, else on 127.0.0.1. */
export async function startHostGroup(n: number, opts: HostGroupOptions = {}): Promise<HostGroup> {
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new Error(`netns harness: n must be 1..100, got ${n}`);
  const kind = opts.kind ?? (netnsAvailable() ? 'netns' : 'loopback');
  if (kind === 'netns' && !netnsAvailable()) throw new Error('netns harness: network namespaces are not available');
  return kind === 'netns' ? netnsGroup(n) : loopbackGroup(n);
}
