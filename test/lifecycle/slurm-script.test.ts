// The Slurm backend's pure parts: the cluster and profile options (schema, README example), the batch script they
// render to, and Slurm's own output read back (scontrol's Key=Value line, the endings).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PACKAGE_ROOT, validate } from '../../src/config/load.ts';
import { ConfigError } from '../../src/errors.ts';
import { createAttemptStore } from '../../src/ledger/attempts.ts';
import { openDb } from '../../src/ledger/db.ts';
import { endingOver } from '../../src/lifecycle/backend.ts';
import { endingOf } from '../../src/lifecycle/slurm/backend.ts';
import {
  ACTIVE_JOB_STATES,
  oomInOutput,
  parseScontrolJob,
  RUNNING_JOB_STATES,
  srunFailures,
  WAITING_JOB_STATES,
} from '../../src/lifecycle/slurm/cli.ts';
import { renderJob } from '../../src/lifecycle/slurm/script.ts';
import type { ResolvedProfile } from '../../src/profiles/index.ts';
import { clusterAttemptRow } from '../helpers/slurm.ts';

const readmeCluster = () => {
  const md = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
  const block = md.split('```yaml\n')[1]!.split('```')[0]!;
  return (parse(block) as { hosts: Record<string, unknown> }).hosts.cluster;
};

const profile = (over: Partial<ResolvedProfile> = {}): ResolvedProfile =>
  ({
    name: 'big',
    model_path: 'org/model',
    tp: 8,
    port: 30000,
    host_bind: '0.0.0.0',
    cuda_graph: true,
    env: {},
    extra_args: [],
    chain: ['big'],
    file: '/x/big.yaml',
    ...over,
  }) as ResolvedProfile;

