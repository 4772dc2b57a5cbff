// The multi-host harness itself: each host answers on its own address, a server bound on one host's address is
// reached from another host at that address (and not at the other host's 127.0.0.1), and close() leaves nothing
// behind. With no network namespaces (not root) the same test runs against sshds on 127.0.0.1 and asserts only
// what one machine can show. The loopback kind is also run explicitly, so the fallback is exercised as root too.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSshHost, type SshHost } from '../../src/hosts/ssh.ts';
import { type HostGroup, type HostGroupOptions, type NetHost, startHostGroup } from '../helpers/netns.ts';
import { alive } from '../helpers/proc.ts';
import { sshTarget, userDir } from '../helpers/sshd.ts';

function sshHost(h: NetHost): SshHost {
  return createSshHost(sshTarget(h));
}

// Listens on the given address (any free port), answers each connection with the peer's address, and writes its
// port and pid once listening (renamed into place, so a reader never sees half a file). Ends itself after a minute
// in case nobody does.
const LISTENER = `
const net = require('node:net');
const fs = require('node:fs');
const [host, out] = process.argv.slice(1);
const srv = net.createServer((s) => {
  s.on('error', () => {}); // a peer that only checks the port resets the connection
  s.end(s.remoteAddress + '\\n');
});
srv.listen(0, host, () => {
  fs.writeFileSync(out + '.tmp', JSON.stringify({ port: srv.address().port, pid: process.pid }));
  fs.renameSync(out + '.tmp', out);
});
setTimeout(() => process.exit(0), 60000);
`;

// Prints "reply <what the server said>" or "error <code>".
const CLIENT = `
const net = require('node:net');
const [host, port] = process.argv.slice(1);
const s = net.connect(Number(port), host);
let got = '';
s.setTimeout(3000, () => { console.log('error ETIMEDOUT'); process.exit(2); });
s.on('data', (d) => { got += d; });
s.on('end', () => { console.log('reply ' + got.trim()); process.exit(0); });
s.on('error', (e) => { console.log('error ' + e.code); process.exit(1); });
`;

/** Starts LISTENER on the host, detached (setsid, stdio redirected) so it outlives the SSH session. */
async function listen(h: SshHost, address: string): Promise<{ port: number; pid: number; dir: string }> {
  const dir = userDir('glm-netns-listen-');
  const ready = join(dir, 'ready.json');
  const start = await h.exec([
    'sh',
    '-c',
    'setsid "$1" -e "$2" "$3" "$4" </dev/null >"$5" 2>&1 &',
    'sh',
    process.execPath,
    LISTENER,
    address,
    ready,
    join(dir, 'log'),
  ]);
  expect(start.code).toBe(0);
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    const r = await h.exec(['cat', ready]);
    if (r.code === 0 && r.stdout) return { ...(JSON.parse(r.stdout) as { port: number; pid: number }), dir };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`listener did not start: ${(await h.exec(['cat', join(dir, 'log')])).stdout}`);
}

async function dial(h: SshHost, address: string, port: number): Promise<string> {
  const r = await h.exec([process.execPath, '-e', CLIENT, address, String(port)]);
  return r.stdout.trim();
}

/** From the test process, i.e. from where the bot runs. */
function reachable(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, address);
    s.setTimeout(2000, () => {
      s.destroy();
      resolve(false);
    });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

const variants: Array<{ label: string; opts: HostGroupOptions }> = [
  { label: 'the kind this machine allows', opts: {} },
  { label: 'the loopback kind', opts: { kind: 'loopback' } },
];

