// Slurm's own endings produced by a real Slurm (test/helpers/slurm.ts), each on a cluster configured for it: a node
// whose slurmd dies (NODE_FAIL), a job of a higher-priority partition taking the node (PREEMPTED), a job over its
// --mem in its own cgroup (the kernel's OOM killer), and a job the controller has forgotten on a cluster without
// accounting. The login node is the test's sshd, the job's python the SGLang stand-in.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { toldRestarts } from '../../src/lifecycle/requeue.ts';
import { watchAttempt } from '../../src/lifecycle/watch.ts';
import type { LogLine } from '../../src/logs/lines.ts';
import { freshDirs, makeBot, makeChatBot, postGenerate, STANDIN, until } from '../helpers/app.ts';
import {
  accountingAvailable,
  cgroupMemoryAvailable,
  slurmAvailable,
  slurmConfig,
  slurmHost,
  startCluster,
  type TestCluster,
} from '../helpers/slurm.ts';
import { freePort, type Sshd, startSshd } from '../helpers/sshd.ts';

let sshd: Sshd;
const clusters: TestCluster[] = [];

beforeAll(async () => {
  if (!slurmAvailable) return;
  // The login node's environment asks sbatch to requeue every job (a site default, SBATCH_REQUEUE, which sbatch(1)
  // lets override a script's #SBATCH lines): each ending below must still end the bot's job, never requeue it.
  sshd = await startSshd({ setEnv: { SBATCH_REQUEUE: '1' } });
}, 60_000);

afterAll(async () => {
  for (const c of clusters) await c.stop();
  await sshd?.stop();
}, 60_000);

async function cluster(opts: Parameters<typeof startCluster>[0]): Promise<TestCluster> {
  const c = await startCluster(opts);
  clusters.push(c);
  return c;
}