describe('Slurm cluster config and the batch script', () => {
  it("the README's cluster entry is valid and renders every option it sets as an #SBATCH line", () => {
    const cfg = validate({ hosts: { cluster: readmeCluster() } }, 'README').hosts.cluster!;
    const job = renderJob(cfg, profile(), {
      argv: [cfg.python, '-m', 'sglang.launch_server', '--tp-size', '8'],
      env: {},
    });
    for (const line of [
      '#SBATCH --nodes=1',
      '#SBATCH --ntasks-per-node=1',
      '#SBATCH --gres=gpu:8',
      '#SBATCH --partition=gpu',
      '#SBATCH --account=ml-serving',
      '#SBATCH --qos=normal',
      '#SBATCH --time=12:00:00',
      '#SBATCH --constraint=h100',
      '#SBATCH --mem=0',
      '#SBATCH --exclusive',
    ]) {
      expect(job.script.split('\n')).toContain(line);
    }
    // The secrets file is sourced on the compute node by path; nothing of it is in the script.
    expect(job.script).toContain(
      `if [ -r "$HOME"/.config/glm/secrets.env ]; then set -a; . "$HOME"/.config/glm/secrets.env; set +a;`,
    );
  });

  it("a profile's slurm: overrides the cluster's; its sbatch lines come after; nodes split tp and add srun's rank", () => {
    const cfg = validate({ hosts: { cluster: readmeCluster() } }, 'README').hosts.cluster!;
    const job = renderJob(
      cfg,
      profile({ slurm: { partition: 'big', nodes: 2, gpus_as: 'gpus-per-node', sbatch: ['--mem=500G'] } }),
      { argv: ['/py', '-m', 'sglang.launch_server'], env: { NCCL_DEBUG: 'WARN', ODD: "it's $HOME" } },
    );
    const lines = job.script.split('\n');
    expect(lines).toContain('#SBATCH --partition=big');
    expect(lines).not.toContain('#SBATCH --partition=gpu');
    expect(lines).toContain('#SBATCH --nodes=2');
    expect(lines).toContain('#SBATCH --gpus-per-node=4');
    expect(lines.indexOf('#SBATCH --mem=500G')).toBeGreaterThan(lines.indexOf('#SBATCH --exclusive'));
    // Values reach the shell quoted: nothing in them is expanded.
    expect(lines).toContain(`export ODD='it'\\''s $HOME'`);
    expect(job.script).toContain(
      `srun --nodes=2 --ntasks-per-node=1 --kill-on-bad-exit=1 --output=node%n.log sh -c 'echo "glm-ops: run \${SLURM_RESTART_COUNT:-0} of job $SLURM_JOB_ID on $SLURMD_NODENAME at $(date -u +%Y-%m-%dT%H:%M:%SZ)"; exec "$@" --nnodes 2 --node-rank "$SLURM_NODEID" --dist-init-addr "$GLM_DIST_INIT_ADDR"' glm-node /py -m sglang.launch_server`,
    );
    expect(job.script).toContain(`GLM_DIST_INIT_ADDR=\${head_addr:-$head}:29500`);
    expect(() => renderJob(cfg, profile({ tp: 3, slurm: { nodes: 2 } }), { argv: ['/py'], env: {} })).toThrow(
      /tp 3 does not split evenly across 2 nodes/,
    );
  });

  it('never writes a secret into the script: a secret-named or token-shaped env value, or an --api-key, is refused', () => {
    const cfg = validate({ hosts: { cluster: readmeCluster() } }, 'README').hosts.cluster!;
    const argv = ['/py', '-m', 'sglang.launch_server'];
    expect(() => renderJob(cfg, profile(), { argv, env: { HF_TOKEN: 'x' } })).toThrow(
      /the environment variable HF_TOKEN would be written into the job's batch script/,
    );
    expect(() => renderJob(cfg, profile(), { argv, env: { MY_VAR: `hf_${'a'.repeat(34)}` } })).toThrow(/MY_VAR/);
    expect(() => renderJob(cfg, profile(), { argv: [...argv, '--api-key', 'abc'], env: {} })).toThrow(
      /a secret in the server arguments/,
    );
    try {
      renderJob(cfg, profile(), { argv, env: { HF_TOKEN: 'x' } });
    } catch (e) {
      expect((e as { hint?: string }).hint).toMatch(/env_file/);
    }
  });

  it('refuses job options that would not be one plain #SBATCH value, each with what is allowed', () => {
    const base = { ssh: { host: 'login1' }, slurm: {} };
    let err: ConfigError | undefined;
    try {
      validate(
        {
          hosts: {
            c: {
              ...base,
              slurm: { partition: 'gpu --qos=high', time_limit: 'soon', sbatch: ['--mem=1\n#SBATCH --qos=x', 'mem=1'] },
            },
          },
        },
        'test',
      );
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = err!.issues.map((i) => `${i.path}: ${i.message}`).join('\n');
    expect(text).toMatch(/hosts\.c\.slurm\.partition: not a valid partition name/);
    expect(text).toMatch(/hosts\.c\.slurm\.time_limit: a Slurm time/);
    expect(text).toMatch(/hosts\.c\.slurm\.sbatch\.0: an sbatch option on one line/);
    expect(text).toMatch(/hosts\.c\.slurm\.sbatch\.1: an sbatch option on one line/);
  });

  it('requeueing is asked with slurm.requeue only: --no-requeue by default, --requeue when set (the profile over the cluster); an sbatch line that would decide it is refused', () => {
    const cfg = validate({ hosts: { cluster: readmeCluster() } }, 'README').hosts.cluster!;
    const argv = ['/py', '-m', 'sglang.launch_server'];
    const plain = renderJob(cfg, profile(), { argv, env: {} });
    expect(plain.requeue).toBe('--no-requeue');
    expect(plain.script.split('\n')).toContain('#SBATCH --no-requeue');
    expect(plain.script).not.toMatch(/--requeue/);
    const asked = renderJob(cfg, profile({ slurm: { requeue: true } }), { argv, env: {} });
    expect(asked.requeue).toBe('--requeue');
    expect(asked.script.split('\n')).toContain('#SBATCH --requeue');
    expect(asked.script).not.toMatch(/--no-requeue/);
    const onCluster = validate({ hosts: { c: { ssh: { host: 'login1' }, slurm: { requeue: true } } } }, 'test').hosts
      .c!;
    expect(renderJob(onCluster, profile(), { argv, env: {} }).requeue).toBe('--requeue');
    expect(renderJob(onCluster, profile({ slurm: { requeue: false } }), { argv, env: {} }).requeue).toBe(
      '--no-requeue',
    );
    // Written as an sbatch line it would follow the template's own and win, unknown to the bot: refused, saying how.
    let err: ConfigError | undefined;
    try {
      validate(
        { hosts: { c: { ssh: { host: 'login1' }, slurm: { sbatch: ['--mem=0', '--requeue', '--no-requeue'] } } } },
        'test',
      );
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = err!.issues.map((i) => `${i.path}: ${i.message}`).join('\n');
    expect(text).toMatch(/hosts\.c\.slurm\.sbatch\.1: requeueing is set with slurm\.requeue: true \(or false\)/);
    expect(text).toMatch(/hosts\.c\.slurm\.sbatch\.2: requeueing is set with slurm\.requeue/);
    expect(text).not.toMatch(/sbatch\.0/);
  });

  it("reads scontrol's one-line record, values with spaces included", () => {
    const j = parseScontrolJob(
      'JobId=42 JobName=glm-7-small UserId=glm(1001) Priority=4294901757 JobState=TIMEOUT Reason=TimeLimit ExitCode=0:15 TimeLimit=00:01:00 Partition=gpu NodeList=gpu[01-02] BatchHost=gpu01 WorkDir=/shared/runs/a b StdOut=/x',
    )!;
    expect(j).toMatchObject({
      id: '42',
      state: 'TIMEOUT',
      reason: 'TimeLimit',
      exitCode: 0,
      signal: 15,
      nodeList: 'gpu[01-02]',
      batchHost: 'gpu01',
      timeLimit: '00:01:00',
      priority: 4294901757,
    });
    expect(parseScontrolJob('slurm_load_jobs error: Invalid job id specified')).toBeNull();
  });

  it('knows every state squeue lists: a stopped, signalled or held job is not read as FAILED and ended', () => {
    const record = (state: string) =>
      parseScontrolJob(`JobId=7 JobName=glm-1-small JobState=${state} Reason=None ExitCode=0:0 NodeList=gpu01`)!;
    // still on its nodes
    for (const state of ['RESIZING', 'STOPPED', 'SIGNALING', 'STAGE_OUT']) {
      expect(record(state).state).toBe(state);
      expect(RUNNING_JOB_STATES).toContain(state);
      expect(ACTIVE_JOB_STATES).toContain(state);
      expect(WAITING_JOB_STATES).not.toContain(state);
    }
    // back in the queue, held
    for (const state of ['REQUEUE_HOLD', 'REQUEUE_FED', 'RESV_DEL_HOLD', 'SPECIAL_EXIT']) {
      expect(record(state).state).toBe(state);
      expect(WAITING_JOB_STATES).toContain(state);
    }
    expect(record('REVOKED').state).toBe('REVOKED');
    expect(ACTIVE_JOB_STATES).not.toContain('REVOKED');
    // a state this Slurm does not have is still an ending, not a job left running forever
    expect(record('SOMETHING_NEW').state).toBe('FAILED');
  });

  // Recorded from Debian bookworm's Slurm 22.05.8 on this machine (task/cgroup, cgroup v1 memory controller): a batch
  // job with --mem=50 whose batch shell itself outgrew it. The bot's own jobs run the server as an srun step, which
  // Slurm ends as FAILED instead (test/lifecycle/slurm-endings.test.ts produces that one for real); this record is
  // the other way Slurm reports the same cause, read here as its scontrol line.
  it('maps a recorded OUT_OF_MEMORY record, and Slurm’s own OOM lines in a job’s output, to out_of_memory', () => {
    const job = parseScontrolJob(
      'JobId=1 JobName=wrap UserId=glmtest(1001) GroupId=glmtest(1001) MCS_label=N/A Priority=4294901759 Nice=0 Account=(null) QOS=(null) JobState=OUT_OF_MEMORY Reason=OutOfMemory Dependency=(null) Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:125 RunTime=00:00:00 TimeLimit=01:00:00 TimeMin=N/A Partition=gpu NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 TRES=cpu=1,mem=50M,node=1,billing=1 MinMemoryNode=50M',
    )!;
    expect(job).toMatchObject({ state: 'OUT_OF_MEMORY', reason: 'OutOfMemory', exitCode: 0, signal: 125 });
    const attempts = createAttemptStore(openDb(`${mkdtempSync(join(tmpdir(), 'glm-oom-'))}/ledger.sqlite`));
    const a = attempts.open(clusterAttemptRow());
    expect(endingOf({ attempts }, a, job)).toMatchObject({
      status: 'failed',
      outcome: 'out_of_memory',
      detail: expect.stringMatching(
        /^Slurm job 1 on vm: out of memory: .*Slurm: OUT_OF_MEMORY.*--mem in slurm\.sbatch/,
      ),
    });
    // The srun step's OOM: scontrol says FAILED; slurmstepd's and srun's lines in the output (recorded as above).
    const failed = { ...job, state: 'FAILED' as const, reason: 'NonZeroExitCode', exitCode: 1, signal: 0 };
    expect(endingOf({ attempts }, a, failed)).toBeNull();
    const stepd =
      'slurmstepd-vm: error: Detected 1 oom-kill event(s) in StepId=7.0. Some of your processes may have been killed by the cgroup out-of-memory handler.';
    const srun = 'srun: error: vm: task 0: Out Of Memory';
    expect(oomInOutput(`glm: job 7 on vm\n${stepd}\n`)).toBe(stepd);
    expect(oomInOutput(`glm: job 7 on vm\n${srun}\n`)).toBe(srun);
    expect(oomInOutput('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n')).toBeNull();
    expect(endingOf({ attempts }, a, failed, { oomLine: srun })?.outcome).toBe('out_of_memory');
  });

  // Recorded from this machine's Slurm 22.05 (test/lifecycle/slurm-multinode.test.ts: node 1's stand-in SIGKILLed,
  // node 0's then crashing on its lost peer and SIGKILLing itself): srun wrote node 0's end first in about one run
  // of five, node 1's in the others. Which node went first is then said by node 0's log, not by srun's order.
  it("a two-node job's worker srun says was killed is the cause in either order srun wrote it, over node 0's NCCL error only when srun wrote node 0 first", () => {
    const attempts = createAttemptStore(openDb(`${mkdtempSync(join(tmpdir(), 'glm-srun-'))}/ledger.sqlite`));
    const a = attempts.open({ ...clusterAttemptRow(), nodes: [{ rank: 1, host: 'cluster', gpus: [] }] });
    const job = parseScontrolJob(
      'JobId=1 JobName=glm-1-small-2node JobState=FAILED Reason=NonZeroExitCode ExitCode=137:0 Partition=gpu NodeList=node[0-1] BatchHost=node0 Restarts=0',
    )!;
    const headFirst =
      'glm: job 1 on node[0-1]\nsrun: error: node0: task 0: Killed\nsrun: launch/slurm: _step_signal: Terminating StepId=1.0\nsrun: error: node1: task 1: Killed\nsrun: Force Terminated StepId=1.0\n';
    const workerFirst =
      'glm: job 1 on node[0-1]\nsrun: error: node1: task 1: Killed\nsrun: launch/slurm: _step_signal: Terminating StepId=1.0\nsrun: error: node0: task 0: Killed\nsrun: Force Terminated StepId=1.0\n';
    expect(srunFailures(headFirst).map((f) => f.task)).toEqual([0, 1]);
    const detail =
      /^Slurm job 1 on node\[0-1\]: node 1 \(node1\) failed first, with no line in its own log: srun says srun: error: node1: task 1: Killed;/;

    // srun wrote node 1 first: it stands over whatever node 0's log says.
    const first = endingOf({ attempts }, a, job, { srunFailed: srunFailures(workerFirst) })!;
    expect(first).toMatchObject({ outcome: 'node_lost', status: 'crashed', outranksLog: true, detail });
    for (const log of ['nccl_error', 'cuda_oom', 'none', null]) expect(endingOver(first, log)).toBe(first);

    // srun wrote node 0 first: node 1 went first only where node 0's log shows its collective (lost-peer) error.
    const second = endingOf({ attempts }, a, job, { srunFailed: srunFailures(headFirst) })!;
    expect(second).toMatchObject({ outcome: 'node_lost', onlyOverLog: 'nccl_error', detail });
    expect(second.detail).toMatch(/node 0's NCCL error followed from it \(srun wrote node 0's end first/);
    const over = endingOver(second, 'nccl_error')!;
    expect(over).toMatchObject({ outcome: 'node_lost', outranksLog: true, detail });
    expect(over).not.toHaveProperty('onlyOverLog');
    // Node 0's own crash (its CUDA OOM), or no crash in its log: node 0 went first, srun killed node 1 after it.
    expect(endingOver(second, 'cuda_oom')).toBeUndefined();
    expect(endingOver(second, 'none')).toBeUndefined();
    // Its log not read (a job that ended while the bot was not watching): not claimed.
    expect(endingOver(second, null)).toBeUndefined();

    // Only node 0 failed: node 0's log speaks for it.
    expect(
      endingOf({ attempts }, a, job, {
        srunFailed: srunFailures('glm: job 1 on node[0-1]\nsrun: error: node0: task 0: Exited with exit code 1\n'),
      }),
    ).toBeNull();
  });
});