describe.each(variants)('host group: $label', ({ opts }) => {
  let group: HostGroup;
  let node0: NetHost;
  let node1: NetHost;
  let ssh0: SshHost;
  let ssh1: SshHost;
  /** The netns kind leaves node0's listener running for close() to take down. */
  let listenerPid: number | undefined;

  beforeAll(async () => {
    group = await startHostGroup(2, opts);
    [node0, node1] = group.hosts as [NetHost, NetHost];
    ssh0 = sshHost(node0);
    ssh1 = sshHost(node1);
  });
  afterAll(async () => {
    await ssh0?.close();
    await ssh1?.close();
    await group?.close();
  });

  it('gives each host its own name and address', () => {
    expect(group.hosts.map((h) => h.name)).toEqual(['node0', 'node1']);
    if (group.kind === 'netns') {
      expect(node0.address).toMatch(/^10\.213\.\d+\.2$/);
      expect(node1.address).toBe(node0.address.replace(/\.2$/, '.3'));
      expect(node0.port).toBe(22);
      expect(readFileSync(node0.knownHostsPath, 'utf8')).toBe(`${node0.address} ${node0.hostKeyPub}\n`);
    } else {
      expect(group.hosts.map((h) => h.address)).toEqual(['127.0.0.1', '127.0.0.1']);
      expect(node0.port).not.toBe(node1.port);
    }
  });

  it('each host reports its own address, and sees the SSH connection arrive on it', async () => {
    for (const [h, ssh] of [
      [node0, ssh0],
      [node1, ssh1],
    ] as const) {
      const r = await ssh.exec(['ip', '-4', '-o', 'addr', 'show']);
      expect(r.code, r.stderr).toBe(0);
      const addrs = [...r.stdout.matchAll(/\binet (\d+\.\d+\.\d+\.\d+)\//g)].map((m) => m[1]);
      // SSH_CONNECTION: client address, client port, server address, server port.
      const conn = (await ssh.exec(['sh', '-c', 'echo "$SSH_CONNECTION"'])).stdout.trim().split(' ');
      expect(conn[2]).toBe(h.address);
      expect(conn[3]).toBe(String(h.port));
      if (group.kind === 'netns') {
        // Only its own loopback and its own address: nothing of the root namespace or of the other host.
        expect(addrs.sort()).toEqual(['127.0.0.1', h.address].sort());
        expect(conn[0]).toBe(h.address.replace(/\.\d+$/, '.1'));
      } else {
        expect(addrs).toContain('127.0.0.1');
      }
    }
  });

  it("a server on node0's address is reached from node1 at that address, and not at node1's 127.0.0.1", async () => {
    const bind = group.kind === 'netns' ? node0.address : '127.0.0.1';
    const srv = await listen(ssh0, bind);
    try {
      // The server answers with the peer address it saw: node1's own address, not the bridge's.
      expect(await dial(ssh1, node0.address, srv.port)).toBe(`reply ${node1.address}`);
      expect(await reachable(node0.address, srv.port)).toBe(true);
      if (group.kind === 'netns') {
        expect(await dial(ssh1, '127.0.0.1', srv.port)).toBe('error ECONNREFUSED');
        // Bound on the address only: not on node0's own loopback either.
        expect(await dial(ssh0, '127.0.0.1', srv.port)).toBe('error ECONNREFUSED');
      }
    } finally {
      if (group.kind === 'loopback') await ssh0.exec(['kill', String(srv.pid)]);
      rmSync(srv.dir, { recursive: true, force: true });
    }
    if (group.kind === 'netns') {
      // Left running on purpose: close() must take it down with the host.
      expect(alive(srv.pid)).toBe(true);
      listenerPid = srv.pid;
    }
  });

  it('close() stops every sshd and, for namespaces, removes them with whatever ran inside', async () => {
    const namespaces = group.hosts.map((h) => h.netns).filter((ns): ns is string => ns !== undefined);
    const listNetns = () =>
      execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
        .split('\n')
        .map((l) => l.split(' ')[0]);
    if (group.kind === 'netns') {
      expect(namespaces).toHaveLength(2);
      for (const ns of namespaces) expect(listNetns()).toContain(ns);
    }
    await ssh0.close();
    await ssh1.close();
    await group.close();
    await group.close(); // idempotent
    const processes = execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => !l.trim().startsWith('Z'));
    for (const h of group.hosts) {
      expect(processes.filter((l) => l.includes(join(h.dir, 'sshd_config')))).toEqual([]);
    }
    // Dial only 127.0.0.1 here: with its namespace gone, a namespace address would be routed off the machine.
    if (group.kind === 'loopback') for (const h of group.hosts) expect(await reachable(h.address, h.port)).toBe(false);
    if (group.kind === 'netns') {
      const listed = listNetns();
      for (const ns of namespaces) expect(listed).not.toContain(ns);
      const links = JSON.parse(execFileSync('ip', ['-j', 'link', 'show'], { encoding: 'utf8' })) as Array<{
        ifalias?: string;
      }>;
      expect(links.filter((l) => l.ifalias === `glm-test-harness pid=${process.pid}`)).toEqual([]);
      expect(listenerPid).toBeDefined();
      expect(alive(listenerPid!)).toBe(false);
    }
  });
});