/** Launches attempt #1 on the cluster to ready, then closes that bot (as a bot going down): returns the job's id. */
async function launchReadyThenGone(one: ReturnType<typeof makeBot>, port: number): Promise<string> {
  try {
    const r = await one.run(`launch small --host cluster --port ${port} --no-check`);
    expect(r.text).toMatch(/^ready: attempt #1 /);
    return one.app.engine.attempts.get(1)!.jobId!;
  } finally {
    await one.app.close();
  }
}

/**
 * A launch to ready by a bot that then closes; its job is cancelled while no bot watches and waited for until the
 * controller has forgotten it (past MinJobAge). Returns the job's id.
 */
async function launchThenForgotten(c: TestCluster, one: ReturnType<typeof makeBot>, port: number): Promise<string> {
  const jobId = await launchReadyThenGone(one, port);
  c.run(['scancel', jobId]);
  await until(() => {
    try {
      c.run(['scontrol', 'show', 'job', '-o', jobId]);
      return false;
    } catch (e) {
      return /Invalid job id/i.test(String((e as { stderr?: string }).stderr));
    }
  }, 120_000);
  return jobId;
}

function config(c: TestCluster, slurm: Record<string, unknown>, python?: string) {
  const { workdir, dataDir } = freshDirs();
  return {
    loaded: slurmConfig({ cluster: slurmHost(sshd, c.conf, workdir, slurm, python) }, dataDir),
    workdir,
    dataDir,
  };
}

/**
 * The job's python: the stand-in, crashing at CUDA graph capture while the returned marker file exists (it does at
 * first), starting `delay` seconds late then inside a job, so the bot sees the run before it crashes (as a real
 * load takes minutes); 0: it crashes within moments, before the bot has seen it run.
 */
const NO_GPUS =
  'for i in $(seq 100); do echo "node check $i of 100: RuntimeError: No CUDA GPUs are available"; done >&2';
/**
 * Runs that fail before their server starts, the same bytes each time: `exit` at once; `exit_late` creates the
 * `printed` file once its lines are out and exits 4 s later (a test looks while it still runs).
 */
const EXITS = {
  exit: () => `${NO_GPUS}; exit 1`,
  exit_late: (printed: string) => `${NO_GPUS}; touch "${printed}"; sleep 4; exit 1`,
};

function crashingPython(
  delay: number,
  scenario = 'oom_graph_capture',
): { python: string; marker: string; printed: string } {
  const dir = mkdtempSync(join(tmpdir(), 'glm-slurm-hold-'));
  // Writable by the job's user (exit_late creates `printed` in it).
  chmodSync(dir, 0o777);
  const marker = join(dir, 'crash');
  const printed = join(dir, 'printed');
  const python = join(dir, 'python');
  writeFileSync(
    python,
    `#!/bin/sh\nif [ -e "${marker}" ] && [ -n "\${SLURM_JOB_ID-}" ]; then sleep ${delay}; ${scenario in EXITS ? EXITS[scenario as keyof typeof EXITS](printed) : `STANDIN_SCENARIO=${scenario}; export STANDIN_SCENARIO`}; fi\nexec ${join(STANDIN, 'python')} "$@"\n`,
    { mode: 0o755 },
  );
  writeFileSync(marker, '');
  return { python, marker, printed };
}

/**
 * A launch whose run crashes (after `delay` s) on a cluster that requeues such an exit held (RequeueExitHold), up to
 * the bot telling the requeue: the bot, the launch's pending answer, the job, and the marker that makes runs crash.
 */
async function launchRequeuedHeld(delay: number, env: Record<string, string> = {}, scenario?: string) {
  const c = await cluster({ gpus: 1, settings: { RequeueExitHold: '1-255' } });
  const { python, marker, printed } = crashingPython(delay, scenario);
  const { loaded } = config(c, { requeue: true }, python);
  const entry = loaded.config.hosts.cluster!;
  entry.env = { ...entry.env, ...env };
  const bot = makeChatBot(loaded);
  try {
    const port = await freePort();
    const launching = bot.run(`launch small --host cluster --port ${port}`);
    await until(() => bot.app.engine.attempts.events(1).some((e) => e.kind === 'requeued'), 60_000);
    return { c, marker, printed, bot, port, launching, jobId: bot.app.engine.attempts.get(1)!.jobId! };
  } catch (e) {
    await bot.app.close();
    throw e;
  }
}

/**
 * Makes the bot's scontrol (the real one, behind a wrapper first on the cluster entry's PATH) answer 2 s late while
 * the returned flag file exists, so the test decides when the bot looks; removing the flag lets it look.
 */
function slowScontrol(bot: ReturnType<typeof makeChatBot>): string {
  const slow = mkdtempSync(join(tmpdir(), 'glm-slurm-slow-'));
  chmodSync(slow, 0o755);
  const flag = join(slow, 'slow');
  writeFileSync(join(slow, 'scontrol'), `#!/bin/sh\n[ -e ${flag} ] && sleep 2\nexec /usr/bin/scontrol "$@"\n`, {
    mode: 0o755,
  });
  const entry = bot.app.engine.loaded.config.hosts.cluster!;
  entry.bin_dirs = [slow, ...entry.bin_dirs];
  writeFileSync(flag, '');
  return flag;
}

const jobLine = (c: TestCluster, jobId: string) => c.run(['scontrol', 'show', 'job', '-o', jobId]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Lets a requeued job start now (`scontrol update JobId=N StartTime=now`; docs/slurm.md: Slurm holds a requeued job
 * back about two minutes). Its EligibleTime is set once slurmctld has processed the requeue, which under load can
 * come after the bot told it: asked once the job is pending, and again while it still waits for its begin time.
 */
async function startNow(c: TestCluster, jobId: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  const late = (why: string) => {
    if (Date.now() > end) throw new Error(`job ${jobId} ${why}: ${jobLine(c, jobId)}`);
  };
  while (!/JobState=PENDING /.test(jobLine(c, jobId))) {
    late('is not pending');
    await sleep(250);
  }
  for (;;) {
    try {
      c.run(['scontrol', 'update', `JobId=${jobId}`, 'StartTime=now']);
    } catch (e) {
      // It started meanwhile ("Job is no longer pending execution"): what the update was for.
      if (!/JobState=PENDING /.test(jobLine(c, jobId))) return;
      throw e;
    }
    await sleep(1000);
    if (!/ Reason=BeginTime /.test(jobLine(c, jobId))) return;
    late('still waits for its begin time');
  }
}

/**
 * Releases a job requeued held (RequeueExitHold) and lets it start now. Waits first for the hold itself: the bot may
 * tell the requeue before slurmctld has finished the old run (COMPLETING), and a release then finds nothing held.
 */
async function releaseNow(c: TestCluster, jobId: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const line = jobLine(c, jobId);
    if (/ Reason=JobHeld(User|Admin) /.test(line) && !/JobState=COMPLETING /.test(line)) break;
    if (Date.now() > end) throw new Error(`job ${jobId} is not held: ${line}`);
    await sleep(250);
  }
  c.run(['scontrol', 'release', jobId]);
  await startNow(c, jobId, Math.max(end - Date.now(), 10_000));
  // Nothing else waits for its node here, so it starts unless slurmctld is slow to schedule (a loaded CI machine) or
  // sets a begin time again after the update: waits until it has left the queue, asking again, and says where it is
  // stuck when it does not (a bare "timed out" on the run's first line says nothing of the job).
  const started = Date.now() + 120_000;
  for (;;) {
    const line = jobLine(c, jobId);
    if (!/JobState=PENDING /.test(line)) return;
    if (Date.now() > started) throw new Error(`job ${jobId} was released but did not start: ${line}`);
    if (/ Reason=BeginTime /.test(line)) {
      try {
        c.run(['scontrol', 'update', `JobId=${jobId}`, 'StartTime=now']);
      } catch {
        // it started between the two calls: what the update was for (the next look returns)
      }
    }
    await sleep(500);
  }
}

const standinsOn = (port: number) =>
  execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes('sglang-standin') && l.includes(`--port ${port}`));

