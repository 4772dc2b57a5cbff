// `stop` of a Slurm job that waits in the queue, on a real slurmctld/slurmd (test/helpers/slurm.ts): pending behind
// another job, submitted held (sbatch --hold), held while pending (scontrol hold), requeued held after it ran
// (scontrol requeuehold) and requeued in the special state (scontrol requeuehold State=SpecialExit, as a cluster's
// RequeueExitHold does). Nothing of such a job runs anywhere, so there is nothing to signal: the stop takes it out
// of the queue and the ledger records it stopped by whom, not crashed, exited or lost, and no alert is raised. A job
// an administrator suspended (scontrol suspend) is no queued one: its stopped processes take no SIGTERM, so the stop
// cancels it as it is and says it was killed.
import { describe, expect, test } from 'vitest';
import { dequeuedOrRan } from '../../src/lifecycle/slurm/backend.ts';
import { parseScontrolJob } from '../../src/lifecycle/slurm/cli.ts';
import { freshDirs, makeChatBot, until } from '../helpers/app.ts';
import { clusterForFile, slurmAvailable, slurmConfig, slurmHost } from '../helpers/slurm.ts';
import { freePort } from '../helpers/sshd.ts';

const on = clusterForFile({ gpus: 1 });

function chatBot(slurm: Record<string, unknown> = {}) {
  const { workdir, dataDir } = freshDirs();
  return makeChatBot(slurmConfig({ cluster: slurmHost(on.sshd, on.cluster.conf, workdir, slurm) }, dataDir));
}

const jobLine = (jobId: string) => on.cluster.run(['scontrol', 'show', 'job', '-o', jobId]);

/** Another user's job on the only GPU: the bot's job waits behind it (PENDING, Resources). */
function blocker(): string {
  return on.cluster
    .run(['sbatch', '--parsable', '--gres=gpu:1', '--output=/dev/null', '--wrap', 'sleep 300'], { asUser: 'glmtest' })
    .trim();
}

/**
 * Stops attempt #1 while Slurm has its job in `state` (and `reason`): the stop is told as a job taken out of the
 * queue, the ledger says stopped (with the state it was in), the launch still waiting on it ends with that stop,
 * Slurm says CANCELLED, and the chat got no alert of an ending.
 */
