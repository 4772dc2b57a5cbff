// A two-node launch across two hosts that are network namespaces, each with its own sshd: the head's cluster address and a free port found on it are what every node meets at, the
// attempt is ready only when node 0 is, and a crash on node 1 is the attempt's crash, named by its node, alerted
// once, with node 0 stopped by the bot.
import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoadedConfig, PACKAGE_ROOT } from '../../src/config/load.ts';
import { resumeWatches } from '../../src/lifecycle/resume.ts';
import { appendAndSettle, makeChatBot, until } from '../helpers/app.ts';
import { groupConfig } from '../helpers/group-config.ts';
import { type HostGroup, startHostGroup } from '../helpers/netns.ts';
import { groupMembers, userDir } from '../helpers/sshd.ts';

let group: HostGroup;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  group = await startHostGroup(2);
  // Two "hosts" on one machine cannot hold one multi-node server: every node binds the same --port (the workers'
  // dummy health server), as real SGLang does. Say so plainly instead of failing with a port clash.
  if (group.kind !== 'netns') {
    throw new Error(
      'multi-node tests need network namespaces (run as root with iproute2, as .ci/run does); got loopback sshds',
    );
  }
}, 60_000);
afterAll(async () => {
  for (const c of closers) await c();
  await group.close();
});

/** A bot whose config has the group's hosts as node0/node1 and a host group `pair`; per-node stand-in env. */
function pairBot(nodeEnv: Array<Record<string, string>> = [{}, {}], same?: LoadedConfig) {
  const loaded = same ?? groupConfig(group.hosts, { nodeEnv, profilesDir: profilesWithPair() });
  const bot = makeChatBot(loaded);
  const { app, ctx } = bot;
  closers.push(async () => {
    try {
      for (const a of app.engine.attempts.allActive()) await app.dispatch.run(`stop --attempt ${a.id}`, ctx);
      await app.close();
    } catch {
      // a test closed this bot itself (a restart)
    }
  });
  return { ...bot, loaded };
}

/** The shipped profiles plus one that names the host group itself, so `launch small-pair` needs no --host. */
function profilesWithPair(): string {
  const dir = mkdtempSync(join(tmpdir(), 'glm-profiles-'));
  cpSync(join(PACKAGE_ROOT, 'profiles'), dir, { recursive: true });
  writeFileSync(
    join(dir, 'small-pair.yaml'),
    'extends: small\ndescription: small across the two hosts of group pair\ntp: 2\nhost: pair\n',
  );
  return dir;
}