describe.skipIf(!slurmAvailable)('Slurm’s own endings on a real slurmctld/slurmd', () => {
  test('node failure: the node’s slurmd dies and stays down; Slurm marks the node DOWN and the job NODE_FAIL; the alert and the ledger say node failure with the node; stop and status behave', async () => {
    // SlurmdTimeout: how long slurmctld waits for a silent slurmd before it sets the node DOWN; MessageTimeout: how
    // long it waits for an answer to each message, the pings included (slurm.conf(5)). Seen: about 10 s to NODE_FAIL
    // with these, 25 s with the default MessageTimeout of 10.
    const c = await cluster({ gpus: 1, settings: { SlurmdTimeout: '5', MessageTimeout: '2' } });
    const { loaded } = config(c, { partition: 'gpu' });
    const bot = makeChatBot(loaded);
    try {
      const port = await freePort();
      const r = await bot.run(`launch small --host cluster --port ${port}`);
      expect(r.text).toMatch(/^ready: attempt #1 /);
      const jobId = bot.app.engine.attempts.get(1)!.jobId!;
      // Not requeueable (--no-requeue, on sbatch's command line too): a node failure ends the job instead of
      // starting it again, whatever the login node's environment asks.
      expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(/ Requeue=0 /);

      await c.killSlurmd(c.node);
      // The machine "died": its server went with it (SIGKILL is delivered, the processes reaped, a moment later).
      await until(() => standinsOn(port).length === 0, 10_000);
      await until(() => bot.app.engine.attempts.get(1)?.active === false, 60_000);
      expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(/JobState=NODE_FAIL /);
      expect(c.run(['scontrol', 'show', 'node', '-o', c.node])).toMatch(/State=\S*NOT_RESPONDING/);
      const a = bot.app.engine.attempts.get(1)!;
      expect(a.outcome).toBe('node_fail');
      expect(a.outcomeDetail).toMatch(new RegExp(`node failure: ${c.node} was taken out of service by Slurm`));
      expect(a.outcomeDetail).toContain(`scontrol show node ${c.node}`);
      await until(() => bot.printed.some((p) => /attempt #1 .*node_fail: .*node failure: /.test(p)), 10_000);
      expect(bot.printed.find((p) => /attempt #1 .*node_fail/.test(p))).toContain(c.node);

      // status shows it over; stop finds nothing left to stop and says so.
      const st = await bot.run('status');
      expect(st.text).toMatch(/^cluster +idle /m);
      expect(st.text).toContain('cluster: no jobs of this bot in the queue');
      const s = await bot.run('stop --attempt 1');
      expect(s.exitCode).toBe(2);
      expect(s.text).toContain('attempt #1 is not running: it ended node_fail');
    } finally {
      await bot.app.close();
    }
  }, 150_000);

  test('a profile that asks for requeue (slurm.requeue: true), its node failed: Slurm requeues the job after NODE_FAIL; the attempt goes back to queued, said with the node failure as the reason, and waits in the queue', async () => {
    const c = await cluster({ gpus: 1, settings: { SlurmdTimeout: '5', MessageTimeout: '2' } });
    const { loaded } = config(c, { partition: 'gpu', requeue: true });
    const bot = makeChatBot(loaded);
    try {
      const port = await freePort();
      const r = await bot.run(`launch small --host cluster --port ${port}`);
      expect(r.text).toMatch(/^ready: attempt #1 /);
      const jobId = bot.app.engine.attempts.get(1)!.jobId!;
      expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(/ Requeue=1 Restarts=0 /);
      await c.killSlurmd(c.node);
      await until(() => standinsOn(port).length === 0, 10_000);
      await until(() => bot.app.engine.attempts.events(1).some((e) => e.kind === 'requeued'), 60_000);
      expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(/ Restarts=1 /);
      const a = bot.app.engine.attempts.get(1)!;
      expect(a).toMatchObject({ active: true, status: 'queued' });
      const told = bot.app.engine.attempts.events(1).find((e) => e.kind === 'requeued')!.data as { text: string };
      expect(told.text).toMatch(
        new RegExp(
          `^Slurm requeued job ${jobId} \\(restart 1\\): node failure: ${c.node} was taken out of service by Slurm \\(Not responding, \\S*DOWN\\S*\\); it runs again when Slurm starts it`,
        ),
      );
      // Back in the queue, its next run to be followed as a preempted job's is (the test below); here the node stays
      // down. A stop of the queued job is the bot's, confirmed by Slurm.
      const s = await bot.run('stop --attempt 1');
      expect(s.text).toMatch(/^stopped attempt #1 \(small\) on cluster/);
    } finally {
      await bot.app.close();
    }
  }, 180_000);

  test('preemption (PreemptType=preempt/partition_prio, PreemptMode=REQUEUE): a job of the high-priority partition takes the node; the bot’s job ends as preempted, named in the alert and the ledger, not requeued', async () => {
    const c = await cluster({
      gpus: 1,
      settings: { PreemptType: 'preempt/partition_prio', PreemptMode: 'REQUEUE' },
      partitions: [
        'PartitionName=low Nodes=ALL Default=YES MaxTime=60 PriorityTier=1 State=UP',
        'PartitionName=high Nodes=ALL MaxTime=60 PriorityTier=10 State=UP',
      ],
    });
    const { loaded } = config(c, { partition: 'low' });
    const bot = makeChatBot(loaded);
    try {
      const port = await freePort();
      const r = await bot.run(`launch small --host cluster --port ${port}`);
      expect(r.text).toMatch(/^ready: attempt #1 /);
      const jobId = bot.app.engine.attempts.get(1)!.jobId!;
      expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(/ Requeue=0 /);
      const urgent = c
        .run(['sbatch', '--parsable', '-p', 'high', '--gres=gpu:1', '--output=/dev/null', '--wrap', 'sleep 300'], {
          asUser: 'glmtest',
        })
        .trim();
      await until(() => bot.app.engine.attempts.get(1)?.active === false, 60_000);
      expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(/JobState=PREEMPTED /);
      const a = bot.app.engine.attempts.get(1)!;
      expect(a.outcome).toBe('preempted');
      expect(a.outcomeDetail).toMatch(
        /preempted: a job of a higher-priority partition or QOS took its nodes \(partition low\)/,
      );
      await until(() => bot.printed.some((p) => /attempt #1 .*preempted: Slurm job \d+/.test(p)), 10_000);
      // Ended, not back in the queue: the urgent job runs and the bot's is gone from squeue.
      expect(c.run(['squeue', '-h', '-o', '%i %T']).trim()).toBe(`${urgent} RUNNING`);
      await until(() => standinsOn(port).length === 0, 10_000);
      c.run(['scancel', urgent]);
    } finally {
      await bot.app.close();
    }
  }, 150_000);
  test('a profile that asks for requeue (slurm.requeue: true), preempted: Slurm requeues the job; the attempt says so and why, waits in the queue again, and is followed to ready when the job runs again', async () => {
    const c = await cluster({
      gpus: 1,
      settings: { PreemptType: 'preempt/partition_prio', PreemptMode: 'REQUEUE' },
      partitions: [
        'PartitionName=low Nodes=ALL Default=YES MaxTime=60 PriorityTier=1 State=UP',
        'PartitionName=high Nodes=ALL MaxTime=60 PriorityTier=10 State=UP',
      ],
    });
    const { loaded } = config(c, { partition: 'low', requeue: true });
    const bot = makeChatBot(loaded);
    try {
      const port = await freePort();
      const r = await bot.run(`launch small --host cluster --port ${port}`);
      expect(r.text).toMatch(/^ready: attempt #1 /);
      const jobId = bot.app.engine.attempts.get(1)!.jobId!;
      expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(/ Requeue=1 Restarts=0 /);
      const urgent = c
        .run(['sbatch', '--parsable', '-p', 'high', '--gres=gpu:1', '--output=/dev/null', '--wrap', 'sleep 300'], {
          asUser: 'glmtest',
        })
        .trim();
      await until(() => bot.app.engine.attempts.get(1)?.status === 'queued', 60_000);
      const a = bot.app.engine.attempts.get(1)!;
      expect(a.active).toBe(true);
      expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(
        / JobState=PENDING Reason=BeginTime .* Restarts=1 /,
      );
      const said = new RegExp(
        `^Slurm requeued job ${jobId} \\(restart 1\\): preempted \\(slurmstepd\\S*: error: \\*\\*\\* JOB ${jobId} ON \\S+ CANCELLED AT \\S+ DUE TO PREEMPTION \\*\\*\\*\\); it runs again when Slurm starts it`,
      );
      const requeued = bot.app.engine.attempts.events(1).filter((e) => e.kind === 'requeued');
      expect(requeued).toHaveLength(1);
      expect((requeued[0]!.data as { text: string }).text).toMatch(said);
      // The message shows the newest step: the requeue, or already its place in the queue.
      expect(a.lastMilestone).toMatch(/^Slurm requeued job|^queued again \(requeued 1×\)/);
      await until(
        () => bot.printed.some((p) => p.includes(`Slurm requeued job ${jobId} (restart 1): preempted`)),
        10_000,
      );
      await until(() => standinsOn(port).length === 0, 10_000);
      expect((await bot.run('status')).text).toMatch(/cluster +queued \(PENDING: BeginTime\) +#1/);
      // The attempt's one message: queued again, no longer ready.
      const parent = (state: string) =>
        bot.printed.filter((p) => p.startsWith(`attempt #1 small on cluster by U-tester: ${state}`));
      await until(() => parent('queued').length > 0, 15_000);

      // Slurm holds a requeued job back for a while (its EligibleTime); an administrator lets it start now, and the
      // urgent job ends: the same job runs again, and the same attempt loads and gets ready again.
      await startNow(c, jobId);
      c.run(['scancel', urgent]);
      await until(() => bot.app.engine.attempts.get(1)?.status === 'ready', 60_000);
      expect(standinsOn(port)).toHaveLength(1);
      const kinds = bot.app.engine.attempts.events(1).map((e) => e.kind);
      expect(kinds.filter((k) => k === 'running')).toHaveLength(2);
      expect(kinds.indexOf('requeued')).toBeLessThan(kinds.lastIndexOf('running'));
      // Watched again: a stop is the bot's, confirmed by Slurm.
      await until(() => bot.said.some((t) => t.includes('queued again (requeued 1×)')), 10_000);
      // The message ready again after it said queued (updates to one message are spaced and folded: the first
      // run's ready may be folded into the queued).
      await until(() => {
        const shown = parent('');
        return shown.at(-1)?.includes(': ready ') === true && shown.some((p) => p.includes(': queued '));
      }, 15_000);
      const s = await bot.run('stop --attempt 1');
      expect(s.text).toMatch(/^stopped attempt #1 \(small\) on cluster/);
      expect(bot.app.engine.attempts.get(1)!.outcome).toBe('stopped');
      expect(c.run(['squeue', '-h']).trim()).toBe('');
    } finally {
      await bot.app.close();
    }
  }, 150_000);
  test.skipIf(!cgroupMemoryAvailable())(
    'out of memory: task/cgroup on the cgroup v1 memory controller; the server outgrows the job’s --mem, the kernel kills it in the job’s cgroup; the ledger and the alert say out of memory from Slurm’s own line',
    async () => {
      const c = await cluster({ gpus: 1, cgroupMemory: true });
      // The job's python: inside a Slurm step (srun sets SLURM_STEP_ID), a model load that keeps taking host memory
      // (pages touched) until the kernel stops it; anywhere else (the login node, asked for SGLang's version) the
      // stand-in, so nothing outside the job's cgroup ever grows.
      const dir = mkdtempSync(join(tmpdir(), 'glm-slurm-oom-'));
      chmodSync(dir, 0o755);
      const python = join(dir, 'python');
      writeFileSync(
        python,
        [
          '#!/bin/sh',
          `[ -n "\${SLURM_STEP_ID:-}" ] || exec ${join(STANDIN, 'python')} "$@"`,
          'echo "Loading safetensors checkpoint shards:   0% Completed | 0/4 [00:00<?, ?it/s]"',
          `exec ${process.execPath} -e 'const b = []; for (;;) b.push(Buffer.alloc(8 << 20, 1))'`,
          '',
        ].join('\n'),
        { mode: 0o755 },
      );
      const { loaded } = config(c, { partition: 'gpu', sbatch: ['--mem=150'] }, python);
      const bot = makeChatBot(loaded);
      try {
        const port = await freePort();
        const r = await bot.run(`launch small --host cluster --port ${port}`);
        expect(r.exitCode).not.toBe(0);
        const a = bot.app.engine.attempts.get(1)!;
        expect(a.active).toBe(false);
        // What Slurm itself records: the batch job FAILED (srun's step was OOM-killed), so the output's line decides.
        expect(c.run(['scontrol', 'show', 'job', '-o', a.jobId!])).toMatch(/JobState=FAILED /);
        expect(a.outcome).toBe('out_of_memory');
        expect(a.outcomeDetail).toMatch(
          /out of memory: the job's cgroup limit was hit \(Slurm: .*(oom-kill|Out Of Memory)/,
        );
        expect(a.outcomeDetail).toMatch(/--mem in slurm\.sbatch/);
        await until(() => bot.printed.some((p) => /attempt #1 .*out_of_memory: Slurm job \d+/.test(p)), 10_000);
      } finally {
        await bot.app.close();
      }
    },
    150_000,
  );

  test('a run that crashed, requeued held (slurm.conf RequeueExitHold): the attempt says Slurm holds it and how to release it, keeps the crash as an event; released, the next run (appended to the same log) is read from its own start and gets ready; then drained and requeued by an administrator: said as the node taken out of service, not a node failure', async () => {
    const { c, marker, bot, port, launching, jobId } = await launchRequeuedHeld(4);
    try {
      expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(
        / JobState=SPECIAL_EXIT Reason=JobHeldUser .* Restarts=1 /,
      );
      const a = bot.app.engine.attempts.get(1)!;
      expect(a).toMatchObject({ active: true, status: 'queued' });
      const events = bot.app.engine.attempts.events(1);
      const told = events.find((e) => e.kind === 'requeued')!.data as { text: string; held: boolean };
      expect(told.held).toBe(true);
      expect(told.text).toMatch(
        new RegExp(
          `^Slurm requeued job ${jobId} \\(restart 1\\): its run exited with code \\d+, an exit the cluster's RequeueExitHold \\(slurm\\.conf\\) requeues held; Slurm holds it \\(SPECIAL_EXIT, JobHeldUser\\): it runs again only once released, with scontrol release ${jobId}`,
        ),
      );
      // The crash of the run that caused the hold is kept.
      const crashed = events.find((e) => e.kind === 'run_crashed')?.data as
        | { count: number; diagnosis: { category: string } }
        | undefined;
      expect(crashed).toMatchObject({ count: 1, diagnosis: { category: 'cuda_oom' } });
      await until(
        () =>
          bot.said.some((t) =>
            t.includes(
              `held again (requeued 1×): SPECIAL_EXIT, JobHeldUser; it runs again once released (scontrol release ${jobId})`,
            ),
          ),
        15_000,
      );
      // Released (and the fault gone): the next run is appended to node0.log after the crashed one's traceback.
      rmSync(marker);
      await releaseNow(c, jobId);
      await until(() => bot.app.engine.attempts.get(1)?.status === 'ready', 60_000);
      expect((await launching).text).toMatch(/^ready: attempt #1 /);
      const log = c.run(['cat', `${a.runDir}/node0.log`]);
      expect(log.match(/OutOfMemoryError|out of memory/gi)?.length ?? 0).toBeGreaterThan(0);
      expect(log.split('The server is fired up and ready to roll!').length - 1).toBe(1);
      expect(standinsOn(port)).toHaveLength(1);

      // An administrator drains the node and requeues the job: nothing failed, the node is out of service.
      c.run(['scontrol', 'update', `NodeName=${c.node}`, 'State=DRAIN', 'Reason=maintenance']);
      c.run(['scontrol', 'requeue', jobId]);
      await until(() => bot.app.engine.attempts.events(1).filter((e) => e.kind === 'requeued').length === 2, 60_000);
      const second = bot.app.engine.attempts.events(1).filter((e) => e.kind === 'requeued')[1]!.data as {
        text: string;
      };
      expect(second.text).toMatch(new RegExp(`^Slurm requeued job ${jobId} \\(restart 2\\): `));
      expect(second.text).not.toMatch(/node failure/);
      expect(second.text).toMatch(
        new RegExp(
          `^Slurm requeued job ${jobId} \\(restart 2\\): requeued by scontrol requeue \\(slurmstepd\\S*: error: \\*\\*\\* JOB ${jobId} ON \\S+ CANCELLED AT \\S+ DUE TO JOB REQUEUE \\*\\*\\*\\); ${c.node} was taken out of service by Slurm \\(drained: maintenance, \\S*DRAIN\\S*\\); it runs again when Slurm starts it`,
        ),
      );
      c.run(['scontrol', 'update', `NodeName=${c.node}`, 'State=RESUME']);
      await startNow(c, jobId);
      await until(() => bot.app.engine.attempts.get(1)?.status === 'ready', 60_000);
      const s = await bot.run('stop --attempt 1');
      expect(s.text).toMatch(/^stopped attempt #1 \(small\) on cluster/);
    } finally {
      await bot.app.close();
    }
  }, 240_000);

  test("a rerun that truncates its node log (SLURM_OPEN_MODE=truncate in the job's environment, srun(1) --open-mode): the next run is read from the file's start, not from the old run's end, none of its first lines lost, and gets ready", async () => {
    // The first run fails before its server starts (100 lines, longer than the server's lines before its first
    // milestone): the rerun's log has grown past that run's end
    // with its first lines, before the bot looks, so reading from that old end would skip them (GNU tail -F notices a
    // truncation only while the file is shorter than where it reads).
    const { c, marker, bot, port, launching, jobId } = await launchRequeuedHeld(
      4,
      { SLURM_OPEN_MODE: 'truncate' },
      'exit',
    );
    try {
      const a = bot.app.engine.attempts.get(1)!;
      // The bot looks only once the rerun has written its start (slowScontrol, while the flag exists).
      const flag = slowScontrol(bot);
      rmSync(marker);
      await releaseNow(c, jobId);
      // (a wait, not a timing: on a loaded CI machine the rerun took longer than 30 s to get there once; a timeout
      // says where its log stood)
      await until(
        () => c.run(['cat', `${a.runDir}/node0.log`]).includes('The server is fired up and ready to roll!'),
        90_000,
      ).catch((e: Error) => {
        throw new Error(
          `${e.message}: node0.log ends ${JSON.stringify(c.run(['tail', '-n', '3', `${a.runDir}/node0.log`]))}; ${jobLine(c, jobId)}`,
        );
      });
      rmSync(flag);
      await until(() => bot.app.engine.attempts.get(1)?.status === 'ready', 60_000);
      expect((await launching).text).toMatch(/^ready: attempt #1 /);
      // Truncated by the rerun: the failed run's lines are gone from node0.log.
      const log = c.run(['cat', `${a.runDir}/node0.log`]);
      expect(log).not.toMatch(/No CUDA GPUs are available/);
      const events = bot.app.engine.attempts.events(1);
      const after = events
        .slice(events.findIndex((e) => e.kind === 'requeued'))
        .filter((e) => e.kind === 'milestone')
        .map((e) => (e.data as { text: string }).text);
      // The rerun's own first milestones, told from its first lines.
      expect(after.slice(0, 2)).toEqual(['loading weights', 'loading weights 0/1 shards (0%)']);
      expect(after).toContain('ready line seen');
      // A later watch of the run (a restarted bot's, the monitor's) resumes from the offset saved, not from the
      // rerun's start again: its first line is one the server writes after it (a request's), not the run's header.
      await until(() => bot.app.engine.attempts.get(1)!.logOffset > 0, 30_000);
      const saved = bot.app.engine.attempts.get(1)!.logOffset;
      let first: LogLine | undefined;
      const watching = watchAttempt(bot.app.engine, bot.app.engine.attempts.get(1)!, {
        onLine: (l) => {
          first = l;
          return 'stop';
        },
      });
      await postGenerate(bot.app, 'cluster', port);
      expect(await watching).toBe('stopped-by-handler');
      expect(first!.text).not.toMatch(/^glm-ops: run /);
      expect(first!.endOffset).toBeGreaterThan(saved);
      expect((await bot.run('stop --attempt 1')).text).toMatch(/^stopped attempt #1 /);
    } finally {
      await bot.app.close();
    }
  }, 300_000);

  test('a rerun that truncates its node log and prints the same bytes as the run before (a deterministic failure, requeued): the rerun is read from its start, its crash told, not skipped as the old run’s end', async () => {
    const { c, printed, bot, launching, jobId } = await launchRequeuedHeld(
      2,
      { SLURM_OPEN_MODE: 'truncate' },
      'exit_late',
    );
    try {
      const a = bot.app.engine.attempts.get(1)!;
      // The bot looks only once the rerun has printed all its lines (slowScontrol, while the flag exists).
      const flag = slowScontrol(bot);
      rmSync(printed);
      const before = c.run(['cat', `${a.runDir}/node0.log`]);
      await releaseNow(c, jobId);
      // the rerun's srun makes its step once slurmd has cleaned up the old run's, which a loaded machine takes long
      // to do: waited for long, and told with the job and its log when it does not come
      await until(() => existsSync(printed), 180_000).catch((e: Error) => {
        throw new Error(
          `the rerun printed nothing (${e.message}): ${jobLine(c, jobId)}\n${c.run(['cat', `${a.runDir}/node0.log`])}`,
        );
      });
      rmSync(flag);
      // The rerun's lines are the run before's, byte for byte, but for each run's own first line.
      const rerun = c.run(['cat', `${a.runDir}/node0.log`]);
      expect(rerun.split('\n').slice(1)).toEqual(before.split('\n').slice(1));
      expect(rerun.split('\n')[0]).toMatch(new RegExp(`^glm-ops: run 1 of job ${jobId} on \\S+ at `));
      expect(before.split('\n')[0]).toMatch(new RegExp(`^glm-ops: run 0 of job ${jobId} on `));
      await until(() => toldRestarts(bot.app.engine, 1) >= 2, 60_000);
      const crashed = bot.app.engine.attempts
        .events(1)
        .filter((e) => e.kind === 'run_crashed')
        .map((e) => e.data as { count: number; diagnosis: { evidence: unknown[] } });
      const second = crashed.find((e) => e.count === 2);
      expect(second).toBeDefined();
      expect(JSON.stringify(second!.diagnosis.evidence)).toMatch(/No CUDA GPUs are available/);
      // Held again: a stop takes it out of the queue (nothing of it runs to signal); the launch's follower ends.
      expect((await bot.run('stop --attempt 1')).text).toMatch(
        /^stopped attempt #1 \(small\) on cluster: its job was waiting in the queue \(Slurm had it /,
      );
      await launching;
      expect(bot.app.engine.attempts.get(1)).toMatchObject({ status: 'stopped', outcome: 'stopped' });
    } finally {
      await bot.app.close();
    }
  }, 300_000);

  test('a run that crashed and was requeued held before the bot saw it run: the requeue is still told (held, how to release it), and the next run is read from its own start and gets ready', async () => {
    const { c, marker, bot, launching, jobId } = await launchRequeuedHeld(0);
    try {
      const told = bot.app.engine.attempts.events(1).find((e) => e.kind === 'requeued')!.data as { text: string };
      expect(told.text).toMatch(
        new RegExp(`^Slurm requeued job ${jobId} \\(restart 1\\): .*; Slurm holds it .*scontrol release ${jobId}`),
      );
      rmSync(marker);
      await releaseNow(c, jobId);
      await until(() => bot.app.engine.attempts.get(1)?.status === 'ready', 60_000);
      expect((await launching).text).toMatch(/^ready: attempt #1 /);
      expect(c.run(['cat', `${bot.app.engine.attempts.get(1)!.runDir}/node0.log`])).toMatch(
        /Scheduler hit an exception/,
      );
      expect((await bot.run('stop --attempt 1')).text).toMatch(/^stopped attempt #1 /);
    } finally {
      await bot.app.close();
    }
  }, 300_000);

  test("a job that crashed while no bot watched (the bot restarted): the next bot's status diagnoses it from node 0's log (class, root line, evidence), not only Slurm's FAILED", async () => {
    const c = await cluster({ gpus: 1 });
    // A ready server the test turns bad once no bot follows it: its next request NaNs in decode (the stand-in's
    // control file, read by the job's server through the cluster's env).
    const dir = mkdtempSync(join(tmpdir(), 'glm-slurm-ctl-'));
    chmodSync(dir, 0o755);
    const control = join(dir, 'control');
    writeFileSync(control, '', { mode: 0o666 });
    const { workdir, dataDir } = freshDirs();
    const base = slurmHost(sshd, c.conf, workdir, { partition: 'gpu' });
    const loaded = slurmConfig(
      { cluster: { ...base, env: { ...(base.env as Record<string, string>), STANDIN_CONTROL: control } } },
      dataDir,
    );
    const port = await freePort();
    const jobId = await launchReadyThenGone(makeBot(loaded, { workdir, dataDir }), port);
    const two = makeBot(loaded, { workdir, dataDir });
    try {
      writeFileSync(control, 'nan_decode\n');
      await postGenerate(two.app, 'cluster', port);
      await until(() => !c.run(['squeue', '-h', '-j', jobId, '-o', '%T']).trim(), 60_000);
      expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(/JobState=FAILED /);
      await two.run('status');
      const a = two.app.engine.attempts.get(1)!;
      expect(a).toMatchObject({ active: false, status: 'crashed', outcome: 'nan_in_sampling' });
      expect(a.outcomeDetail).toMatch(/^ended while the bot was not watching: /);
      const d = a.classification as { category: string; evidence: unknown[] } | null;
      expect(d?.category).toBe('nan_in_sampling');
      expect(JSON.stringify(d?.evidence)).toMatch(/probability tensor contains either/);
    } finally {
      await two.app.close();
    }
  }, 150_000);

  /**
   * A ready job whose server, once no bot follows it (the first bot closed), is killed by its python wrapper, which
   * then prints `tail` (nothing: an empty tail to its log) and exits 1: Slurm says FAILED, with no ending of its own.
   * The next bot's status closes it. Returns the attempt as the ledger has it then.
   */
  async function failedUnwatched(tail: string) {
    const c = await cluster({ gpus: 1 });
    const dir = mkdtempSync(join(tmpdir(), 'glm-slurm-fail-'));
    chmodSync(dir, 0o777);
    const end = join(dir, 'end');
    const python = join(dir, 'python');
    writeFileSync(
      python,
      `#!/bin/sh
if [ -z "\${SLURM_JOB_ID-}" ]; then exec ${join(STANDIN, 'python')} "$@"; fi
${join(STANDIN, 'python')} "$@" &
pid=$!
while [ ! -e "${end}" ]; do sleep 0.2; done
kill -KILL $pid
# the shell's own "Killed" report is no line of the server's
exec 2>/dev/null
wait $pid
cat "${end}"
exit 1
`,
      { mode: 0o755 },
    );
    const { loaded, workdir, dataDir } = config(c, { partition: 'gpu' }, python);
    const port = await freePort();
    const jobId = await launchReadyThenGone(makeBot(loaded, { workdir, dataDir }), port);
    writeFileSync(end, tail, { mode: 0o644 });
    await until(() => !c.run(['squeue', '-h', '-j', jobId, '-o', '%T']).trim(), 60_000);
    expect(c.run(['scontrol', 'show', 'job', '-o', jobId])).toMatch(/JobState=FAILED .*ExitCode=1:0/);
    const two = makeBot(loaded, { workdir, dataDir });
    try {
      await two.run('status');
      return two.app.engine.attempts.get(1)!;
    } finally {
      await two.app.close();
    }
  }

  test('a job that FAILED (exit 1) while no bot watched, its log ending in one failure record: the record is the crash, as it is for a followed job (showsCrash with exit 1), not `none` with Slurm’s FAILED', async () => {
    const a = await failedUnwatched('[2026-12-01 22:00:00] ERROR: Failed to connect to the tokenizer manager\n');
    expect(a).toMatchObject({ active: false, status: 'crashed', exitCode: 1 });
    const d = a.classification as { category: string; evidence: unknown[] } | null;
    expect(d?.category).not.toBe('none');
    expect(a.outcome).toBe(d?.category);
    expect(a.outcomeDetail).toMatch(/^ended while the bot was not watching: .*Failed to connect/);
    expect(JSON.stringify(d?.evidence)).toMatch(/Failed to connect to the tokenizer manager/);
  }, 150_000);

  test('a job that FAILED (exit 1) while no bot watched, its log naming no failure: a crash of unknown cause (exited with status 1), as for a followed job, never `none`', async () => {
    const a = await failedUnwatched('');
    expect(a).toMatchObject({ active: false, status: 'crashed', outcome: 'other', exitCode: 1 });
    expect((a.classification as { category: string } | null)?.category).toBe('other');
    expect(a.outcomeDetail).toMatch(/^ended while the bot was not watching: .*exited with status 1/);
  }, 150_000);

  test("a job that crashed and ended before any follower saw it run (a short job): the launch still diagnoses it from node 0's log, not only Slurm's FAILED", async () => {
    const c = await cluster({ gpus: 1 });
    // The job's server fails at once (before it parses its flags): the job is over within a scheduler pass.
    const dir = mkdtempSync(join(tmpdir(), 'glm-slurm-short-'));
    chmodSync(dir, 0o755);
    const python = join(dir, 'python');
    writeFileSync(
      python,
      `#!/bin/sh\nif [ -n "\${SLURM_JOB_ID-}" ]; then STANDIN_SCENARIO=import_error; export STANDIN_SCENARIO; fi\nexec ${join(STANDIN, 'python')} "$@"\n`,
      { mode: 0o755 },
    );
    const { loaded } = config(c, { partition: 'gpu' }, python);
    const bot = makeChatBot(loaded);
    try {
      const r = await bot.run(`launch small --host cluster --port ${await freePort()}`);
      expect(r.exitCode).not.toBe(0);
      const a = bot.app.engine.attempts.get(1)!;
      expect(c.run(['scontrol', 'show', 'job', '-o', a.jobId!])).toMatch(/JobState=FAILED /);
      expect(a).toMatchObject({ active: false, status: 'crashed' });
      const d = a.classification as { category: string; evidence: unknown[] } | null;
      expect(a.outcome).toBe(d?.category);
      expect(JSON.stringify(d?.evidence)).toMatch(/No module named 'sgl_kernel'/);
    } finally {
      await bot.app.close();
    }
  }, 150_000);

  test('a job the controller has forgotten, on a cluster without accounting: after a restart the bot says Slurm forgot it, that there is no accounting (sacct’s own words) and that how it ended is unknown', async () => {
    // MinJobAge: how long slurmctld keeps an ended job's record (slurm.conf(5)); 2 is the smallest it advises.
    const c = await cluster({ gpus: 1, settings: { MinJobAge: '2' } });
    const { loaded, workdir, dataDir } = config(c, { partition: 'gpu' });
    const port = await freePort();
    // Ended while no bot watched, and then purged by the controller (it purges old jobs about once a minute).
    const jobId = await launchThenForgotten(c, makeBot(loaded, { workdir, dataDir }), port);
    const two = makeBot(loaded, { workdir, dataDir });
    try {
      const st = await two.run('status');
      expect(st.text).not.toMatch(/cluster +ready +#1/);
      const a = two.app.engine.attempts.get(1)!;
      expect(a.active).toBe(false);
      expect(a.outcome).toBe('lost');
      expect(a.outcomeDetail).toContain(`the controller has forgotten job ${jobId} (it ended more than MinJobAge ago)`);
      expect(a.outcomeDetail).toMatch(/there is no accounting to ask \(sacct: .*accounting storage is disabled/i);
      expect(a.outcomeDetail).toMatch(/how it ended is unknown \(its output: .*\/job\.log\)/);
      await until(() => standinsOn(port).length === 0, 10_000);
    } finally {
      await two.app.close();
    }
  }, 200_000);
  test.skipIf(!accountingAvailable)(
    'with accounting (slurmdbd on a MariaDB of the test’s own): a job the controller has forgotten is read from sacct after a restart; cancelled by someone else is named, from accounting',
    async () => {
      const c = await cluster({ gpus: 1, accounting: true, settings: { MinJobAge: '2' } });
      const { loaded, workdir, dataDir } = config(c, { partition: 'gpu' });
      const port = await freePort();
      const jobId = await launchThenForgotten(c, makeBot(loaded, { workdir, dataDir }), port);
      // Accounting kept it: sacct's own row for the job.
      expect(c.run(['sacct', '-n', '-P', '-X', '-j', jobId, '-o', 'JobID,State'])).toMatch(
        new RegExp(`^${jobId}\\|CANCELLED by 0\\n`),
      );
      const two = makeBot(loaded, { workdir, dataDir });
      try {
        await two.run('status');
        const a = two.app.engine.attempts.get(1)!;
        expect(a.active).toBe(false);
        expect(a.outcome).toBe('cancelled');
        expect(a.outcomeDetail).toMatch(
          new RegExp(`^Slurm job ${jobId} on ${c.node} \\(from Slurm accounting, sacct\\): cancelled outside the bot`),
        );
        expect(a.outcomeDetail).toMatch(/ended while the bot was not watching/);
        await until(() => standinsOn(port).length === 0, 10_000);
      } finally {
        await two.app.close();
      }
    },
    200_000,
  );
});
