// The Slurm backend: a server is a batch job submitted on the cluster's login node (reached over SSH like any host,
// or local on it). Slurm places it, holds its GPUs and enforces its time limit; the bot follows the job's output
// files on the shared filesystem from the login node, reaches node 0's server through a tunnel from the login node,
// and asks Slurm (squeue, scontrol, sacct) for the job's state: while it waits, when it runs, how it ended.

import type { HostConfig } from '../../config/schema.ts';
import { RemoteError, UserError } from '../../errors.ts';
import { HOME_PATH_SH } from '../../hosts/quote.ts';
import type { RemoteHost } from '../../hosts/types.ts';
import type { Attempt } from '../../ledger/attempts.ts';
import { commandLine, dialectForVersion, flagView, renderLaunch } from '../../profiles/index.ts';
import { redactArgv, redactEnv, redactText } from '../../redact.ts';
import type {
  Ending,
  NodeStop,
  Opened,
  Plan,
  QueueView,
  Reconciled,
  Requeue,
  ServerBackend,
  ServerState,
} from '../backend.ts';
import { type Engine, type HostContext, hostOf } from '../engine.ts';
import { assertProfileFlags, flagsContext, flagsSource, hostFlags } from '../host-flags.ts';
import { pythonEnv, readVersions, type Versions } from '../host-info.ts';
import type { LaunchRequest } from '../launch/types.ts';
import { headNode, type NodeRef } from '../nodes.ts';
import { initialProgress } from '../progress.ts';
import { closeUnwatched } from '../reconcile-direct.ts';
import { runIdFor } from '../remote-state.ts';
import { requeuedAgain, toldRestarts } from '../requeue.ts';
import { LOG_MARKS, script } from '../scripts.ts';
import { closingOf } from '../watching.ts';
import {
  ACTIVE_JOB_STATES,
  cancelledInOutput,
  expandNodes,
  type JobRecord,
  jobOutputTail,
  listJobs,
  lookupJob,
  type NodeTrouble,
  nodeAddress,
  oomInOutput,
  partitionGpus,
  queuePosition,
  REQUEUED_JOB_STATES,
  RUNNING_JOB_STATES,
  readJob,
  SUBMIT,
  slurmArgv,
  srunFailures,
  troubledNodes,
  WAITING_JOB_STATES,
} from './cli.ts';
import { renderJob } from './script.ts';

/** Every job of this bot is named `glm-ATTEMPT-PROFILE`, so `status` can pick them out of the cluster's queue. */
export const JOB_PREFIX = 'glm-';
const POLL_MS = 1000;

/**
 * follow SLURM_CONF PATH LOG OFFSET JOB: the log from byte OFFSET as it grows, ending once Slurm no longer lists the
 * job as running or completing: it ended, or it was requeued and waits to run again (the loop runs on the login
 * node: one quiet stream, no polling over SSH).
 */
const FOLLOW_JOB = `
if [ -n "$1" ]; then SLURM_CONF=$1; export SLURM_CONF; fi
if [ -n "$2" ]; then PATH=$2:$PATH; export PATH; fi
${HOME_PATH_SH}
LOG=$(home_path "$3"); OFF=$4; JOB=$5
tail -c "+$((OFF + 1))" -F -- "$LOG" 2>&1 &
t=$!
trap 'kill "$t" 2>/dev/null; exit 0' TERM HUP INT
while :; do
  case $(squeue -h -j "$JOB" -o %T 2>/dev/null) in ''|${REQUEUED_JOB_STATES.join('|')}) break ;; esac
  sleep 1
done
sleep 0.5
kill "$t" 2>/dev/null
wait "$t" 2>/dev/null
exit 0
`;

interface SlurmPlan {
  nodes: number;
  requeue: '--requeue' | '--no-requeue';
  script: string;
  argv: string[];
  env: Record<string, string>;
  port: number;
  sglangVersion?: string;
}

function clusterOf(engine: HostContext, name: string): { host: RemoteHost; cfg: HostConfig } {
  return hostOf(engine, name);
}

const jobName = (attemptId: number | string, profile: string) => `${JOB_PREFIX}${attemptId}-${profile}`;