async function stopQueued(bot: ReturnType<typeof makeChatBot>, launching: Promise<unknown>, state: RegExp) {
  const jobId = bot.app.engine.attempts.get(1)!.jobId!;
  const s = await bot.run('stop --attempt 1');
  const had = new RegExp(`Slurm had it ${state.source}`);
  expect(s.text).toMatch(/^stopped attempt #1 \(small\) on cluster: its job was waiting in the queue \(/);
  expect(s.text).toMatch(had);
  expect(s.text).toMatch(/: taken out of the queue, nothing ran to signal/);
  await launching;
  const a = bot.app.engine.attempts.get(1)!;
  expect(a, a.outcomeDetail ?? '').toMatchObject({ active: false, status: 'stopped', outcome: 'stopped' });
  expect(a.outcomeDetail).toMatch(/^stopped by U-tester while its job waited in the queue \(/);
  expect(a.outcomeDetail).toMatch(had);
  const events = bot.app.engine.attempts.events(1);
  expect(events.find((e) => e.kind === 'stopped')?.data).toMatchObject({ actor: 'U-tester', how: 'dequeued' });
  expect(events.some((e) => e.kind === 'ended')).toBe(false);
  expect(jobLine(jobId)).toMatch(/ JobState=CANCELLED /);
  await bot.app.engine.notifier?.idle();
  expect(
    bot.printed.filter((p) => /CRASH |attempt #1 .*(exited|lost|cancelled)/.test(p) && !p.includes('stopped by')),
  ).toEqual([]);
  // The thread says who stopped it and how.
  const told = 'stopped by U-tester: stopped attempt #1 (small) on cluster: its job was waiting in the queue (';
  expect(bot.printed.filter((p) => p.includes(told))).toHaveLength(1);
}

describe.skipIf(!slurmAvailable)('stop of a Slurm job that waits in the queue', () => {
  test('pending behind another job (PENDING, Resources)', async () => {
    const other = blocker();
    const bot = chatBot();
    try {
      const launching = bot.run(`launch small --host cluster --port ${await freePort()}`);
      await until(() => bot.said.some((t) => t.includes('queued: Resources')), 30_000);
      await stopQueued(bot, launching, /PENDING, Resources/);
    } finally {
      on.cluster.run(['scancel', other]);
      await bot.app.close();
    }
  }, 90_000);

  test('submitted held (sbatch --hold: PENDING, JobHeldUser)', async () => {
    const bot = chatBot({ sbatch: ['--hold'] });
    try {
      const launching = bot.run(`launch small --host cluster --port ${await freePort()}`);
      await until(() => bot.said.some((t) => t.includes('held: JobHeldUser')), 30_000);
      await stopQueued(bot, launching, /PENDING, JobHeldUser/);
    } finally {
      await bot.app.close();
    }
  }, 90_000);

  test('held while pending by an administrator (scontrol hold: PENDING, JobHeldAdmin)', async () => {
    const other = blocker();
    const bot = chatBot();
    try {
      const launching = bot.run(`launch small --host cluster --port ${await freePort()}`);
      await until(() => bot.said.some((t) => t.includes('queued: Resources')), 30_000);
      on.cluster.run(['scontrol', 'hold', bot.app.engine.attempts.get(1)!.jobId!]);
      await until(() => bot.said.some((t) => t.includes('held: JobHeldAdmin')), 30_000);
      await stopQueued(bot, launching, /PENDING, JobHeldAdmin/);
    } finally {
      on.cluster.run(['scancel', other]);
      await bot.app.close();
    }
  }, 90_000);

  for (const [how, argv, state] of [
    ['scontrol requeuehold: PENDING, job_requeued_in_held_state', [], /PENDING, job_requeued_in_held_state/],
    ['scontrol requeuehold State=SpecialExit: SPECIAL_EXIT', ['State=SpecialExit'], /SPECIAL_EXIT, \S+/],
  ] as const) {
    test(`requeued held after it ran (${how})`, async () => {
      const bot = chatBot({ requeue: true });
      try {
        const launching = bot.run(`launch small --host cluster --port ${await freePort()}`);
        await until(() => bot.app.engine.attempts.get(1)?.status === 'ready', 60_000);
        const jobId = bot.app.engine.attempts.get(1)!.jobId!;
        on.cluster.run(['scontrol', 'requeuehold', ...argv, jobId]);
        // The bot has seen its run end and the job back in the queue, held.
        await until(() => bot.app.engine.attempts.get(1)?.status === 'queued', 60_000);
        await until(() => /JobState=(PENDING|SPECIAL_EXIT) /.test(jobLine(jobId)), 30_000);
        await stopQueued(bot, launching, state);
      } finally {
        await bot.app.close();
      }
    }, 120_000);
  }

  test('suspended by an administrator (scontrol suspend: SUSPENDED): cancelled as it is, told killed', async () => {
    const bot = chatBot();
    try {
      const launching = bot.run(`launch small --host cluster --port ${await freePort()}`);
      await until(() => bot.app.engine.attempts.get(1)?.status === 'ready', 60_000);
      await launching;
      const jobId = bot.app.engine.attempts.get(1)!.jobId!;
      on.cluster.run(['scontrol', 'suspend', jobId]);
      await until(() => / JobState=SUSPENDED /.test(jobLine(jobId)), 20_000);
      const s = await bot.run('stop --attempt 1');
      expect(s.text).toMatch(
        /^stopped attempt #1 \(small\) on cluster: it was killed \(Slurm had it SUSPENDED\b.*: a suspended job takes no SIGTERM, cancelled as it was\)/,
      );
      expect(jobLine(jobId)).toMatch(/ JobState=CANCELLED /);
      const a = bot.app.engine.attempts.get(1)!;
      expect(a).toMatchObject({ active: false, status: 'stopped', outcome: 'stopped' });
      expect(a.outcomeDetail).toMatch(/^stopped by U-tester \(KILL; Slurm had it SUSPENDED\b/);
      const events = bot.app.engine.attempts.events(1);
      expect(events.find((e) => e.kind === 'stopped')?.data).toMatchObject({ actor: 'U-tester', how: 'KILL' });
      expect(events.some((e) => e.kind === 'ended')).toBe(false);
    } finally {
      on.cluster.run(['scancel', bot.app.engine.attempts.get(1)?.jobId ?? '0']);
      await bot.app.close();
    }
  }, 120_000);
});

// A stop that reads a job waiting (PENDING) races its start: if it started before the plain scancel reached it, Slurm
// ended a running job, and the stop says so rather than "nothing ran". dequeuedOrRan decides from Slurm's record
// after the scancel: both kinds of record here are the real cluster's.
describe.skipIf(!slurmAvailable)('a stop that read its job waiting, told by what Slurm says after the scancel', () => {
  const record = (jobId: string) => parseScontrolJob(jobLine(jobId).trim())!;
  const sbatch = (...args: string[]) =>
    on.cluster
      .run(['sbatch', '--parsable', '--gres=gpu:1', '--output=/dev/null', ...args, '--wrap', 'sleep 300'])
      .trim();
  const over = (jobId: string) => until(() => / JobState=CANCELLED /.test(jobLine(jobId)), 30_000);

  test('cancelled while still pending: taken out of the queue, nothing ran', async () => {
    const jobId = sbatch('--hold');
    const first = record(jobId);
    expect(first.state).toBe('PENDING');
    on.cluster.run(['scancel', jobId]);
    await over(jobId);
    expect(dequeuedOrRan(first, record(jobId))).toEqual({ how: 'dequeued', note: 'Slurm had it PENDING, JobHeldUser' });
  }, 60_000);

  test('started before the scancel came: ended by Slurm as a running job, on its nodes', async () => {
    const jobId = sbatch('--hold');
    const first = record(jobId);
    expect(first.state).toBe('PENDING');
    // It leaves the queue and starts between the stop's read and its scancel.
    on.cluster.run(['scontrol', 'release', jobId]);
    await until(() => / JobState=RUNNING /.test(jobLine(jobId)), 30_000);
    on.cluster.run(['scancel', jobId]);
    await over(jobId);
    const r = dequeuedOrRan(first, record(jobId));
    expect(r.how).toBe('TERM');
    expect(r.note).toMatch(/^Slurm had it PENDING, JobHeldUser, then it started on \S+ before the stop reached it$/);
  }, 60_000);
});
