// Slurm's own commands on the login node, through the host's one exec chokepoint, and their answers read with zod.
// Facts relied on (Slurm 22.05, checked against a real slurmctld in test/helpers/slurm.ts; the endings, requeue,
// cgroup OOM and a forgotten job in docs/slurm.md with their sources): `sbatch --parsable`
// prints `JOBID` or `JOBID;CLUSTER`; `scontrol show job -o ID` prints one line of Key=Value pairs (JobState, Reason,
// NodeList, BatchHost, ExitCode as `status:signal`, TimeLimit, Partition); a job that ended is kept there for
// MinJobAge (300 s by default), after which only `sacct` (where accounting exists) still knows it; `squeue` lists
// only jobs that are pending, running or completing.
import { z } from 'zod';
import type { HostConfig } from '../../config/schema.ts';
import { HOME_PATH_SH } from '../../hosts/quote.ts';
import type { RemoteHost } from '../../hosts/types.ts';
import { script } from '../scripts.ts';

/** Runs a Slurm command with the cluster's SLURM_CONF and PATH; everything else arrives as argv. */
const SLURM = `
if [ -n "$1" ]; then SLURM_CONF=$1; export SLURM_CONF; fi
if [ -n "$2" ]; then PATH=$2:$PATH; export PATH; fi
shift 2
exec "$@"
`;

export function slurmArgv(cfg: HostConfig, argv: readonly string[]): string[] {
  return script(SLURM, 'glm-slurm', [cfg.slurm?.slurm_conf ?? '', cfg.bin_dirs.join(':'), ...argv]);
}

/**
 * submit SLURM_CONF PATH WORKDIR RUN_ID JOB_NAME REQUEUE: makes the run directory (on the filesystem the compute nodes
 * share) and submits the script arriving on stdin with the run directory as the job's working directory and its own
 * output file. REQUEUE (`--requeue` or `--no-requeue`, the script's own word) is repeated on the command line: sbatch(1)
 * lets environment variables (a login node's SBATCH_REQUEUE) override a script's #SBATCH lines, and the command line
 * override both.
 */
export const SUBMIT = `
set -u
if [ -n "$1" ]; then SLURM_CONF=$1; export SLURM_CONF; fi
if [ -n "$2" ]; then PATH=$2:$PATH; export PATH; fi
${HOME_PATH_SH}
W=$(home_path "$3")
R=$W/runs/$4
mkdir -p "$R" || exit 70
echo "GLM_RUN_DIR $R"
case $6 in --requeue|--no-requeue) ;; *) echo "glm: bad requeue word" >&2; exit 64 ;; esac
exec sbatch --parsable "$6" --job-name="$5" --chdir="$R" --output="$R/job.log" --open-mode=append
`;

/**
 * Every job state squeue(1) and scontrol list (squeue's JOB STATE CODES, https://slurm.schedmd.com/squeue.html): a
 * state missing here would be read as FAILED and end an attempt whose job still holds its nodes.
 */
export const JobStates = [
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'SUSPENDED',
  'REQUEUED',
  'RESIZING',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'PREEMPTED',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'BOOT_FAIL',
  'DEADLINE',
  // still holding its nodes: stopped with its cores kept (SIGSTOP), being signalled, staging its data out
  'STOPPED',
  'SIGNALING',
  'STAGE_OUT',
  // held or requeued back into the queue: the job is not over
  'REQUEUE_HOLD',
  'REQUEUE_FED',
  'RESV_DEL_HOLD',
  'SPECIAL_EXIT',
  // a federation sibling revoked on this cluster because it runs on another one
  'REVOKED',
] as const;
export type JobState = (typeof JobStates)[number];
/** The states of a job on its nodes: starting, running, resized, stopped with its cores kept, signalled, ending. */
export const RUNNING_JOB_STATES: readonly JobState[] = [
  'CONFIGURING',
  'RUNNING',
  'RESIZING',
  'COMPLETING',
  'STOPPED',
  'SIGNALING',
  'STAGE_OUT',
];

/** The active states a job waits in, not running: queued, suspended, held or put back in the queue. */
export const WAITING_JOB_STATES: readonly JobState[] = [
  'PENDING',
  'REQUEUED',
  'SUSPENDED',
  'REQUEUE_HOLD',
  'REQUEUE_FED',
  'RESV_DEL_HOLD',
  'SPECIAL_EXIT',
];

/**
 * The waiting states of a job that no longer runs anywhere: back in the queue (requeued, held), unlike SUSPENDED,
 * whose processes are stopped on its nodes and resume there.
 */