async function plan(engine: Engine, req: LaunchRequest): Promise<Plan> {
  const { host, cfg } = clusterOf(engine, req.hostName);
  if (req.gpus) {
    throw new UserError(
      `${req.hostName} is a Slurm cluster: Slurm picks the GPUs of a job`,
      "leave out --gpus; the profile's tp (and slurm.nodes) says how many GPUs per node are asked for",
    );
  }
  if (req.nodes && req.nodes.length > 1) {
    throw new UserError(
      `${req.hostName} is a Slurm cluster: Slurm picks a job's nodes`,
      'set slurm.nodes in the profile for one server across several nodes',
    );
  }
  // The job runs the cluster entry's python (its PATH, its env) on the compute nodes, which usually see it on the
  // shared filesystem the login node sees too: the login node asks that same python for SGLang's version and its
  // `launch_server --help`, so a flag the job's SGLang would refuse is refused here, before anything is queued,
  // rather than minutes later on a compute node. Every node of a multi-node job runs that one python (one job, one
  // venv), so one table checks them all. Where the login node cannot run it, the shipped table stands in, said so.
  // Asked in the job's own environment (the script's PATH, its export lines, the env_file it sources), so the version,
  // the dialect and the --help are of the SGLang the job imports.
  const pyEnv = pythonEnv(cfg, req.profile.env);
  let versions: Versions | undefined;
  let unreachable: string | undefined;
  try {
    versions = await readVersions(host, cfg, false, pyEnv);
  } catch (e) {
    if (!req.dryRun) throw e;
    unreachable = (e as Error).message;
  }
  const sglangVersion = versions?.sglang;
  let dialect = cfg.flag_dialect === 'auto' ? undefined : cfg.flag_dialect;
  let dialectNote: string | undefined;
  if (!dialect) {
    if (sglangVersion) dialect = dialectForVersion(sglangVersion);
    else
      dialectNote = `could not read SGLang's version on the login node (${unreachable ?? versions?.problem ?? 'no version printed'}); assumed the --nsa-* flag names`;
  }
  const rendered = renderLaunch(req.profile, { python: cfg.python, dialect: dialect ?? 'nsa', portOverride: req.port });
  const flags = await hostFlags(
    flagsContext(engine, req.hostName, pyEnv),
    sglangVersion,
    unreachable ? 'the login node is unreachable' : versions?.problem,
  );
  // Checked as `check` checks it (secrets marked, so no value of one is ever quoted in a refusal).
  assertProfileFlags(flags, req.hostName, cfg, req.profile);
  if (flags.source === 'shipped' && versions) {
    const note = `flags checked against ${flagsSource(flags, req.hostName)}`;
    dialectNote = dialectNote ? `${dialectNote}; ${note}` : note;
  }
  const env = { ...cfg.env, ...rendered.env };
  const job = renderJob(cfg, req.profile, { argv: rendered.argv, env });
  const shown = redactText(commandLine({ argv: redactArgv(rendered.argv), env: redactEnv(env) }));
  const detail: SlurmPlan = {
    nodes: job.nodes,
    requeue: job.requeue,
    script: job.script,
    argv: rendered.argv,
    env,
    port: req.port ?? req.profile.port,
    sglangVersion,
  };
  return {
    commandLine: shown,
    dialectNote,
    script: job.script,
    submit: `sbatch --parsable ${job.requeue} --job-name=${jobName('ATTEMPT', req.profile.name)} --chdir=${cfg.workdir}/runs/attempt-ATTEMPT --output=${cfg.workdir}/runs/attempt-ATTEMPT/job.log --open-mode=append < script`,
    detail,
  };
}

/** Slurm's refusal in its own words, and what to change. */
function submitFix(stderr: string): string {
  if (/partition/i.test(stderr))
    return 'check the partition (sinfo -s lists them); set slurm.partition for the cluster or the profile';
  if (/account|association/i.test(stderr))
    return 'check your accounts (sacctmgr show assoc user=$USER); set slurm.account';
  if (/qos/i.test(stderr))
    return 'check the QOS names you may use (sacctmgr show assoc format=user,qos); set slurm.qos';
  if (/gres|gpu|generic resource/i.test(stderr))
    return "no node offers that many GPUs (sinfo -o '%P %G' shows them): lower tp, raise slurm.nodes, or try gpus_as: gpus-per-node";
  if (/time limit/i.test(stderr)) return "slurm.time_limit exceeds the partition's MaxTime (sinfo -s shows it)";
  if (/constraint|feature/i.test(stderr)) return 'check the node features (sinfo -o "%N %f"); fix slurm.constraint';
  return 'fix the job options (hosts.CLUSTER.slurm or the profile slurm:) as Slurm says';
}

