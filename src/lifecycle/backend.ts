// How a server is run: the seam between the lifecycle (launch, watch, stop, probe, status, reconcile) and the thing
// that runs it. Today two backends: a process group started over SSH on the host (direct.ts), and a batch job of a
// Slurm cluster submitted on its login node (slurm/backend.ts). Lifecycle code asks this interface, never either one.
import type { Attempt, AttemptStatus } from '../ledger/attempts.ts';
import type { Engine } from './engine.ts';
import type { LaunchEvent, LaunchRequest, MovedPort } from './launch/types.ts';
import type { NodeRef } from './nodes.ts';

/** What a launch will run, fully rendered (a dry run shows exactly this). */
export interface Plan {
  /** The server's command line (secrets redacted). */
  commandLine: string;
  dialectNote?: string;
  /** The batch script a scheduler is given (Slurm), exactly as submitted. */
  script?: string;
  /** The submission's own argv (Slurm: sbatch and its options), for the dry run. */
  submit?: string;
  /** The backend's own details, handed back to start(). */
  detail: unknown;
  /** The port it serves on, when the request's `movePort` moved it off a taken one, and why. */
  movedPort?: MovedPort;
}

/** An attempt opened in the ledger (its GPUs and port leased), with the plan as it stood when it was opened. */
export interface Opened {
  attempt: Attempt;
  /** The plan, its GPUs chosen again if a launch that won the race took the first choice. */
  plan: Plan;
}

/** A live attempt checked against its backend's own record (src/lifecycle/reconcile.ts). */
export interface Reconciled {
  attempt: Attempt;
  state: 'running' | 'queued' | 'closed' | 'unreachable';
  note?: string;
}

/** One node's stop: how it went and the exit status its host recorded. */
export interface NodeStop {
  node: NodeRef;
  /** dequeued: a job that waited in its scheduler's queue (pending, held) was taken out of it; nothing ran to signal. */
  how: 'TERM' | 'KILL' | 'already-gone' | 'dequeued';
  exitCode: number | null;
  /** What the backend said of the server when it was stopped (a queued job's state and reason). */
  note?: string;
}

/** An ending the backend itself names (a scheduler's): recorded as the attempt's outcome. */
export interface Ending {
  status: AttemptStatus;
  outcome: string;
  detail: string;
  exitCode: number | null;
  /**
   * The cause lies outside the server (a node the scheduler took out of service): the ending stands even when a log
   * shows a crash, which then follows from it (a peer's server lost with its node); the log's lines stay as evidence.
   */
  outranksLog?: boolean;
  /**
   * The ending stands only where node 0's log names a crash of this class, and then over it (endingOver): a worker srun
   * says died, told after node 0's end, went first only if node 0's crash is the consequence of losing a peer.
   */
  onlyOverLog?: string;
}

/**
 * The backend's ending as it stands against node 0's log (`logCategory`: its crash class, `none`; null when the log
 * was not read): an ending bound to a log crash (onlyOverLog) stands over that one only.
 */
export function endingOver(ending: Ending | undefined, logCategory: string | null): Ending | undefined {
  if (!ending?.onlyOverLog) return ending;
  const { onlyOverLog, ...rest } = ending;
  return logCategory === onlyOverLog ? { ...rest, outranksLog: true } : undefined;
}

export interface Requeue {
  count: number;
  text: string;
  /** Held in the queue (Slurm's SPECIAL_EXIT, REQUEUE_HOLD, a JobHeld reason): it runs again only once released. */
  held?: boolean;
  /**
   * Each node's log size (by rank) once the run was over: where the job's next run starts in a log that is appended
   * to, so the next run is read from there and nothing of the previous run is read into its diagnosis.
   */
  runStart?: number[];
  /** Each node's log mark there (scripts.ts LOG_MARKS): whether the next run appended to that log or truncated it. */
  runMark?: string[];
}

export interface ServerState {
  /** queued: waiting for resources; running: its processes live; ended: gone; none: the backend has no record. */
  state: 'queued' | 'running' | 'ended' | 'none';
  exitCode: number | null;
  /** The backend's own reason for an ending (e.g. Slurm's TIMEOUT), when it has one. */
  ending?: Ending;
  /**
   * A scheduler's job that ended: the node (by rank) whose task it saw fail first (srun's `task N: Exited with exit
   * code C` or `Killed`), when it says. That task failed by itself (exited non-zero, or was killed), not with the job.
   */
  failedFirst?: number;
  /** People's words for where it stands (e.g. `PENDING: Resources`, `alive`). */
  text: string;
  uptimeS?: number | null;
}

export interface ServerBackend {
  readonly kind: 'direct' | 'slurm';
  /**
   * Renders what would run (argv, env, nodes, a batch script) without changing anything. `reconcileHosts` checks the
   * hosts' live attempts against their own records first (a backend that leases GPUs itself calls it; a dry run
   * does not), passed in so a backend needs no other backend.
   */
  plan(engine: Engine, req: LaunchRequest, reconcileHosts: (hosts: string[]) => Promise<unknown>): Promise<Plan>;
  /** Opens the attempt in the ledger, taking what it holds (GPU leases, its port); throws a UserError when refused. */
  open(engine: Engine, req: LaunchRequest, plan: Plan): Promise<Opened>;
  /** Starts (or submits) the opened attempt's server on every node, head first; closes the attempt when it fails. */
  startNodes(engine: Engine, req: LaunchRequest, opened: Opened): Promise<Attempt>;
  /**
   * Waits until the server's processes run (a scheduler's queue), telling the queue as milestones; resolves with the
   * attempt as it is then, or with its ending when it ended before it ever ran.
   */
  admitted(
    engine: Engine,
    attempt: Attempt,
    emit: (e: LaunchEvent) => void,
  ): Promise<{ attempt: Attempt } | { ended: Ending }>;
  /** The backend's own record of the attempt's server now. */
  state(engine: Engine, attempt: Attempt): Promise<ServerState>;
  /**
   * A scheduler's job that ran and that it put back in its queue to run again (Slurm's --requeue, after a preemption
   * or a node failure): how many times so far and the backend's words for it (why, when it runs again); null when
   * the job is not back in the queue. A backend whose servers are never requeued has no such method.
   */
  requeued?(engine: Engine, attempt: Attempt): Promise<Requeue | null>;
  /** The argv (on the node's host) that streams one node's log from a byte offset and ends once it is gone. */
  followArgv(engine: Engine, node: NodeRef, offset: number): string[];
  /** Whether the node's server is gone for good (its log will not grow again). */
  nodeGone(engine: Engine, node: NodeRef): Promise<boolean>;
  /** Stops every node of the attempt (all but `skipRanks`): TERM, the grace period, KILL; confirmed gone. */
  stop(engine: Engine, attempt: Attempt, skipRanks?: number[]): Promise<NodeStop[]>;
  /** Checks a live attempt against the backend's own record; closes it in the ledger when it ended unwatched. */
  reconcile(engine: Engine, attempt: Attempt, opts: { skipStarting?: boolean }): Promise<Reconciled | null>;
  /** A scheduler's queue at a glance: this bot's jobs on the cluster (and, asked, its partition's GPUs in use). */
  queue?(engine: Engine, hostName: string, opts: { gpus?: boolean }): Promise<QueueView>;
}

export interface QueueView {
  jobs: Array<{
    jobId: string;
    name: string;
    attemptId: number | null;
    state: string;
    reason: string;
    nodes: string;
    gres: string;
    elapsed: string;
    timeLimit: string;
  }>;
  gpus?: Array<{ node: string; state: string; total: string; used: string }>;
}
