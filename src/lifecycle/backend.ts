// How a server is run: the seam between the lifecycle (launch, watch, stop, probe, status, reconcile) and the thing
// that runs it. Today two backends: a process group started over SSH on the host (direct.ts), and a batch job of a
// Slurm cluster submitted on its login node (slurm/backend.ts). Lifecycle code asks this interface, never either one.
import type { Attempt, AttemptStatus } from '../ledger/attempts.ts';
import type { Engine } from './engine.ts';
import type { LaunchEvent, LaunchRequest } from './launch.ts';
import type { NodeRef } from './nodes.ts';
import type { Reconciled } from './reconcile.ts';
import type { NodeStop } from './stop.ts';

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
  movedPort?: { port: number; movedBecause: string };
}

/** An ending the backend itself names (a scheduler's): recorded as the attempt's outcome. */
export interface Ending {
  status: AttemptStatus;
  outcome: string;
  detail: string;
  exitCode: number | null;
}

export interface ServerState {
  /** queued: waiting for resources; running: its processes live; ended: gone; none: the backend has no record. */
  state: 'queued' | 'running' | 'ended' | 'none';
  exitCode: number | null;
  /** The backend's own reason for an ending (e.g. Slurm's TIMEOUT), when it has one. */
  ending?: Ending;
  /** People's words for where it stands (e.g. `PENDING: Resources`, `alive`). */
  text: string;
  uptimeS?: number | null;
}

export interface ServerBackend {
  readonly kind: 'direct' | 'slurm';
  /** Renders what would run (argv, env, nodes, a batch script) without changing anything. */
  plan(engine: Engine, req: LaunchRequest): Promise<Plan>;
  /** Opens the attempt in the ledger and starts (or submits) the server; throws a UserError when refused. */
  start(engine: Engine, req: LaunchRequest, plan: Plan): Promise<Attempt>;
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