/** Opens the attempt: Slurm places the job and holds its GPUs, so the ledger keeps only its port. */
async function open(engine: Engine, req: LaunchRequest, p: Plan): Promise<Opened> {
  const d = p.detail as SlurmPlan;
  const attempt = engine.attempts.open({
    host: req.hostName,
    profile: req.profile.name,
    profileJson: JSON.stringify({ ...req.profile, env: redactEnv(req.profile.env) }),
    flags: flagView(req.profile),
    argv: redactArgv(d.argv),
    env: redactEnv(d.env),
    commandLine: p.commandLine,
    port: d.port,
    sglangVersion: d.sglangVersion,
    actor: req.actor,
    origin: req.origin,
    startedAt: engine.clock.now(),
    groupKey: req.groupKey,
    leases: [],
    // Every node's output is a file in the run directory on the login node's filesystem: node r's log is followed
    // there, so each worker is a node of this host in the ledger.
    nodes: Array.from({ length: d.nodes - 1 }, (_, i) => ({ rank: i + 1, host: req.hostName, gpus: [] })),
  });
  return { attempt, plan: p };
}

/** Submits the opened attempt's batch job on the login node; a refused submission closes the attempt. */
async function startNodes(engine: Engine, req: LaunchRequest, { attempt, plan: p }: Opened): Promise<Attempt> {
  const d = p.detail as SlurmPlan;
  const { host, cfg } = clusterOf(engine, req.hostName);
  const runId = runIdFor(attempt);
  let out: Awaited<ReturnType<RemoteHost['exec']>>;
  try {
    out = await host.exec(
      script(SUBMIT, 'glm-submit', [
        cfg.slurm?.slurm_conf ?? '',
        cfg.bin_dirs.join(':'),
        cfg.workdir,
        runId,
        jobName(attempt.id, req.profile.name),
        d.requeue,
      ]),
      { stdin: d.script, timeoutMs: 60_000 },
    );
  } catch (e) {
    engine.attempts.finish(attempt.id, {
      status: 'failed',
      outcome: 'launch_failed',
      detail: (e as Error).message,
      at: engine.clock.now(),
    });
    throw e;
  }
  const lines = out.stdout.trim().split('\n');
  const runDir = lines.find((l) => l.startsWith('GLM_RUN_DIR '))?.slice('GLM_RUN_DIR '.length);
  // --parsable: `JOBID` or `JOBID;CLUSTER`.
  const jobId = lines
    .at(-1)
    ?.split(';')[0]
    ?.match(/^\d+(_\d+)?$/)?.[0];
  if (out.code !== 0 || !jobId || !runDir) {
    const said = out.stderr
      .trim()
      .split('\n')
      .map((l) => l.replace(/^sbatch: error: /, ''))
      .filter(Boolean)
      .join('; ');
    const detail = `sbatch refused the job: ${said || `exit ${out.code}`}`;
    engine.attempts.finish(attempt.id, {
      status: 'failed',
      outcome: 'submit_failed',
      detail,
      at: engine.clock.now(),
    });
    engine.attempts.event(attempt.id, engine.clock.now(), 'submit_failed', { stderr: out.stderr.slice(-2000) });
    throw new UserError(`${req.hostName}: ${detail} (attempt #${attempt.id})`, submitFix(out.stderr));
  }
  engine.attempts.update(attempt.id, { status: 'queued', jobId, runDir, logPath: `${runDir}/node0.log` });
  for (let rank = 1; rank < d.nodes; rank++) {
    engine.attempts.updateNode(attempt.id, rank, { runDir, logPath: `${runDir}/node${rank}.log` });
  }
  engine.attempts.event(attempt.id, engine.clock.now(), 'started', { jobId, runDir });
  return engine.attempts.get(attempt.id)!;
}

const isActive = (j: JobRecord) => (ACTIVE_JOB_STATES as readonly string[]).includes(j.state);

/** What Slurm says besides the job's own record, asked for when a job ended: what failed, what its output says. */
export interface EndingClues {
  /** The job's nodes that Slurm took out of service (for NODE_FAIL). */
  troubled?: NodeTrouble[];
  /** Slurm's OOM-kill line in the job's output (a FAILED job whose step the cgroup OOM killer hit). */
  oomLine?: string | null;
  /** srun's failed tasks in the job's output, in the order srun wrote them (a FAILED multi-node job: which node). */
  srunFailed?: ReturnType<typeof srunFailures>;
}

