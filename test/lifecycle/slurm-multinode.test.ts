// One server across two Slurm compute nodes: two slurmd, each in its own network namespace (test/helpers/netns.ts),
// slurmctld on the namespaces' bridge, the login node the test's sshd on 127.0.0.1. One task per node through srun,
// node 0's address as --dist-init-addr, readiness through the tunnel from the login node to node 0.
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resumeWatches } from '../../src/lifecycle/resume.ts';
import { freshDirs, makeBot, makeChatBot, STANDIN, until } from '../helpers/app.ts';
import { type HostGroup, netnsAvailable, startHostGroup } from '../helpers/netns.ts';
import { slurmAvailable, slurmConfig, slurmHost, startCluster, type TestCluster } from '../helpers/slurm.ts';
import { freePort, type Sshd, startSshd } from '../helpers/sshd.ts';

const runs = slurmAvailable && netnsAvailable();
const NODE1_RECORD =
  '[2025-11-05 12:00:01] ERROR: Failed to join the rendezvous: the store on node 0 refused the connection';
let group: HostGroup;
let cluster: TestCluster;
let sshd: Sshd;
let profilesDir: string;
let python: string;

beforeAll(async () => {
  if (!runs) return;
  group = await startHostGroup(2, { kind: 'netns' });
  cluster = await startCluster({ gpus: 1, nodes: group.hosts.map((h) => ({ address: h.address, netns: h.netns })) });
  sshd = await startSshd();
  const dir = mkdtempSync(join(tmpdir(), 'glm-slurm-mn-'));
  chmodSync(dir, 0o755);
  profilesDir = join(dir, 'profiles');
  execFileSync('mkdir', [profilesDir]);
  // Bound on every address of its node: the login node reaches node 0's server across the bridge.
  writeFileSync(
    join(profilesDir, 'small-2node.yaml'),
    'description: two nodes\nmodel_path: Qwen/Qwen2.5-0.5B-Instruct\ntp: 2\nhost_bind: 0.0.0.0\nslurm: { nodes: 2 }\n',
  );
  // The same with a misspelt flag: every node runs the one python of the job, so one --help refuses it for all.
  writeFileSync(
    join(profilesDir, 'small-2node-typo.yaml'),
    'description: two nodes, a typo\nextends: small-2node\nextra_args: [--enable-metrcs]\n',
  );
  // The job's python: the stand-in, with a fault on node 1 when the test arms it (srun's SLURM_NODEID says which).
  python = join(dir, 'python');
  writeFileSync(
    python,
    `#!/bin/sh\nif [ "\${SLURM_NODEID:-0}" = 1 ] && [ -e "${dir}/node1-oom" ]; then STANDIN_SCENARIO=oom_graph_capture; export STANDIN_SCENARIO; fi\n` +
      // node1-record: node 1 logs a failure record of its own and exits 1, as a worker that could not join does.
      `if [ "\${SLURM_NODEID:-0}" = 1 ] && [ -e "${dir}/node1-record" ]; then echo "${NODE1_RECORD}"; exit 1; fi\n` +
      `exec ${join(STANDIN, 'python')} "$@"\n`,
    { mode: 0o755 },
  );
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  await sshd?.stop();
  await group?.close();
}, 60_000);

function loadedFor(c: TestCluster) {
  const { workdir, dataDir } = freshDirs();
  const host = slurmHost(sshd, c.conf, workdir, { dist_port: 29555 }, python);
  return { loaded: slurmConfig({ cluster: host }, dataDir, profilesDir), workdir, dataDir };
}

function bot() {
  const { loaded, workdir, dataDir } = loadedFor(cluster);
  return makeBot(loaded, { workdir, dataDir });
}

const standins = () =>
  execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes('sglang-standin'));

