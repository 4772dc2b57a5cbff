// Launch, queue, watch, stop and reconcile on a real Slurm (slurmctld + slurmd on loopback, test/helpers/slurm.ts),
// its login node the test's own sshd, the job's python the SGLang stand-in.
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { resumeWatches } from '../../src/lifecycle/resume.ts';
import { freshDirs, makeBot, makeChatBot, until } from '../helpers/app.ts';
import { clusterForFile, slurmAvailable, slurmConfig, slurmHost } from '../helpers/slurm.ts';
import { freePort } from '../helpers/sshd.ts';

const on = clusterForFile({ gpus: 1 });

function clusterConfig(workdir: string, dataDir: string) {
  const entry = (slurm: Record<string, unknown>) => slurmHost(on.sshd, on.cluster.conf, workdir, slurm);
  return slurmConfig(
    {
      cluster: entry({ partition: 'gpu', sbatch: ['--mem=100'] }),
      short: entry({ time_limit: '1' }),
      wrong: entry({ partition: 'nosuch' }),
    },
    dataDir,
  );
}

const jobsOf = (user = 'glmtest') =>
  on.cluster.run(['squeue', '-h', '-u', user, '-o', '%i %T %j']).trim().split('\n').filter(Boolean);
const standinsOn = (port: number) =>
  execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes('sglang-standin') && l.includes(`--port ${port}`));