/** How a job that is over ended, in the ledger's words; null when the server's own exit status says it all. */
export function endingOf(
  engine: Pick<Engine, 'attempts'>,
  attempt: Attempt,
  job: JobRecord,
  clues: EndingClues = {},
): Ending | null {
  const exitCode = job.exitCode;
  const where = job.nodeList ? ` on ${job.nodeList}` : '';
  // The controller had forgotten it: this is the accounting database's record.
  const from = job.source === 'sacct' ? ' (from Slurm accounting, sacct)' : '';
  const e = (outcome: string, detail: string, status: Ending['status'] = 'failed'): Ending => ({
    status,
    outcome,
    detail: `Slurm job ${job.id}${where}${from}: ${detail}`,
    exitCode,
  });
  const oom = (said: string) =>
    e(
      'out_of_memory',
      `out of memory: the job's cgroup limit was hit (${said}); ask for more with --mem in slurm.sbatch`,
    );
  switch (job.state) {
    case 'TIMEOUT':
      return e('time_limit', `time limit reached (${job.timeLimit || 'the job’s --time'}); Slurm ended it`);
    case 'PREEMPTED':
      return e(
        'preempted',
        `preempted: a job of a higher-priority partition or QOS took its nodes (partition ${job.partition || '?'}); launch again, or use a partition that is not preemptible`,
      );
    case 'NODE_FAIL':
    case 'BOOT_FAIL': {
      // Which node failed, and why Slurm says so (a job's node list may name several).
      const bad = clues.troubled?.length ? clues.troubled : [{ node: job.nodeList, state: '', reason: job.reason }];
      const said = bad.map(
        (n) =>
          `${n.node} ${job.state === 'BOOT_FAIL' ? 'failed to boot' : 'was taken out of service by Slurm'}${n.reason ? ` (${n.reason}${n.state ? `, ${n.state}` : ''})` : ''}`,
      );
      return {
        ...e(
          'node_fail',
          `node failure: ${said.join('; ')}; Slurm ended the job, its processes there are lost; see scontrol show node ${bad.map((n) => n.node).join(',')}`,
        ),
        outranksLog: true,
      };
    }
    case 'OUT_OF_MEMORY':
      return oom('Slurm: OUT_OF_MEMORY');
    case 'FAILED': {
      if (clues.oomLine) return oom(`Slurm: ${clues.oomLine}`);
      // A worker node's server killed without a line in its own log (the host's OOM killer, a SIGKILL): node 0's crash
      // that follows (gloo's lost peer) is its consequence. A worker whose own log showed a crash has already been
      // named by its watch (node-watch.ts); node 0's own log speaks for node 0.
      const failed = clues.srunFailed ?? [];
      const worker = failed.find((f) => f.task > 0 && attempt.nodeHosts.length > f.task);
      if (!worker) return null;
      const said = `node ${worker.task} (${worker.node}) failed first, with no line in its own log: srun says ${worker.line}`;
      const killed = "(killed: the kernel's OOM killer or a SIGKILL, for one)";
      // srun named the worker first: it went first, whatever node 0's log says after.
      if (failed[0] === worker) {
        return {
          ...e('node_lost', `${said}; the other nodes could not go on without it ${killed}`, 'crashed'),
          outranksLog: true,
        };
      }
      // srun wrote node 0's end first: it writes each node's end as that node's slurmstepd tells it, and node 0's
      // server, its peer gone, ends itself within milliseconds, so the two may be told in either order. Then only
      // node 0's own log says which went first: a collective error (its peer lost) follows the worker; any other
      // crash there, or none, is node 0's own (the worker killed after it by srun, --kill-on-bad-exit).
      return {
        ...e(
          'node_lost',
          `${said}; node 0's NCCL error followed from it (srun wrote node 0's end first: it writes each node's end as it hears of it, not in the order they died) ${killed}`,
          'crashed',
        ),
        onlyOverLog: 'nccl_error',
      };
    }
    case 'DEADLINE':
      return e('time_limit', 'its deadline passed');
    case 'CANCELLED':
      // A stop through the bot records itself; any other scancel (a person, an admin, a maintenance script) is named.
      if (engine.attempts.events(attempt.id).some((x) => x.kind === 'stop_requested')) return null;
      return e('cancelled', 'cancelled outside the bot (scancel by someone else, or an administrator)');
    default:
      return null;
  }
}

/** The clues an ending needs beyond the job's record (one more look at Slurm or the output, only when it applies). */
async function cluesFor(host: RemoteHost, cfg: HostConfig, attempt: Attempt, job: JobRecord): Promise<EndingClues> {
  if (job.state === 'NODE_FAIL' || job.state === 'BOOT_FAIL') {
    return { troubled: await troubledNodes(host, cfg, job.nodeList).catch(() => []) };
  }
  if (job.state === 'FAILED' && attempt.runDir) {
    const out = await jobOutputTail(host, attempt.runDir);
    return { oomLine: oomInOutput(out), srunFailed: srunFailures(out) };
  }
  return {};
}