export const REQUEUED_JOB_STATES: readonly JobState[] = WAITING_JOB_STATES.filter((s) => s !== 'SUSPENDED');

/** A job in any other state is over. */
export const ACTIVE_JOB_STATES: readonly JobState[] = [...RUNNING_JOB_STATES, ...WAITING_JOB_STATES];

export interface JobRecord {
  id: string;
  state: JobState;
  reason: string;
  /** Compute nodes (compressed Slurm host list, e.g. `gpu[01-02]`), empty while pending. */
  nodeList: string;
  batchHost: string;
  exitCode: number | null;
  signal: number | null;
  partition: string;
  timeLimit: string;
  priority: number | null;
  /** How often Slurm has requeued the job (scontrol's Restarts; 0 from sacct, which does not say). */
  restarts: number;
  /** Where the answer came from: the controller's memory, or the accounting database. */
  source: 'scontrol' | 'sacct';
}

const ScontrolJob = z.object({
  JobId: z.string().regex(/^\d+/),
  JobState: z.string(),
  Reason: z.string().default('None'),
  NodeList: z.string().default(''),
  BatchHost: z.string().default(''),
  ExitCode: z
    .string()
    .regex(/^\d+:\d+$/)
    .default('0:0'),
  Partition: z.string().default(''),
  TimeLimit: z.string().default(''),
  Priority: z.string().default(''),
  Restarts: z.string().default('0'),
});

/** `Key=Value Key=Value ...` (values may hold spaces: a new pair starts where a word is followed by `=`). */
export function parsePairs(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=/g;
  const keys: Array<{ key: string; at: number; valueAt: number }> = [];
  for (let m = re.exec(line); m; m = re.exec(line)) keys.push({ key: m[1]!, at: m.index, valueAt: re.lastIndex });
  for (const [i, k] of keys.entries()) {
    const end = i + 1 < keys.length ? keys[i + 1]!.at : line.length;
    out[k.key] = line.slice(k.valueAt, end).trim();
  }
  return out;
}

function stateOf(s: string): JobState {
  // sacct writes `CANCELLED by 1001`; scontrol may add flags after a `+`.
  const word = s.split(/[\s+]/)[0]!.toUpperCase();
  return (JobStates as readonly string[]).includes(word) ? (word as JobState) : 'FAILED';
}

const none = (s: string) => (s === '(null)' || s === 'None assigned' ? '' : s);

export function parseScontrolJob(line: string): JobRecord | null {
  const parsed = ScontrolJob.safeParse(parsePairs(line));
  if (!parsed.success) return null;
  const j = parsed.data;
  const [code, sig] = j.ExitCode.split(':').map(Number);
  return {
    id: j.JobId,
    state: stateOf(j.JobState),
    reason: j.Reason,
    nodeList: none(j.NodeList),
    batchHost: none(j.BatchHost),
    exitCode: code ?? null,
    signal: sig ?? null,
    partition: j.Partition,
    timeLimit: j.TimeLimit,
    priority: /^\d+$/.test(j.Priority) ? Number(j.Priority) : null,
    restarts: /^\d+$/.test(j.Restarts) ? Number(j.Restarts) : 0,
    source: 'scontrol',
  };
}

/** A job as Slurm knows it, or why it knows nothing of it any more. */
export type JobLookup = { job: JobRecord } | { job: null; why: string };

/** One job as Slurm knows it now: the controller first, the accounting database for a job it has forgotten. */
export async function lookupJob(host: RemoteHost, cfg: HostConfig, jobId: string): Promise<JobLookup> {
  const r = await host.exec(slurmArgv(cfg, ['scontrol', 'show', 'job', '-o', jobId]));
  if (r.code === 0) {
    const rec = parseScontrolJob(r.stdout.trim().split('\n')[0] ?? '');
    if (rec) return { job: rec };
  }
  if (!/Invalid job id/i.test(r.stderr) && r.code !== 0) {
    throw new Error(`scontrol show job ${jobId} failed (exit ${r.code}): ${r.stderr.trim().slice(-300)}`);
  }
  return readAccounting(host, cfg, jobId);
}

export async function readJob(host: RemoteHost, cfg: HostConfig, jobId: string): Promise<JobRecord | null> {
  return (await lookupJob(host, cfg, jobId)).job;
}

/**
 * sacct's record of a job the controller forgot (it ended more than MinJobAge ago), or why there is none: the
 * cluster keeps no accounting (accounting_storage/none: sacct says so and exits non-zero), or accounting does not
 * know the job.
 */