describe.skipIf(!slurmAvailable)('Slurm backend on a real slurmctld/slurmd', () => {
  test('--dry-run prints the batch script exactly as it is submitted; a bad partition is refused at submit with Slurm’s words and the fix', async () => {
    const { workdir, dataDir } = freshDirs();
    const bot = makeBot(clusterConfig(workdir, dataDir), { workdir, dataDir });
    try {
      const port = await freePort();
      const dry = await bot.run(`launch small --host cluster --port ${port} --dry-run --json`);
      expect(dry.exitCode).toBe(0);
      const script = (dry.data as { script: string }).script;
      expect(script).toMatch(/^#!\/bin\/sh\n/);
      expect(script).toContain('#SBATCH --gres=gpu:1\n');
      expect(script).toContain('#SBATCH --partition=gpu\n');
      expect(script).toContain('#SBATCH --mem=100\n');
      expect(script).toContain(`--port ${port}`);
      expect(jobsOf()).toEqual([]);
      const text = await bot.run(`launch small --host cluster --port ${port} --dry-run`);
      expect(text.text).toContain(`--- batch script ---\n${script}--- end ---`);

      const bad = await bot.run(`launch small --host wrong --port ${port}`);
      expect(bad.exitCode).toBe(2);
      expect(bad.text).toMatch(/sbatch refused the job: .*invalid partition/i);
      expect(bad.text).toMatch(/sinfo -s/);
      const a = bot.app.engine.attempts.list({ host: 'wrong' })[0]!;
      expect(a.outcome).toBe('submit_failed');
      expect(a.active).toBe(false);

      // The same script, submitted: Slurm's own copy of the job's script is the dry run's, byte for byte.
      const r = await bot.run(`launch small --host cluster --port ${port} --no-check`);
      expect(r.text).toMatch(/^ready: attempt #\d+/);
      const launched = bot.app.engine.attempts.list({ host: 'cluster' }).at(-1)!;
      expect(launched.jobId).toMatch(/^\d+$/);
      const submitted = on.cluster.run(['scontrol', 'write', 'batch_script', launched.jobId!, '-']);
      expect(submitted).toBe(script);
      // logs reads the job's output file (node 0's) from the login node.
      const logs = await bot.run(`logs --attempt ${launched.id} --lines 50`);
      expect(logs.text).toMatch(/The server is fired up and ready to roll!/);
      const s = await bot.run(`stop --attempt ${launched.id}`);
      expect(s.exitCode).toBe(0);
      expect(jobsOf()).toEqual([]);
      expect(standinsOn(port)).toEqual([]);
    } finally {
      await bot.app.close();
    }
  }, 120_000);

  test("a flag or value the job's SGLang would refuse is refused before anything is queued: the login node asks the cluster entry's python (the one the job runs) for its --help", async () => {
    const { workdir, dataDir } = freshDirs();
    const bot = makeBot(clusterConfig(workdir, dataDir), { workdir, dataDir });
    try {
      const port = await freePort();
      // SGLang 0.5.8 (the stand-in's February release) has no nvfp4 KV cache: its argparse would refuse it on the
      // compute node once the job ran; the bot refuses it now, with that SGLang's own choices.
      for (const extra of ['', ' --dry-run']) {
        const r = await bot.run(
          `launch small --host cluster --port ${port} --set kv_cache_dtype=nvfp4 --no-check${extra}`,
        );
        expect(r.exitCode, r.text).toBe(2);
        expect(r.text).toMatch(
          /^config error in profile small\S* against SGLang 0\.5\.8\+standin on cluster \(its --help(, cached \S+)?\)/,
        );
        expect(r.text).toContain(
          "kv_cache_dtype: --kv-cache-dtype 'nvfp4' is not a choice of SGLang 0.5.8+standin on cluster, which takes: auto, fp8_e5m2, fp8_e4m3, bf16, bfloat16, fp4_e2m1",
        );
      }
      expect(bot.app.engine.attempts.list({ host: 'cluster' })).toEqual([]);
      expect(jobsOf()).toEqual([]);
    } finally {
      await bot.app.close();
    }
  }, 60_000);

  test("the version and --help are asked in the job's own environment (the cluster's env, its env_file): a value only the job's newer SGLang takes launches, and a later entry whose env_file picks the older SGLang is refused, not read from the newer one's cached answer", async () => {
    const { workdir, dataDir } = freshDirs();
    // The job's SGLang is the July one because of the cluster's env_file (as a PYTHONPATH or a venv's activation in
    // such a file would pick it) or its env: the login node's plain environment has the February one.
    const envFile = join(workdir, 'cluster.env');
    writeFileSync(envFile, 'STANDIN_SGLANG_FLAVOR=new\n');
    chmodSync(envFile, 0o644);
    const base = slurmHost(on.sshd, on.cluster.conf, workdir, { partition: 'gpu' });
    const hosts = (file: string) => ({
      cluster: base,
      viafile: { ...base, env_file: file },
      viaenv: { ...base, env: { ...(base.env as Record<string, string>), STANDIN_SGLANG_FLAVOR: 'new' } },
    });
    const bot = makeBot(slurmConfig(hosts(envFile), dataDir), { workdir, dataDir });
    try {
      const port = await freePort();
      const dry = await bot.run(`launch small --host viaenv --port ${port} --set kv_cache_dtype=nvfp4 --dry-run`);
      expect(dry.exitCode, dry.text).toBe(0);
      expect(dry.text).toContain(' --kv-cache-dtype nvfp4\n');
      const r = await bot.run(`launch small --host viafile --port ${port} --set kv_cache_dtype=nvfp4 --no-check`);
      expect(r.text, r.text).toMatch(/^ready: attempt #1 /);
      expect(bot.app.engine.attempts.get(1)!.sglangVersion).toBe('0.5.15+standin');
      expect(standinsOn(port).some((l) => l.includes('--kv-cache-dtype nvfp4'))).toBe(true);
      expect((await bot.run('stop --attempt 1')).text).toMatch(/^stopped attempt #1 /);
    } finally {
      await bot.app.close();
    }
    // The same data directory (its cached --help answers), the env_file now picking the February SGLang: asked anew
    // in that environment, and refused with that SGLang's own choices.
    const older = join(workdir, 'older.env');
    writeFileSync(older, 'STANDIN_SGLANG_FLAVOR=old\n');
    chmodSync(older, 0o644);
    const again = makeBot(slurmConfig(hosts(older), dataDir), { workdir, dataDir });
    try {
      const r = await again.run(
        `launch small --host viafile --port ${await freePort()} --set kv_cache_dtype=nvfp4 --no-check`,
      );
      expect(r.exitCode, r.text).toBe(2);
      expect(r.text).toContain("--kv-cache-dtype 'nvfp4' is not a choice of SGLang 0.5.8+standin on viafile");
    } finally {
      await again.app.close();
    }
  }, 120_000);

  test("check asks in the environment a launch asks in: a profile whose env picks the job's newer SGLang is checked against that SGLang, as its launch is, not against the login node's plain one", async () => {
    const { workdir, dataDir } = freshDirs();
    const profiles = mkdtempSync(join(tmpdir(), 'glm-profiles-'));
    // The profile's env picks the July SGLang (as a venv or a PYTHONPATH it sets would), whose --kv-cache-dtype
    // takes nvfp4; the cluster entry's own environment has the February one, which does not.
    writeFileSync(
      join(profiles, 'newer.yaml'),
      'description: the July SGLang through its env\nmodel_path: Qwen/Qwen2.5-0.5B-Instruct\ntp: 1\nkv_cache_dtype: nvfp4\nenv:\n  STANDIN_SGLANG_FLAVOR: new\n',
    );
    const loaded = slurmConfig(
      { cluster: slurmHost(on.sshd, on.cluster.conf, workdir, { partition: 'gpu' }) },
      dataDir,
      profiles,
    );
    const bot = makeBot(loaded, { workdir, dataDir });
    try {
      const dry = await bot.run(`launch newer --host cluster --port ${await freePort()} --dry-run`);
      expect(dry.exitCode, dry.text).toBe(0);
      const r = await bot.run('check --host cluster --profile newer');
      expect(r.text).toMatch(/^ {2}sglang: {8}0\.5\.8\+standin$/m);
      expect(r.text).toContain('profiles:      1 checked, flags ok');
      expect(r.text).toContain(
        'note: newer: its env picks SGLang 0.5.15+standin: its flags are checked against SGLang 0.5.15+standin on cluster (its --help',
      );
      expect(r.text).not.toContain('is not a choice');
    } finally {
      await bot.app.close();
    }
  }, 60_000);

  test('queued behind another job: the message says so, then the node and the loading; the first job ends at its time limit', async () => {
    const { workdir, dataDir } = freshDirs();
    const bot = makeChatBot(clusterConfig(workdir, dataDir));
    try {
      const [pa, pb] = [await freePort(), await freePort()];
      const a = await bot.run(`launch small --host short --port ${pa}`);
      expect(a.text).toMatch(/^ready: attempt #1 /);
      const first = bot.app.engine.attempts.get(1)!;
      expect(jobsOf()).toEqual([`${first.jobId} RUNNING glm-1-small`]);

      const mark = bot.said.length;
      const second = bot.run(`launch small --host cluster --port ${pb}`);
      await until(() => bot.said.some((t) => t.includes('queued: Resources (position 1)')), 20_000);
      await until(() => bot.printed.some((p) => p.includes('queued: Resources (position 1)')), 20_000);
      expect(bot.app.engine.attempts.get(2)!.status).toBe('queued');
      // The queue at a glance: this bot's jobs as Slurm lists them, and with --gpus the partition's GPUs in use.
      const queued = bot.app.engine.attempts.get(2)!;
      const q = await bot.run('status --gpus');
      expect(q.text).toMatch(/cluster +queued \(PENDING: Resources\) +#2/);
      expect(q.text).toMatch(new RegExp(`${queued.jobId} +#2 +PENDING +Resources`));
      expect(q.text).toMatch(new RegExp(`${first.jobId} +#1 +RUNNING +None +${on.cluster.node}`));
      expect(q.text).toMatch(new RegExp(`partition GPUs:\\n[^]*${on.cluster.node} +(alloc|mix) +gpu:1 +gpu:1`));
      // Three host entries name the same cluster (login node and SLURM_CONF): its queue is shown once.
      expect(q.text.match(/queue \(this bot's jobs\)/g)).toHaveLength(1);

      const b = await second;
      expect(b.text).toMatch(/^ready: attempt #2 /);
      // The first job hit its one-minute limit: Slurm's ending, recorded as such and told in the channel.
      await until(() => bot.app.engine.attempts.get(1)?.active === false, 15_000);
      const ended = bot.app.engine.attempts.get(1)!;
      expect(ended.outcome).toBe('time_limit');
      expect(ended.outcomeDetail).toMatch(/time limit reached/);
      await until(() => bot.printed.some((p) => /attempt #1 .*time_limit: Slurm job \d+/.test(p)), 10_000);
      const order = ['queued: Resources (position 1)', `running on ${on.cluster.node} (job`, 'READY'];
      const at = order.map((t) => bot.said.slice(mark).findIndex((s) => s.includes(t)));
      expect(at.every((i) => i >= 0)).toBe(true);
      expect([...at].sort((x, y) => x - y)).toEqual(at);
      const st = await bot.run('status');
      expect(st.text).toMatch(/cluster +ready +#2/);
      const p = await bot.run('probe --attempt 2');
      expect(p.exitCode).toBe(0);
      expect(p.text).toMatch(new RegExp(`process: +Slurm job \\d+: RUNNING on ${on.cluster.node}`));
      expect(p.text).toMatch(/\/health: +200/);
      await bot.run('stop --attempt 2');
      expect(jobsOf()).toEqual([]);
    } finally {
      await bot.app.close();
    }
  }, 200_000);

  test('bot restart while queued and while running: Slurm is asked, the queued job is followed to ready; cancelled by someone else is named', async () => {
    const { workdir, dataDir } = freshDirs();
    const loaded = clusterConfig(workdir, dataDir);
    const blocker = on.cluster
      .run(['sbatch', '--parsable', '--gres=gpu:1', '--output=/dev/null', '--wrap', 'sleep 300'], { asUser: 'glmtest' })
      .trim();
    const port = await freePort();
    const one = makeChatBot(loaded);
    const launching = one.run(`launch small --host cluster --port ${port}`).catch((e: Error) => e);
    await until(() => one.app.engine.attempts.get(1)?.status === 'queued', 20_000);
    await one.app.close();
    await launching;

    const two = makeChatBot(loaded);
    try {
      const st = await two.run('status');
      expect(st.text).toMatch(/queued/);
      expect(await resumeWatches(two.app.engine, () => {}, two.app.diagnoser)).toBe(1);
      on.cluster.run(['scancel', blocker]);
      await until(() => two.app.engine.attempts.get(1)?.status === 'ready', 60_000);

      // Restarted again while it runs: reconcile asks Slurm and keeps it; a stop from the new bot is confirmed by Slurm.
      const three = makeBot(loaded, { workdir, dataDir });
      try {
        const s3 = await three.run('status');
        expect(s3.text).toMatch(/cluster +ready +#1/);
        const s = await three.run('stop --attempt 1');
        expect(s.exitCode).toBe(0);
        expect(three.app.engine.attempts.get(1)!.outcome).toBe('stopped');
        expect(jobsOf()).toEqual([]);
        await until(() => standinsOn(port).length === 0, 10_000);
      } finally {
        await three.app.close();
      }

      // A job cancelled outside the bot (scancel by a person) ends as "cancelled", not as a crash.
      const port2 = await freePort();
      const r = await two.run(`launch small --host cluster --port ${port2}`);
      expect(r.text).toMatch(/^ready: attempt #2 /);
      on.cluster.run(['scancel', two.app.engine.attempts.get(2)!.jobId!]);
      await until(() => two.app.engine.attempts.get(2)?.outcome === 'cancelled', 30_000);
      expect(two.app.engine.attempts.get(2)!.outcomeDetail).toMatch(/cancelled outside the bot/);
    } finally {
      await two.app.close();
    }
  }, 200_000);

  test("a crash-looking traceback in a ready job's log while it serves on: asked of Slurm and the job's /health_generate, not told", async () => {
    const { workdir, dataDir } = freshDirs();
    const bot = makeChatBot(clusterConfig(workdir, dataDir));
    try {
      const r = await bot.run(`launch small --host cluster --port ${await freePort()}`);
      expect(r.text).toMatch(/^ready: attempt #1 /);
      const a = bot.app.engine.attempts.get(1)!;
      // A helper thread of the server's main process dies (CPython's threading excepthook output); nothing follows.
      const root = 'ConnectionRefusedError: [Errno 111] Connection refused';
      appendFileSync(
        a.logPath!,
        `${[
          'Exception in thread Thread-3 (push_metrics):',
          'Traceback (most recent call last):',
          '  File "/usr/lib/python3.12/threading.py", line 1075, in _bootstrap_inner',
          '    self.run()',
          '  File "/usr/lib/python3.12/socket.py", line 852, in create_connection',
          '    sock.connect(sa)',
          root,
        ].join('\n')}\n`,
      );
      await until(() => bot.app.engine.attempts.events(1).some((e) => e.kind === 'error_survived'), 30_000);
      const ev = bot.app.engine.attempts.events(1).find((e) => e.kind === 'error_survived')!;
      expect(ev.data).toMatchObject({ category: 'other', root, why: 'its job runs and /health_generate answered 200' });
      expect(bot.app.engine.attempts.events(1).map((e) => e.kind)).not.toContain('crash_seen');
      expect(bot.app.engine.attempts.get(1)).toMatchObject({ active: true, status: 'ready', classification: null });
      await bot.app.engine.notifier!.idle();
      await bot.app.delivery!.flush(5000);
      expect(bot.printed.filter((p) => p.includes('CRASH '))).toEqual([]);
      await bot.run('stop --attempt 1');
      expect(jobsOf()).toEqual([]);
    } finally {
      await bot.app.close();
    }
  }, 120_000);
});