function stateFrom(
  engine: Pick<Engine, 'attempts'>,
  attempt: Attempt,
  job: JobRecord | null,
  clues: EndingClues = {},
  why?: string,
): ServerState {
  if (!job)
    return {
      state: 'none',
      exitCode: null,
      text: `Slurm no longer knows job ${attempt.jobId}${why ? `: ${why}` : ''}`,
    };
  if (WAITING_JOB_STATES.includes(job.state))
    return { state: 'queued', exitCode: null, text: `${job.state}: ${job.reason}` };
  if (RUNNING_JOB_STATES.includes(job.state))
    return { state: 'running', exitCode: null, text: `${job.state} on ${job.nodeList}` };
  const ending = endingOf(engine, attempt, job, clues) ?? undefined;
  const failedFirst = clues.srunFailed?.[0]?.task;
  return {
    state: 'ended',
    exitCode: job.exitCode,
    ending,
    text: job.state,
    ...(failedFirst !== undefined && { failedFirst }),
  };
}

async function state(engine: Engine, attempt: Attempt): Promise<ServerState> {
  if (!attempt.jobId) return { state: 'none', exitCode: null, text: 'not submitted' };
  const { host, cfg } = clusterOf(engine, attempt.host);
  const found = await lookupJob(host, cfg, attempt.jobId);
  const job = found.job;
  if (!job) return stateFrom(engine, attempt, null, {}, 'why' in found ? found.why : undefined);
  return stateFrom(engine, attempt, job, isActive(job) ? {} : await cluesFor(host, cfg, attempt, job));
}

/**
 * Each node's log size and mark (scripts.ts LOG_MARKS) in the run directory, by rank (node r's log is node<r>.log,
 * --output=node%n.log): a missing file is 0.
 */
async function logMarks(host: RemoteHost, runDir: string, nodes: number): Promise<{ size: number; mark: string }[]> {
  const logs = Array.from({ length: nodes }, (_, r) => `${runDir}/node${r}.log`);
  const r = await host.exec(script(LOG_MARKS, 'glm-log-marks', ['', ...logs]));
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => {
      const [size, mark] = l.trim().split(' ');
      return { size: Number(size) || 0, mark: mark ?? '-' };
    });
}

/** A requeued job Slurm holds: it runs again only once someone releases it. */
const isHeld = (j: JobRecord) =>
  j.state === 'SPECIAL_EXIT' || j.state === 'REQUEUE_HOLD' || /^JobHeld(User|Admin)$/.test(j.reason);

/** A job that ran and is back in the queue (Slurm counts its Restarts): how often, why this time, whether held. */
async function requeued(engine: Engine, attempt: Attempt): Promise<Requeue | null> {
  if (!attempt.jobId) return null;
  const { host, cfg } = clusterOf(engine, attempt.host);
  // The logs' sizes before the job's state: the run they end is over (its follow ended there) and, the job still back
  // in the queue after, the next has not begun: where each node's next run starts in its appended log.
  const nodes = 1 + engine.attempts.nodes(attempt.id).length;
  const marks = attempt.runDir ? await logMarks(host, attempt.runDir, nodes).catch(() => undefined) : undefined;
  const job = await readJob(host, cfg, attempt.jobId);
  if (!job || job.restarts === 0 || !REQUEUED_JOB_STATES.includes(job.state)) return null;
  const why = await requeueWhy(engine, host, cfg, attempt, job);
  const held = isHeld(job);
  const then = held
    ? `Slurm holds it (${job.state}, ${job.reason}): it runs again only once released, with scontrol release ${job.id} (by its owner for a user hold; JobHeldAdmin by an administrator)`
    : 'it runs again when Slurm starts it, on the nodes it then gets';
  return {
    count: job.restarts,
    text: `Slurm requeued job ${job.id} (restart ${job.restarts}): ${why}; ${then}`,
    held,
    runStart: marks?.map((m) => m.size),
    runMark: marks?.map((m) => m.mark),
  };
}

/**
 * Why Slurm put a job that ran back in its queue (its --requeue): slurmstepd's own line in the job's output since its
 * last run began (the script's `glm: job` line), e.g. DUE TO PREEMPTION; else the run's exit code when slurm.conf's
 * RequeueExit or RequeueExitHold requeued it for that code; else the nodes it ran on that Slurm took out of service
 * (down or not responding: a node failure; drained: out of service, an administrator's doing or Slurm's); else that
 * neither says (an administrator's `scontrol requeue`, say).
 */