describe('multi-node launch', () => {
  it('starts both nodes at the head address, is ready when node 0 is, and stops both', async () => {
    const b = pairBot();
    const head = group.hosts[0]!;
    const r = await b.run('launch small --set tp=2 --host pair --port 30100');
    expect(r.exitCode ?? 0, `${r.text}\n${b.said.join('\n')}`).toBe(0);
    expect(r.text).toMatch(/^ready: attempt #1 \(small\.tp-2\) on node0\+node1, serving at node0:30100/);

    const a = b.app.engine.attempts.get(1)!;
    const [worker] = b.app.engine.attempts.nodes(1);
    // Every node met at the head's own address (not 127.0.0.1) and a port found free there.
    expect(a.distInitAddr).toMatch(new RegExp(`^${head.address.replace(/\./g, '\\.')}:\\d+$`));
    expect(a.commandLine).toContain(`--nnodes 2 --node-rank 0 --dist-init-addr ${a.distInitAddr}`);
    expect(worker).toMatchObject({ rank: 1, host: 'node1', gpus: '0' });
    // The worker logs its own TP rank (tp 2 over 2 nodes: rank 1 on node 1).
    expect(readFileSync(worker!.logPath!, 'utf8')).toMatch(/TP1\] Init torch distributed begin/);
    // The worker's argv on its host says rank 1 and the same rendezvous.
    const workerCmd = readFileSync(`/proc/${worker!.pgid}/cmdline`, 'utf8').split('\0');
    expect(workerCmd.join(' ')).toContain(`--nnodes 2 --node-rank 1 --dist-init-addr ${a.distInitAddr}`);
    // The head's rendezvous socket listens in node0's namespace on exactly its own address (/proc/net/tcp writes
    // the IPv4 address little-endian in hex, then the port; 0A is LISTEN).
    const tcp = execFileSync('ip', ['netns', 'exec', head.netns!, 'cat', '/proc/net/tcp'], { encoding: 'utf8' });
    const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
    const addrHex = head.address
      .split('.')
      .reverse()
      .map((b) => hex(Number(b), 2))
      .join('');
    const portHex = hex(Number(a.distInitAddr!.split(':')[1]), 4);
    expect(tcp).toMatch(new RegExp(`${addrHex}:${portHex} 00000000:0000 0A`));
    // Each node leases its own GPU on its own host; status shows the attempt on both.
    expect(b.app.engine.attempts.leasesOn('node0')).toEqual([{ gpu: 0, attemptId: 1 }]);
    expect(b.app.engine.attempts.leasesOn('node1')).toEqual([{ gpu: 0, attemptId: 1 }]);
    const status = (await b.run('status')).text;
    expect(status).toMatch(/node0 +ready +#1 +small\.tp-2 +0\/2/);
    expect(status).toMatch(/node1 +ready +#1 +small\.tp-2 +1\/2/);
    // `check` takes the group: each node's host, and whether they run the same SGLang.
    const check = await b.run('check --host pair');
    expect(check.exitCode ?? 0, check.text).toBe(0);
    expect(check.text).toMatch(/^node0:\n {2}reachable: +yes/m);
    expect(check.text).toMatch(/^node1:\n {2}reachable: +yes/m);
    // probe (named by a worker's host) reports the head's server and each worker's process.
    const probe = await b.run('probe --host node1');
    expect(probe.exitCode ?? 0, probe.text).toBe(0);
    expect(probe.text).toMatch(/^probe of node0 \(attempt #1 small\.tp-2, ready\)/);
    expect(probe.text).toMatch(/node 1: +node1: alive/);
    // `logs --node 1` reads the worker's log on its own host.
    expect((await b.run('logs --attempt 1 --node 1 --lines 5')).text).toContain('node 1 (node1)');

    const s = await b.run('stop --host node1');
    expect(s.text).toMatch(/stopped attempt #1 \(small\.tp-2\) on node0\+node1: .*\(all 2 nodes\)/);
    expect(groupMembers(a.pgid!)).toEqual([]);
    expect(groupMembers(worker!.pgid!)).toEqual([]);
    expect(b.app.engine.attempts.leasesOn('node1')).toEqual([]);
  });

  it('a crash on node 1 is the attempt crash, named by node, alerted once, and the bot stops node 0', async () => {
    // Node 1 runs out of memory while capturing CUDA graphs; node 0 is healthy.
    const b = pairBot([{}, { STANDIN_SCENARIO: 'oom_graph_capture' }]);
    // The profile names the host group: no --host needed.
    const r = await b.run('launch small-pair --port 30200');
    expect(r.exitCode, r.text).toBe(1);
    const a = b.app.engine.attempts.get(1)!;
    expect(a).toMatchObject({ status: 'crashed', active: false, outcome: 'cuda_oom' });
    const d = a.classification as { category: string; summary: string; evidence: Array<{ text: string }> };
    expect(d.summary).toMatch(/^node 1 \(node1\): /);
    expect(d.evidence.some((e) => /out of memory/i.test(e.text))).toBe(true);
    // Node 0 did not crash by itself: the bot stopped it (its group is gone, and the head's log has no traceback).
    expect(b.app.engine.attempts.events(1).some((e) => e.kind === 'node_failed')).toBe(true);
    expect(groupMembers(a.pgid!)).toEqual([]);
    const headLog = readFileSync(a.logPath!, 'utf8');
    expect(headLog).not.toMatch(/out of memory/i);
    // One alert, naming node 1, in the attempt's one message thread.
    await b.app.engine.notifier?.idle();
    await until(() => b.printed.some((p) => p.includes('CRASH ')), 10_000);
    const alerts = b.printed.filter((p) => p.includes('CRASH '));
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatch(/node 1 \(node1\)/);
    // One attempt, one message: the parent names both hosts.
    expect(alerts[0]).toMatch(/CRASH cuda_oom during .*: attempt #1 small-pair on node0\+node1/);
    // The lease ended with the attempt on both hosts.
    expect(b.app.engine.attempts.leasesOn('node0')).toEqual([]);
    expect(b.app.engine.attempts.leasesOn('node1')).toEqual([]);
  });

  it("a crash on node 0 is the attempt's crash even when its worker then reports losing its peer", async () => {
    // The head runs out of memory while capturing; the worker then loses its peer (gloo's "Connection closed by
    // peer"), which may reach the bot first: the head's own crash is the cause, and every node is stopped.
    const b = pairBot([{ STANDIN_SCENARIO: 'oom_graph_capture' }, {}]);
    const r = await b.run('launch small-pair --port 30250');
    expect(r.exitCode, r.text).toBe(1);
    const a = b.app.engine.attempts.get(1)!;
    expect(a).toMatchObject({ status: 'crashed', active: false, outcome: 'cuda_oom' });
    const d = a.classification as { summary: string };
    expect(d.summary).toMatch(/^node 0 \(node0\): /);
    const [worker] = b.app.engine.attempts.nodes(1);
    await until(() => groupMembers(a.pgid!).length === 0 && groupMembers(worker!.pgid!).length === 0, 10_000);
    await b.app.engine.notifier?.idle();
    await until(() => b.printed.some((p) => p.includes('CRASH ')), 10_000);
    const alerts = b.printed.filter((p) => p.includes('CRASH '));
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatch(/CRASH cuda_oom during .*node 0 \(node0\)/s);
  });

  it('a restarted bot follows every node again: a worker dying later ends the attempt and stops the head', async () => {
    const first = pairBot();
    expect((await first.run('launch small --set tp=2 --host pair --port 30400')).exitCode ?? 0).toBe(0);
    const a = first.app.engine.attempts.get(1)!;
    const [worker] = first.app.engine.attempts.nodes(1);
    await first.app.close();

    const b = pairBot([{}, {}], first.loaded);
    expect(await resumeWatches(b.app.engine, () => {}, b.app.diagnoser)).toBe(1);
    // The worker dies without a word (a host lost its power): the bot names the node and stops the head.
    process.kill(-worker!.pgid!, 'SIGKILL');
    await until(() => b.app.engine.attempts.get(1)?.active === false, 20_000);
    const after = b.app.engine.attempts.get(1)!;
    expect(after.status).toBe('crashed');
    expect(after.outcomeDetail).toMatch(/^node 1 \(node1\): /);
    await until(() => groupMembers(a.pgid!).length === 0, 10_000);
    await b.app.engine.notifier?.idle();
    await until(() => b.printed.some((p) => p.includes('CRASH ')), 10_000);
    expect(b.printed.filter((p) => p.includes('CRASH ')).join('\n')).toMatch(/node 1 \(node1\)/);
  });

  it("a bot that was down while both nodes ended: a worker's own crash is the attempt's, not the head's lost peer", async () => {
    const first = pairBot();
    expect((await first.run('launch small --set tp=2 --host pair --port 30420')).exitCode ?? 0).toBe(0);
    const a = first.app.engine.attempts.get(1)!;
    const [worker] = first.app.engine.attempts.nodes(1);
    await first.app.close();
    // While no bot watches: node 1 runs out of memory, then node 0 loses it (gloo's peer connection) and dies too.
    appendFileSync(
      worker!.logPath!,
      [
        '[2026-12-02 10:00:00 TP1] Scheduler hit an exception: Traceback (most recent call last):',
        '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 900, in event_loop_normal',
        '    result = self.run_batch(batch)',
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB',
        '',
      ].join('\n'),
    );
    appendFileSync(
      a.logPath!,
      [
        '[2026-12-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):',
        '  File "/sgl/python/sglang/srt/distributed/parallel_state.py", line 500, in all_reduce',
        '    torch.distributed.all_reduce(input_, group=self.device_group)',
        'RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.9.0.2]:41234',
        '',
      ].join('\n'),
    );
    process.kill(-worker!.pgid!, 'SIGKILL');
    process.kill(-a.pgid!, 'SIGKILL');
    await until(() => groupMembers(a.pgid!).length === 0 && groupMembers(worker!.pgid!).length === 0, 10_000);

    const b = pairBot([{}, {}], first.loaded);
    expect(await resumeWatches(b.app.engine, () => {}, b.app.diagnoser)).toBe(0);
    const after = b.app.engine.attempts.get(1)!;
    expect(after).toMatchObject({ status: 'crashed', active: false, outcome: 'cuda_oom' });
    expect(after.outcomeDetail).toMatch(/^ended while the bot was not watching: node 1 \(node1\): /);
  });

  it('a head stopped from outside the bot: its worker losing it is no crash, the end is told as the stop, once', async () => {
    // The head drains and kills its own tree on SIGTERM (real SGLang); the worker then loses its peer (gloo's
    // "Connection closed by peer") and exits 1.
    const b = pairBot([{ STANDIN_EXIT_STYLE: 'real' }, {}]);
    expect((await b.run('launch small --set tp=2 --host pair --port 30450')).exitCode ?? 0).toBe(0);
    const head = b.app.engine.attempts.get(1)!;
    const [worker] = b.app.engine.attempts.nodes(1);
    process.kill(-head.pgid!, 'SIGTERM');
    await until(() => b.app.engine.attempts.get(1)?.active === false, 30_000);
    const a = b.app.engine.attempts.get(1)!;
    expect(a.status).toBe('exited');
    expect(a.outcomeDetail).toMatch(/^stopped from outside the bot: the server logged a stop signal at line \d+/);
    expect(b.app.engine.attempts.events(1).map((e) => e.kind)).not.toContain('node_failed');
    await until(() => groupMembers(worker!.pgid!).length === 0, 10_000);
    await b.app.engine.notifier?.idle();
    expect(b.printed.filter((p) => p.includes('CRASH '))).toEqual([]);
  });

  it("a failure record in a worker's log: no crash while it serves on; its exit 1 then ends the attempt, told once", async () => {
    const control = join(userDir('glm-ctl-'), 'control');
    writeFileSync(control, '', { mode: 0o666 });
    const b = pairBot([{}, { STANDIN_CONTROL: control }]);
    expect((await b.run('launch small --set tp=2 --host pair --port 30500')).exitCode ?? 0).toBe(0);
    const record = '[2025-11-05 12:01:00] Failed to push metrics to the collector: connection refused';
    await appendAndSettle(b.app, 1, 1, record);
    // A record alone is no crash of a worker that serves on: node 0's watch reads on (a worker's failure aborts it at
    // once), nothing stopped, nothing told.
    await appendAndSettle(b.app, 1, 0, '[2025-11-05 12:01:02] Prefill batch. #new-seq: 1, #new-token: 4');
    expect(b.app.engine.attempts.events(1).map((e) => e.kind)).not.toContain('node_failed');
    expect(b.app.engine.attempts.get(1)).toMatchObject({ active: true, status: 'ready' });
    // Then the worker exits 1: that is its crash, the record its evidence, and the head is stopped.
    writeFileSync(control, 'exit_quietly\n');
    await until(() => b.app.engine.attempts.get(1)?.active === false, 20_000);
    const a = b.app.engine.attempts.get(1)!;
    expect(a).toMatchObject({ status: 'crashed', outcome: 'other', exitCode: 1 });
    const d = a.classification as { summary: string; evidence: Array<{ text: string }> };
    expect(d.summary).toMatch(/^node 1 \(node1\): /);
    expect(d.evidence.map((e) => e.text)).toContain(record);
    expect(b.app.engine.attempts.events(1).map((e) => e.kind)).not.toContain('crash_seen');
    await until(() => groupMembers(a.pgid!).length === 0, 10_000);
    await b.app.engine.notifier?.idle();
    await until(() => b.printed.some((p) => p.includes('CRASH ')), 10_000);
    const alerts = b.printed.filter((p) => p.includes('CRASH '));
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatch(/CRASH other during .*: attempt #1 small\.tp-2 on node0\+node1/);
    expect(alerts[0]).toMatch(/node 1 \(node1\): .*Failed to push metrics/);
  });

  it("a crash-looking traceback in a ready worker's log while it serves on: no node failure until its exit 1", async () => {
    const control = join(userDir('glm-ctl-'), 'control');
    writeFileSync(control, '', { mode: 0o666 });
    const b = pairBot([{}, { STANDIN_CONTROL: control }]);
    expect((await b.run('launch small --set tp=2 --host pair --port 30600')).exitCode ?? 0).toBe(0);
    // A helper thread of the worker's main process dies (CPython's threading excepthook output); nothing follows it.
    const root = 'ConnectionRefusedError: [Errno 111] Connection refused';
    const traceback = [
      'Exception in thread Thread-3 (push_metrics):',
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.12/threading.py", line 1075, in _bootstrap_inner',
      '    self.run()',
      '  File "/usr/lib/python3.12/socket.py", line 852, in create_connection',
      '    sock.connect(sa)',
      root,
    ];
    const worker = b.app.engine.attempts.nodes(1).find((n) => n.rank === 1)!;
    appendFileSync(worker.logPath!, `${traceback.join('\n')}\n`);
    // The worker's process is alive and the head answers /health_generate: it survived that, nothing is stopped.
    await until(() => b.app.engine.attempts.events(1).some((e) => e.kind === 'error_survived'), 20_000);
    const ev = b.app.engine.attempts.events(1).find((e) => e.kind === 'error_survived')!;
    expect(ev.data).toMatchObject({ category: 'other', rank: 1, root });
    expect(b.app.engine.attempts.events(1).map((e) => e.kind)).not.toContain('node_failed');
    expect(b.app.engine.attempts.get(1)).toMatchObject({ active: true, status: 'ready' });
    // Then the worker exits 1: the traceback is its crash, named by its node, told once.
    writeFileSync(control, 'exit_quietly\n');
    await until(() => b.app.engine.attempts.get(1)?.active === false, 20_000);
    const a = b.app.engine.attempts.get(1)!;
    expect(a).toMatchObject({ status: 'crashed', outcome: 'other', exitCode: 1 });
    const d = a.classification as { summary: string; evidence: Array<{ text: string }> };
    expect(d.summary).toMatch(/^node 1 \(node1\): /);
    expect(d.evidence.map((e) => e.text)).toContain(root);
    await b.app.engine.notifier?.idle();
    await until(() => b.printed.some((p) => p.includes('CRASH ')), 10_000);
    expect(b.printed.filter((p) => p.includes('CRASH '))).toHaveLength(1);
  });

  it('an unreachable worker host fails the launch before any node starts, naming the host', async () => {
    const b = pairBot();
    const worker = group.hosts[1]!;
    await worker.stop();
    try {
      const r = await b.run('launch small --set tp=2 --host pair --port 30300');
      expect(r.exitCode).not.toBe(0);
      expect(r.text).toMatch(/node1/);
      // Nothing was started on the head, nothing is held.
      expect(b.app.engine.attempts.list()).toHaveLength(0);
      expect(b.app.engine.attempts.leasesOn('node0')).toEqual([]);
    } finally {
      await worker.start();
    }
  });

  it('refuses a group whose tp does not split over its nodes, and a worker host with its GPUs held', async () => {
    const b = pairBot();
    const odd = await b.run('launch small --host pair');
    expect(odd.exitCode).toBe(2);
    expect(odd.text).toMatch(/tp 1 does not split over 2 nodes/);
    const unknown = await b.run('launch small --host piar');
    expect(unknown.text).toMatch(/unknown host or host group 'piar'\n.*did you mean 'pair'\?/);
    expect((await b.run('launch small --host node1 --gpus 0 --port 30001')).exitCode ?? 0).toBe(0);
    const held = await b.run('launch small --set tp=2 --host pair --gpus 0');
    expect(held.exitCode).toBe(2);
    expect(held.text).toMatch(/GPU 0 on node1: GPU 0 held by attempt #1 \(small\)/);
    expect(b.app.engine.attempts.list()).toHaveLength(1);
  });
});