async function readAccounting(host: RemoteHost, cfg: HostConfig, jobId: string): Promise<JobLookup> {
  const forgotten = `the controller has forgotten job ${jobId} (it ended more than MinJobAge ago)`;
  const r = await host.exec(
    slurmArgv(cfg, ['sacct', '-n', '-P', '-X', '-j', jobId, '-o', 'JobID,State,ExitCode,NodeList,Partition,Reason']),
  );
  if (r.code !== 0) {
    const said =
      r.stderr
        .trim()
        .split('\n')
        .at(-1)
        ?.replace(/^sacct: error: /, '') || `exit ${r.code}`;
    return { job: null, why: `${forgotten} and there is no accounting to ask (sacct: ${said.slice(0, 200)})` };
  }
  const row = r.stdout.trim().split('\n')[0];
  const [id, state, exit, nodes, partition, reason] = (row ?? '').split('|');
  if (!id || !state) return { job: null, why: `${forgotten} and accounting (sacct) has no record of it` };
  const [code, sig] = (exit ?? '0:0').split(':').map(Number);
  return {
    job: {
      id,
      state: stateOf(state),
      reason: reason ?? '',
      nodeList: none(nodes ?? ''),
      batchHost: '',
      exitCode: code ?? null,
      signal: sig ?? null,
      partition: partition ?? '',
      timeLimit: '',
      priority: null,
      restarts: 0,
      source: 'sacct',
    },
  };
}

/**
 * Slurm's own words for a cgroup OOM kill in a job's output: slurmstepd's `Detected N oom-kill event(s) in StepId=J.S`
 * and srun's `srun: error: NODE: task N: Out Of Memory`. A step that is OOM-killed under srun ends the batch script
 * with srun's failure, so scontrol shows the job FAILED, not OUT_OF_MEMORY: these lines are what tells the two apart
 * when there is no accounting to ask for the step's state.
 */
export function oomInOutput(text: string): string | null {
  const m =
    /^slurmstepd(?:-[^:\s]+)?: error: Detected \d+ oom[-_]kill events? ?(?:\(s\))? in StepId=\S+.*$/m.exec(text) ??
    /^srun: error: \S+: tasks? [\d,-]+: Out Of Memory$/m.exec(text);
  return m ? m[0].trim() : null;
}

/**
 * slurmstepd's own line in a job's output when Slurm ends a job or step, e.g. `slurmstepd-gpu07: error: *** JOB 7 ON
 * gpu07 CANCELLED AT 2026-12-01T18:31:28 DUE TO PREEMPTION ***` (the last one in `text`), or null.
 */
export function cancelledInOutput(text: string): string | null {
  const all = [
    ...text.matchAll(/^slurmstepd(?:-[^:\s]+)?: error: \*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT .*\*\*\*$/gm),
  ];
  return all.at(-1)?.[0].trim() ?? null;
}

/**
 * srun's lines that a task of the job's step failed, in the job's output (`job.log`, the batch script's stdout and
 * stderr) since its last run began, in the order srun wrote them: `srun: error: NODE: task N: Killed` (SIGKILL: the
 * kernel's OOM killer, a person's kill -9) or `srun: error: NODE: task N: Exited with exit code C`. With one task per
 * node, task N runs on node rank N. srun writes a node's line when that node's slurmstepd tells it, so two nodes that
 * die within milliseconds may be written in either order (docs/slurm.md, node failure). Empty when srun said nothing
 * of the kind.
 */
export function srunFailures(text: string): { node: string; task: number; line: string }[] {
  const run = text.slice(Math.max(0, text.lastIndexOf('glm: job ')));
  const re = /^srun: error: (\S+): tasks? (\d+)(?:[-,][\d,-]*)?: (?:Killed|Exited with exit code \d+)$/gm;
  return [...run.matchAll(re)].map((m) => ({ node: m[1]!, task: Number(m[2]), line: m[0].trim() }));
}

/** The last bytes of a job's batch output file (its run directory's job.log), or '' when it cannot be read. */
export async function jobOutputTail(host: RemoteHost, runDir: string, bytes = 16_384): Promise<string> {
  const r = await host.exec(['tail', '-c', String(bytes), '--', `${runDir}/job.log`]).catch(() => null);
  return r && r.code === 0 ? r.stdout : '';
}