async function requeueWhy(
  engine: Engine,
  host: RemoteHost,
  cfg: HostConfig,
  attempt: Attempt,
  job: JobRecord,
): Promise<string> {
  const out = attempt.runDir ? await jobOutputTail(host, attempt.runDir) : '';
  const said = cancelledInOutput(out.slice(Math.max(0, out.lastIndexOf('glm: job '))));
  if (said && /DUE TO PREEMPTION/.test(said)) return `preempted (${said})`;
  if (said && /NODE FAIL/.test(said)) return `node failure (${said})`;
  // slurm.conf(5) RequeueExitHold puts the job in SPECIAL_EXIT; RequeueExit requeues it with Reason NonZeroExitCode.
  if (!said && job.exitCode && (job.state === 'SPECIAL_EXIT' || job.reason === 'NonZeroExitCode')) {
    const rule = job.state === 'SPECIAL_EXIT' ? 'RequeueExitHold' : 'RequeueExit';
    return `its run exited with code ${job.exitCode}, an exit the cluster's ${rule} (slurm.conf) requeues${rule === 'RequeueExitHold' ? ' held' : ''}`;
  }
  const ran = engine.attempts
    .events(attempt.id)
    .filter((e) => e.kind === 'running')
    .at(-1)?.data as { nodes?: string[] } | undefined;
  const bad = await troubledNodes(host, cfg, (ran?.nodes ?? []).join(',')).catch(() => []);
  // DRAIN alone is a node taken out of service on purpose (an administrator, a health check), not a failure.
  const failed = bad.some((n) => /DOWN|FAIL|NOT_RESPONDING/.test(n.state));
  const nodes = bad
    .map((n) => `${n.node} was taken out of service by Slurm (${failed ? '' : 'drained: '}${n.reason}, ${n.state})`)
    .join('; ');
  if (said) {
    // `scontrol requeue` (an administrator, a script): slurmstepd says DUE TO JOB REQUEUE.
    const what = /DUE TO JOB REQUEUE/.test(said) ? 'requeued by scontrol requeue' : 'ended';
    return `${what} (${said})${nodes ? `; ${nodes}` : ''}`;
  }
  if (nodes) return failed ? `node failure: ${nodes}` : nodes;
  return "neither Slurm's record nor the job's output says why (an administrator's scontrol requeue, for one)";
}

async function admitted(
  engine: Engine,
  attempt: Attempt,
  emit: Parameters<ServerBackend['admitted']>[2],
): ReturnType<ServerBackend['admitted']> {
  const { host, cfg } = clusterOf(engine, attempt.host);
  let told = '';
  // Most jobs start within a scheduler pass: ask often at first, then once a POLL_MS.
  let wait = 100;
  const pause = async () => {
    await engine.clock.sleep(wait);
    wait = Math.min(wait * 2, POLL_MS);
  };
  for (;;) {
    const now = engine.attempts.get(attempt.id)!;
    // A closing bot stops waiting (its follower sees why); the next bot asks the queue again.
    if (closingOf(engine).aborted) return { attempt: now };
    if (!now.active || !now.jobId) {
      return {
        ended: {
          status: now.status,
          outcome: now.outcome ?? now.status,
          detail: now.outcomeDetail ?? '',
          exitCode: now.exitCode,
        },
      };
    }
    const job = await readJob(host, cfg, now.jobId).catch((e: Error) => {
      engine.log.warn({ err: e.message, attempt: attempt.id }, 'could not ask Slurm; asking again');
      return undefined;
    });
    if (job === undefined) {
      await pause();
      continue;
    }
    const st = stateFrom(engine, now, job);
    // Reason None: the scheduler has not looked at the job yet; nothing to tell.
    if (st.state === 'queued' && job && job.reason === 'None') {
      await pause();
      continue;
    }
    if (st.state === 'queued' && job) {
      // Requeued before any follower saw it run (a crash within a scheduler pass, held by RequeueExitHold): told as
      // a follower tells it, so its next run too is read from where it begins in the appended logs.
      if (job.restarts > toldRestarts(engine, attempt.id)) {
        await requeuedAgain(engine, now, () => requeued(engine, now), emit);
      }
      // What Slurm says holds the job, and where it stands among the partition's pending jobs.
      const pos = await queuePosition(host, cfg, job).catch(() => null);
      const again = job.restarts > 0 ? ` again (requeued ${job.restarts}×)` : '';
      // Held, it has no place in the queue until someone releases it: the message says how.
      const text = isHeld(job)
        ? `held${again}: ${job.state === 'PENDING' ? '' : `${job.state}, `}${job.reason}; it runs again once released (scontrol release ${job.id})`
        : `queued${again}: ${job.reason}${pos ? ` (position ${pos})` : ''}`;
      if (text !== told) {
        told = text;
        engine.attempts.update(attempt.id, { lastMilestone: text });
        engine.attempts.event(attempt.id, engine.clock.now(), 'queued', { reason: job.reason, position: pos });
        emit({ kind: 'milestone', text, progress: initialProgress() });
        // Each queue state its own step in the thread (the parent message shows the latest).
        engine.notifier?.progress(now, text, `slurm:${text}`);
      }
      await pause();
      continue;
    }
    // Running, or already over after it ran (a fast crash between two looks): either way its logs tell the rest.
    if (job && (st.state === 'running' || (st.state === 'ended' && job.nodeList))) {
      const nodes = await expandNodes(host, cfg, job.nodeList);
      const addr = nodes[0] ? await nodeAddress(host, cfg, nodes[0]) : '127.0.0.1';
      const text = `running on ${nodes.join(', ')} (job ${job.id})`;
      if (now.status === 'queued' || now.status === 'starting') {
        engine.attempts.update(attempt.id, { status: 'loading', serverAddr: addr, lastMilestone: text });
        if (nodes.length > 1) {
          const port = cfg.slurm?.dist_port ?? 29500;
          engine.attempts.update(attempt.id, { distInitAddr: `${addr}:${port}` });
        }
        engine.attempts.event(attempt.id, engine.clock.now(), 'running', { jobId: job.id, nodes, addr });
        emit({ kind: 'milestone', text, progress: initialProgress() });
        engine.notifier?.progress(engine.attempts.get(attempt.id)!, text, 'slurm:running');
      } else if (!now.serverAddr) {
        engine.attempts.update(attempt.id, { serverAddr: addr });
      }
      return { attempt: engine.attempts.get(attempt.id)! };
    }
    // Over before it ever ran (cancelled while pending, or Slurm forgot it).
    return {
      ended: st.ending ?? {
        status: st.state === 'none' ? 'lost' : 'exited',
        outcome: st.state === 'none' ? 'lost' : 'exited',
        detail: st.text,
        exitCode: st.exitCode,
      },
    };
  }
}