describe.skipIf(!runs)('Slurm multi-node: two slurmd in network namespaces', () => {
  test('launch runs one task per node with node 0 as --dist-init-addr, ready through the tunnel to node 0; stop ends both', async () => {
    const b = bot();
    try {
      const port = await freePort();
      const r = await b.run(`launch small-2node --port ${port}`);
      expect(r.text, r.text).toMatch(/^ready: attempt #1 /);
      const a = b.app.engine.attempts.get(1)!;
      const head = group.hosts[0]!.address;
      expect(a.serverAddr).toBe(head);
      expect(a.distInitAddr).toBe(`${head}:29555`);
      expect(b.said.some((t) => t.includes(`running on node0, node1 (job ${a.jobId})`))).toBe(true);
      // Each node ran its own rank against node 0's store.
      const mine = standins().filter((l) => l.includes(`--port ${port}`));
      expect(mine.some((l) => /--node-rank 0 --dist-init-addr \S+:29555/.test(l))).toBe(true);
      expect(mine.some((l) => /--node-rank 1 --dist-init-addr \S+:29555/.test(l))).toBe(true);
      const worker = b.app.engine.attempts.nodes(1)[0]!;
      expect(readFileSync(worker.logPath!, 'utf8').length).toBeGreaterThan(0);
      const s = await b.run('stop --attempt 1');
      expect(s.exitCode, s.text).toBe(0);
      expect(cluster.run(['squeue', '-h']).trim()).toBe('');
      expect(standins().filter((l) => l.includes(`--port ${port}`))).toEqual([]);
    } finally {
      await b.app.close();
    }
  }, 120_000);

  test("a misspelt flag is refused before the two-node job is queued, against the job's own SGLang (one python for every node)", async () => {
    const b = bot();
    try {
      const r = await b.run(`launch small-2node-typo --port ${await freePort()}`);
      expect(r.exitCode, r.text).toBe(2);
      expect(r.text).toMatch(
        /^config error in profile small-2node-typo against SGLang 0\.5\.8\+standin on cluster \(its --help/,
      );
      expect(r.text).toMatch(
        /small-2node-typo: extra_args --enable-metrcs: SGLang 0\.5\.8\+standin on cluster has no flag --enable-metrcs \(fix: did you mean '--enable-metrics'\?/,
      );
      expect(b.app.engine.attempts.list({ host: 'cluster' })).toEqual([]);
      expect(cluster.run(['squeue', '-h']).trim()).toBe('');
    } finally {
      await b.app.close();
    }
  }, 60_000);

  test('a crash on node 1 of two is the attempt crash, named by its node, and the whole job ends', async () => {
    writeFileSync(join(python, '..', 'node1-oom'), '');
    const b = bot();
    try {
      const r = await b.run(`launch small-2node --port ${await freePort()}`);
      expect(r.exitCode, r.text).toBe(1);
      const a = b.app.engine.attempts.get(1)!;
      expect(a).toMatchObject({ status: 'crashed', active: false, outcome: 'cuda_oom' });
      const d = a.classification as { summary: string };
      expect(d.summary).toMatch(/^node 1 \(cluster\): /);
      expect(b.app.engine.attempts.events(1).some((e) => e.kind === 'node_failed')).toBe(true);
      expect(cluster.run(['squeue', '-h']).trim()).toBe('');
    } finally {
      await b.app.close();
      rmSync(join(python, '..', 'node1-oom'));
    }
  }, 120_000);

  test("a worker whose own log holds only a failure record and whose task exits 1 (srun: task 1: Exited with exit code 1) is the attempt's crash, named by that record, not a node lost with no line in its log", async () => {
    writeFileSync(join(python, '..', 'node1-record'), '');
    const b = makeChatBot(loadedFor(cluster).loaded);
    try {
      const r = await b.run(`launch small-2node --port ${await freePort()}`);
      expect(r.exitCode, r.text).toBe(1);
      const a = b.app.engine.attempts.get(1)!;
      expect(readFileSync(`${a.runDir}/job.log`, 'utf8')).toMatch(
        /^srun: error: node1: task 1: Exited with exit code 1$/m,
      );
      expect(a, a.outcomeDetail ?? '').toMatchObject({ status: 'crashed', active: false });
      expect(a.outcome).not.toBe('node_lost');
      expect(a.outcomeDetail).not.toMatch(/no line in its own log/);
      const d = a.classification as { summary: string; evidence: Array<{ text: string }> };
      expect(d.summary).toMatch(/^node 1 \(cluster\): .*Failed to join the rendezvous/);
      expect(d.evidence.map((e) => e.text)).toContain(NODE1_RECORD);
      expect(
        b.app.engine.attempts
          .events(1)
          .filter((e) => e.kind === 'node_failed')
          .map((e) => e.data),
      ).toEqual([{ rank: 1, host: 'cluster' }]);
      await b.app.engine.notifier?.idle();
      await until(() => b.printed.some((p) => p.includes('CRASH ')), 10_000);
      const alerts = b.printed.filter((p) => p.includes('CRASH '));
      expect(alerts).toHaveLength(1);
      expect(alerts[0]).toMatch(/node 1 \(cluster\): .*Failed to join the rendezvous/);
      expect(cluster.run(['squeue', '-h']).trim()).toBe('');
    } finally {
      await b.app.close();
      rmSync(join(python, '..', 'node1-record'));
    }
  }, 120_000);

  test("a worker's server killed with no line in its own log (SIGKILL, as the host's OOM killer sends): srun's own line in job.log names node 1 as the cause, not node 0's lost-peer crash that follows", async () => {
    const b = makeChatBot(loadedFor(cluster).loaded);
    try {
      const port = await freePort();
      const r = await b.run(`launch small-2node --port ${port}`);
      expect(r.text, r.text).toMatch(/^ready: attempt #1 /);
      // Node 1's server: the stand-in of this port whose srun task is node 1 (its SLURM_NODEID).
      const pids = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
        .split('\n')
        .filter((l) => l.includes('sglang-standin') && l.includes(`--port ${port}`))
        .map((l) => Number(l.trim().split(/\s+/, 1)[0]));
      const node1 = pids.filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes('SLURM_NODEID=1');
        } catch {
          return false;
        }
      });
      expect(node1).toHaveLength(1);
      process.kill(node1[0]!, 'SIGKILL');
      await until(() => b.app.engine.attempts.get(1)?.active === false, 60_000);
      const a = b.app.engine.attempts.get(1)!;
      const out = readFileSync(`${a.runDir}/job.log`, 'utf8');
      // srun's own words (Slurm 22.05 here), the line the bot quotes.
      expect(out).toMatch(/^srun: error: node1: task 1: Killed$/m);
      expect(a.outcome, a.outcomeDetail ?? '').toBe('node_lost');
      expect(a.outcomeDetail).toMatch(
        /^Slurm job \d+ on node\[0-1\]: node 1 \(node1\) failed first, with no line in its own log: srun says srun: error: node1: task 1: Killed;/,
      );
      await until(
        () => b.printed.some((p) => /attempt #1 .*node_lost: .*node 1 \(node1\) failed first/.test(p)),
        10_000,
      );
      expect(standins().filter((l) => l.includes(`--port ${port}`))).toHaveLength(0);
      expect(cluster.run(['squeue', '-h']).trim()).toBe('');
    } finally {
      await b.app.close();
    }
  }, 120_000);

  test("a bot that was down while node 1 crashed: the crash its own log names is the attempt's, not a node lost with no line in its log (srun only says it was killed)", async () => {
    const loaded = loadedFor(cluster).loaded;
    const first = makeChatBot(loaded);
    const port = await freePort();
    const r = await first.run(`launch small-2node --port ${port}`);
    expect(r.text, r.text).toMatch(/^ready: attempt #1 /);
    const worker = first.app.engine.attempts.nodes(1)[0]!;
    await first.app.close();
    // While no bot watches: node 1's server logs an out-of-memory crash and is killed; srun ends the job.
    appendFileSync(
      worker.logPath!,
      [
        '[2026-12-02 10:00:00 TP1] Scheduler hit an exception: Traceback (most recent call last):',
        '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 900, in event_loop_normal',
        '    result = self.run_batch(batch)',
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB',
        '',
      ].join('\n'),
    );
    const node1 = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes('sglang-standin') && l.includes(`--port ${port}`))
      .map((l) => Number(l.trim().split(/\s+/, 1)[0]))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes('SLURM_NODEID=1');
        } catch {
          return false;
        }
      });
    expect(node1).toHaveLength(1);
    process.kill(node1[0]!, 'SIGKILL');
    await until(() => cluster.run(['squeue', '-h']).trim() === '', 60_000);

    const b = makeChatBot(loaded);
    try {
      await resumeWatches(b.app.engine, () => {}, b.app.diagnoser);
      const a = b.app.engine.attempts.get(1)!;
      expect(readFileSync(`${a.runDir}/job.log`, 'utf8')).toMatch(/^srun: error: node1: task 1: Killed$/m);
      expect(a, a.outcomeDetail ?? '').toMatchObject({ status: 'crashed', active: false, outcome: 'cuda_oom' });
      expect(a.outcomeDetail).toMatch(/^ended while the bot was not watching: node 1 \(cluster\): /);
      expect(a.outcomeDetail).not.toMatch(/no line in its own log/);
    } finally {
      await b.app.close();
    }
  }, 120_000);

  test('node failure of a two-node job: node 1’s slurmd dies with its processes; Slurm sets the node DOWN and the job NODE_FAIL; the attempt ends node_fail naming node 1, node 0’s server is gone too, the ledger and the alert say so', async () => {
    // A cluster of its own on the same two namespaces, whose controller downs a silent node within seconds
    // (SlurmdTimeout, MessageTimeout: slurm.conf(5); as the single-node test in slurm-endings.test.ts).
    const c = await startCluster({
      gpus: 1,
      nodes: group.hosts.map((h) => ({ address: h.address, netns: h.netns })),
      settings: { SlurmdTimeout: '5', MessageTimeout: '2' },
    });
    const b = makeChatBot(loadedFor(c).loaded);
    try {
      const port = await freePort();
      const r = await b.run(`launch small-2node --port ${port}`);
      expect(r.text, r.text).toMatch(/^ready: attempt #1 /);
      const jobId = b.app.engine.attempts.get(1)!.jobId!;
      const mine = () => standins().filter((l) => l.includes(`--port ${port}`));
      expect(mine()).toHaveLength(2);

      await c.killSlurmd('node1');
      await until(() => b.app.engine.attempts.get(1)?.active === false, 90_000);
      const job = c.run(['scontrol', 'show', 'job', '-o', jobId]);
      expect(job).toMatch(/JobState=NODE_FAIL /);
      expect(job).toMatch(/ NodeList=node\[0-1\] /);
      const a = b.app.engine.attempts.get(1)!;
      expect(a.outcome, a.outcomeDetail ?? '').toBe('node_fail');
      expect(a.outcomeDetail).toMatch(/node failure: node1 was taken out of service by Slurm \(Not responding/);
      expect(a.outcomeDetail).not.toMatch(/node0 was taken/);
      expect(b.app.engine.attempts.events(1).find((e) => e.kind === 'ended')?.data).toMatchObject({
        outcome: 'node_fail',
      });
      await until(
        () => b.printed.some((p) => /attempt #1 .*node_fail: .*node1 was taken out of service/.test(p)),
        10_000,
      );
      // Slurm ended the job on node 0 as well: no server of the attempt is left on either node.
      await until(() => mine().length === 0, 20_000);
      expect(c.run(['squeue', '-h']).trim()).toBe('');
    } finally {
      await b.app.close();
      await c.stop();
    }
  }, 180_000);
});