/** Where a pending job stands in its partition's queue: 1 = next; by priority, then submission order. */
export async function queuePosition(
  host: RemoteHost,
  cfg: HostConfig,
  job: Pick<JobRecord, 'id' | 'partition'>,
): Promise<number | null> {
  const args = ['squeue', '-h', '-t', 'PENDING', '-o', '%i %Q'];
  if (job.partition) args.push('-p', job.partition);
  const r = await host.exec(slurmArgv(cfg, args));
  if (r.code !== 0) return null;
  const rows = r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/))
    .map(([id, prio]) => ({ id: id ?? '', prio: Number(prio) }))
    .sort((a, b) => b.prio - a.prio || Number(a.id) - Number(b.id));
  const i = rows.findIndex((x) => x.id === job.id);
  return i < 0 ? null : i + 1;
}

/** `gpu[01-03],x` -> each host name, as Slurm itself expands it. */
export async function expandNodes(host: RemoteHost, cfg: HostConfig, nodeList: string): Promise<string[]> {
  if (!nodeList) return [];
  if (/^[A-Za-z0-9_.-]+$/.test(nodeList)) return [nodeList];
  const r = await host.exec(slurmArgv(cfg, ['scontrol', 'show', 'hostnames', nodeList]));
  return r.stdout.trim().split('\n').filter(Boolean);
}

export interface NodeTrouble {
  node: string;
  /** Slurm's node state, e.g. `DOWN+NOT_RESPONDING`. */
  state: string;
  /** Why Slurm took it out, e.g. `Not responding`. */
  reason: string;
}

/** The nodes of a node list that Slurm has taken out of service (down, failing, not responding, drained). */
export async function troubledNodes(host: RemoteHost, cfg: HostConfig, nodeList: string): Promise<NodeTrouble[]> {
  if (!nodeList) return [];
  const r = await host.exec(slurmArgv(cfg, ['scontrol', 'show', 'node', '-o', nodeList]));
  if (r.code !== 0) return [];
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => parsePairs(l))
    .filter((n) => /DOWN|FAIL|NOT_RESPONDING|DRAIN/.test(n.State ?? ''))
    .map((n) => ({
      node: n.NodeName ?? '',
      state: n.State ?? '',
      reason: n.Reason?.replace(/ \[[^\]]*\]$/, '') ?? '',
    }));
}

/** The address a node is reached on (its NodeAddr), for the tunnel to its server. */
export async function nodeAddress(host: RemoteHost, cfg: HostConfig, node: string): Promise<string> {
  const r = await host.exec(slurmArgv(cfg, ['scontrol', 'show', 'node', '-o', node]));
  const addr = parsePairs(r.stdout.trim()).NodeAddr;
  return addr && addr !== '(null)' ? addr : node;
}

export interface QueueRow {
  id: string;
  name: string;
  user: string;
  state: string;
  reason: string;
  partition: string;
  nodes: string;
  gres: string;
  elapsed: string;
  timeLimit: string;
}

/** The cluster's jobs named `prefix*` (this bot's), as squeue lists them. */
export async function listJobs(host: RemoteHost, cfg: HostConfig, prefix: string): Promise<QueueRow[]> {
  const r = await host.exec(slurmArgv(cfg, ['squeue', '-h', '-o', '%i|%j|%u|%T|%r|%P|%N|%b|%M|%l']));
  if (r.code !== 0) throw new Error(`squeue failed (exit ${r.code}): ${r.stderr.trim().slice(-300)}`);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [id, name, user, state, reason, partition, nodes, gres, elapsed, timeLimit] = l.split('|');
      return {
        id: id ?? '',
        name: name ?? '',
        user: user ?? '',
        state: state ?? '',
        reason: reason ?? '',
        partition: partition ?? '',
        nodes: nodes ?? '',
        gres: gres ?? '',
        elapsed: elapsed ?? '',
        timeLimit: timeLimit ?? '',
      };
    })
    .filter((j) => j.name.startsWith(prefix));
}

export interface PartitionGpus {
  node: string;
  state: string;
  gres: string;
  gresUsed: string;
}

/** Each node of the partition with its GPUs and the GPUs in use (sinfo's %G and %C-like GresUsed). */
export async function partitionGpus(host: RemoteHost, cfg: HostConfig, partition?: string): Promise<PartitionGpus[]> {
  const args = ['sinfo', '-h', '-N', '-O', 'NodeList:|,StateCompact:|,Gres:|,GresUsed:'];
  if (partition) args.push('-p', partition);
  const r = await host.exec(slurmArgv(cfg, args));
  if (r.code !== 0) throw new Error(`sinfo failed (exit ${r.code}): ${r.stderr.trim().slice(-300)}`);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [node, state, gres, gresUsed] = l.split('|').map((s) => s.trim());
      return { node: node ?? '', state: state ?? '', gres: gres ?? '', gresUsed: gresUsed ?? '' };
    });
}