/** The state (and reason) Slurm had a job in, for a stop's record. */
function slurmHad(j: JobRecord): string {
  return `Slurm had it ${j.state}${j.reason && j.reason !== 'None' ? `, ${j.reason}` : ''}`;
}

/**
 * How a plain scancel of a job read waiting in the queue (`first`) went, from Slurm's record after it (`last`): a job
 * that started in between has nodes now, and Slurm ended it as it ends a running job on scancel (SIGTERM, SIGKILL
 * after the cluster's KillWait: slurm.conf(5)); else it was taken out of the queue with nothing run.
 */
export function dequeuedOrRan(first: JobRecord, last: JobRecord): Pick<NodeStop, 'how' | 'note'> {
  const had = slurmHad(first);
  if (last.nodeList === '') return { how: 'dequeued', note: had };
  return { how: 'TERM', note: `${had}, then it started on ${last.nodeList} before the stop reached it` };
}

/** scancel, then Slurm's record until it says the job is over (a stop is confirmed from Slurm, not assumed). */
async function stop(engine: Engine, attempt: Attempt): Promise<NodeStop[]> {
  const node = headNode(attempt);
  if (!attempt.jobId) return [{ node, how: 'already-gone', exitCode: null }];
  const { host, cfg } = clusterOf(engine, attempt.host);
  const jobId = attempt.jobId;
  const scancel = (args: string[]) => host.exec(slurmArgv(cfg, ['scancel', ...args, jobId]));
  const until = async (ms: number): Promise<JobRecord | null> => {
    const end = Date.now() + ms;
    for (;;) {
      const j = await readJob(host, cfg, jobId);
      if (!j || !isActive(j)) return j;
      if (Date.now() >= end) return j;
      await engine.clock.sleep(200);
    }
  };
  const first = await readJob(host, cfg, jobId);
  if (!first || !isActive(first)) return [{ node, how: 'already-gone', exitCode: first?.exitCode ?? null }];
  let how: NodeStop['how'] = 'TERM';
  let note: string | undefined;
  const had = slurmHad(first);
  if (REQUEUED_JOB_STATES.includes(first.state)) {
    // Waiting in the queue (pending, held, requeued, requeued held): no process of it runs anywhere, so there is
    // nothing to signal. scancel's --signal goes to the slurmd where the job runs (scancel(1)); to a job that runs
    // nowhere, slurmctld answers "Job can not be altered now, try again later" and scancel asks again and again
    // (seen: still asking after 15 s), so a plain scancel takes it out of the queue.
    how = 'dequeued';
    note = had;
    await scancel([]);
  } else if (first.state === 'SUSPENDED') {
    // Suspended (scontrol suspend): its processes are stopped (SIGSTOP) on its nodes and can run no SIGTERM handler;
    // slurmctld refuses any signal but KILL for a suspended job, and scancel --signal=TERM keeps asking (seen: ~95 s).
    // Resuming it first would take back CPUs Slurm gave other jobs meanwhile (scontrol(1), resume) and is the
    // administrator's call who suspended it, so a stop cancels it as it is (a plain scancel, scancel(1)): said so.
    how = 'KILL';
    note = `${had}: a suspended job takes no SIGTERM, cancelled as it was`;
    await scancel([]);
  } else {
    // TERM to the batch shell and every step; the grace period; then KILL; then the job itself is cancelled.
    await scancel(['--signal=TERM', '--full']);
    const after = await until(engine.loaded.config.timeouts.stop_grace_s * 1000);
    if (after && isActive(after)) {
      how = 'KILL';
      await scancel(['--signal=KILL', '--full']);
    }
    await scancel([]);
  }
  const last = await until(30_000);
  if (last && isActive(last)) {
    throw new RemoteError(`Slurm still lists job ${jobId} as ${last.state} after scancel`, {
      host: attempt.host,
      hint: `look with: scontrol show job ${jobId}; a node may be unresponsive (an administrator can down it)`,
    });
  }
  // Read waiting, it may have started before the scancel reached it: what Slurm says now decides (dequeuedOrRan).
  if (how === 'dequeued' && last) ({ how, note } = dequeuedOrRan(first, last));
  return [{ node, how, exitCode: last?.exitCode ?? null, ...(note ? { note } : {}) }];
}

