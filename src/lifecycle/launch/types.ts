// What a launch is asked, what it tells along the way, and what it ends with: the shapes every step of the pipeline
// (src/lifecycle/launch.ts) and every backend share. Types only, so that anything may import them.
import type { Role } from '../../access/roles.ts';
import type { Attempt } from '../../ledger/attempts.ts';
import type { Diagnosis } from '../../logs/diagnosis.ts';
import type { ResolvedProfile } from '../../profiles/index.ts';
import type { HardwareWarning } from '../hardware.ts';
import type { Progress } from '../progress.ts';

/** The port a launch serves on when the request's `movePort` moved it off a taken one, and why. */
export interface MovedPort {
  port: number;
  movedBecause: string;
}

export interface LaunchRequest {
  profile: ResolvedProfile;
  hostName: string;
  actor: string;
  origin: string;
  /** The asker's role: an operator may change only what access.operator_may_set allows (src/access/operator.ts). */
  role: Role;
  dryRun?: boolean;
  /** After the ready line, send one real request: the seeds' NaN only showed on the first request. Default on. */
  firstRequest?: boolean;
  /** Serve on this port instead of the profile's. */
  port?: number;
  /**
   * When the port is taken (by one of our servers or anything else), serve on a free one instead of refusing: for
   * a launch beside a running server of the same profile (a smoke's fresh launch). The direct backend; a cluster's
   * scheduler places its jobs itself.
   */
  movePort?: boolean;
  /** Attempts made together (a bisection) share this chat thread. */
  groupKey?: string;
  /** Launch even when the hardware catalog or the ledger says this configuration crashes on this host. */
  confirmed?: boolean;
  /** Asks the person (interactive faces); without it, a known crash needs `confirmed`. */
  confirm?: (question: string) => Promise<boolean>;
  /** A multi-node launch: every node's host, node 0 (the head, `hostName`) first. */
  nodes?: string[];
  /** The head's rendezvous port (a host group's dist_port); default: a free one found on the head. */
  distPort?: number;
  /** These GPUs (per node) instead of the profile's or the bot's choice. */
  gpus?: number[];
}

export type LaunchEvent =
  | { kind: 'command'; commandLine: string; dialectNote?: string }
  | { kind: 'started'; attempt: Attempt }
  | { kind: 'milestone'; text: string; progress: Progress }
  | { kind: 'ready'; attempt: Attempt; seconds: number }
  | { kind: 'failed'; attempt: Attempt; outcome: string; diagnosis: Diagnosis; exitCode: number | null }
  /** Someone (or the scheduler, or a bisection) stopped it; `text` says how it went. */
  | { kind: 'stopped'; attempt: Attempt; actor: string; text: string };

export interface LaunchResult {
  /**
   * ended: the backend (a scheduler) ended it before it ran; request_failed: the server is up but its first real
   * request got an error status (e.g. 401); it keeps running. interrupted: the bot closed while following it; the
   * attempt is left as it was (loading or queued) for the next bot to follow on.
   */
  outcome: 'dry-run' | 'ready' | 'crashed' | 'exited' | 'timeout' | 'hang' | 'ended' | 'request_failed' | 'interrupted';
  /** Known crashes of this configuration on this hardware (shown by a dry run). */
  warnings?: HardwareWarning[];
  /** Checks that could not run (e.g. the GPU architecture is unknown), for the person to know. */
  notes?: string[];
  commandLine: string;
  attempt?: Attempt;
  diagnosis?: Diagnosis;
  /** A dry run on a cluster: the batch script exactly as it would be submitted, and the submission. */
  script?: string;
  submit?: string;
  /** The port it serves on, when `movePort` moved it off a taken one, and why. */
  movedPort?: MovedPort;
}
