// Issue 14's figures: a launch through Slurm (sbatch on the login node, the job's first log line, ready) against the
// same launch over direct SSH, on the stand-in. The cluster is test/helpers/slurm.ts's real slurmctld and slurmd on
// loopback, its login node the bench's sshd.
import { statSync } from 'node:fs';
import { freshDirs, makeBot, standinHost } from '../test/helpers/app.ts';
import { slurmAvailable, slurmConfig, slurmHost, startCluster } from '../test/helpers/slurm.ts';
import { freePort, type Sshd } from '../test/helpers/sshd.ts';
import { ms, pct, type Row, ratio } from './stats.ts';

const RUNS = 3;

export async function benchSlurm(sshd: Sshd): Promise<Row[]> {
  if (!slurmAvailable) {
    return [
      {
        metric: 'Slurm launch',
        value: 'skipped',
        reference: 'no slurmctld/slurmd (or not root)',
        ratio: '-',
        target: '-',
      },
    ];
  }
  const cluster = await startCluster({ gpus: 1 });
  const dirs = freshDirs();
  // The tests' own cluster entry and config (test/helpers/slurm.ts), beside a direct host on the same sshd: both run
  // the stand-in with the same environment, so the rows differ only by the backend.
  const loaded = slurmConfig(
    { direct: standinHost(sshd, dirs.workdir), cluster: slurmHost(sshd, cluster.conf, dirs.workdir) },
    dirs.dataDir,
  );
  const bot = makeBot(loaded, dirs);
  const measure = async (host: string) => {
    const first: number[] = [];
    const ready: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const port = await freePort();
      const known = bot.app.engine.attempts.list({ limit: 1000 }).length;
      const t0 = performance.now();
      let firstAt = 0;
      // The first byte of the server's log (node 0's output file for a job), seen on this machine's filesystem.
      const watch = (async () => {
        while (!firstAt) {
          const a = bot.app.engine.attempts.list({ limit: 1000 })[known];
          try {
            if (a?.logPath && statSync(a.logPath).size > 0) firstAt = performance.now();
          } catch {
            // not created yet
          }
          await new Promise((r) => setTimeout(r, 1));
        }
      })();
      const out = await bot.run(`launch small --host ${host} --port ${port} --no-check`);
      const readyAt = performance.now();
      await watch;
      if (out.exitCode !== 0) throw new Error(`bench launch on ${host} failed: ${out.text}`);
      first.push(firstAt - t0);
      ready.push(readyAt - t0);
      const id = bot.app.engine.attempts.list({ limit: 1000 })[known]!.id;
      await bot.run(`stop --attempt ${id}`);
    }
    return { first: pct(first, 50), ready: pct(ready, 50) };
  };
  try {
    const direct = await measure('direct');
    const slurm = await measure('cluster');
    return [
      {
        metric: `launch -> first log line, Slurm (median of ${RUNS})`,
        value: ms(slurm.first),
        reference: `direct SSH ${ms(direct.first)}`,
        ratio: ratio(slurm.first, direct.first),
        target: 'sbatch + scheduling + the first poll of squeue',
      },
      {
        metric: `launch -> ready, Slurm (median of ${RUNS})`,
        value: ms(slurm.ready),
        reference: `direct SSH ${ms(direct.ready)}`,
        ratio: ratio(slurm.ready, direct.ready),
        target: 'the queue wait added once, loading the same',
      },
    ];
  } finally {
    await bot.app.close();
    await cluster.stop();
  }
}