async function reconcile(engine: Engine, a: Attempt, opts: { skipStarting?: boolean }): Promise<Reconciled | null> {
  if (!a.jobId) {
    if (opts.skipStarting && a.status === 'starting') return null;
    engine.attempts.finish(a.id, {
      status: 'failed',
      outcome: 'launch_failed',
      detail: 'the job was never submitted',
      at: engine.clock.now(),
    });
    return { attempt: engine.attempts.get(a.id)!, state: 'closed' };
  }
  const st = await state(engine, a);
  if (st.state === 'queued') return { attempt: a, state: 'queued', note: st.text };
  if (st.state === 'running') return { attempt: a, state: 'running' };
  // Only an ending Slurm names (TIMEOUT, NODE_FAIL, ...) is passed on, as a followed attempt's is (outcome.ts): a
  // plain FAILED or COMPLETED is judged by its exit code and its log (judgeEnd). A job Slurm forgot has neither:
  // said as such, with where its output still is.
  const ending: Ending | undefined =
    st.ending ??
    (st.state === 'none'
      ? {
          status: 'lost',
          outcome: 'lost',
          detail: `${st.text}; how it ended is unknown${a.runDir ? ` (its output: ${a.runDir}/job.log)` : ''}`,
          exitCode: st.exitCode,
        }
      : undefined);
  // Ended with no follower (the bot was down, or the job was over before one looked): node 0's log of this run
  // names the crash, as it would have for a follower; Slurm's ending stands where the log names none.
  const closed = await closeUnwatched(engine, a, st.exitCode, ending);
  return { attempt: closed, state: 'closed', note: 'ended while the bot was not watching' };
}

export const slurmBackend: ServerBackend = {
  kind: 'slurm',
  plan,
  open,
  startNodes,
  admitted,
  state,
  requeued,
  followArgv(engine, node: NodeRef, offset) {
    const { cfg } = clusterOf(engine, node.host);
    return script(FOLLOW_JOB, 'glm-follow-job', [
      cfg.slurm?.slurm_conf ?? '',
      cfg.bin_dirs.join(':'),
      node.logPath ?? '',
      String(offset),
      node.jobId ?? '',
    ]);
  },
  async nodeGone(engine, node) {
    const { host, cfg } = clusterOf(engine, node.host);
    const j = node.jobId ? await readJob(host, cfg, node.jobId) : null;
    // Requeued, its server is gone too: the job's next run is a new server, followed once Slurm starts it.
    return !j || !isActive(j) || REQUEUED_JOB_STATES.includes(j.state);
  },
  stop,
  reconcile,
  async queue(engine, hostName, opts) {
    const { host, cfg } = clusterOf(engine, hostName);
    const jobs = await listJobs(host, cfg, JOB_PREFIX);
    const view: QueueView = {
      jobs: jobs.map((j) => ({
        jobId: j.id,
        name: j.name,
        attemptId: Number(j.name.slice(JOB_PREFIX.length).split('-')[0]) || null,
        state: j.state,
        reason: j.reason,
        nodes: j.nodes,
        gres: j.gres,
        elapsed: j.elapsed,
        timeLimit: j.timeLimit,
      })),
    };
    if (opts.gpus) {
      const rows = await partitionGpus(host, cfg, cfg.slurm?.partition);
      view.gpus = rows.map((r) => ({ node: r.node, state: r.state, total: r.gres, used: r.gresUsed }));
    }
    return view;
  },
};
