// Stop: TERM the server's process group, wait the grace period, KILL what remains; then say whether the GPUs let
// go of their memory. Only the process group this bot recorded is signalled, after checking its start time (a
// reused PID is never killed). A multi-node attempt is stopped on every node at once.
import { UserError } from '../errors.ts';
import { type Attempt, parseGpus } from '../ledger/attempts.ts';
import type { NodeStop } from './backend.ts';
import { backendFor } from './backends.ts';
import { type Engine, hostOf, publish } from './engine.ts';
import { type GpuReport, readGpus } from './host-info.ts';
import { GPU_IN_USE_MIB } from './leases.ts';
import { reconcile } from './reconcile.ts';

export interface StopResult {
  attempt: Attempt;
  how: NodeStop['how'];
  /** What the backend said of the server it stopped (a queued job's state and reason). */
  note?: string;
  exitCode: number | null;
  gpu: GpuReport | null;
  /** true/false when nvidia-smi could tell; null when it is not there. */
  gpuReleased: boolean | null;
  /** The attempt's GPUs still holding memory after the stop (head host). */
  gpusStillInUse: Array<{ index: number; memUsedMiB: number }>;
}

/**
 * The live attempt a stop (or probe) means: the one named, else the only one on the host. Several servers on one host
 * make `--host` ambiguous: then say which there are, rather than guess.
 */
/** The refusal for an attempt that has ended: how it ended, and where to see what runs. */
function notRunning(a: Attempt): UserError {
  return new UserError(`attempt #${a.id} is not running: it ended ${a.outcome ?? a.status}`, {
    kind: 'command',
    lead: 'see',
    command: 'status',
  });
}

function targetAttempt(engine: Pick<Engine, 'attempts'>, hostName: string | undefined, attemptId?: number): Attempt {
  if (attemptId !== undefined) {
    const a = engine.attempts.get(attemptId);
    if (!a)
      throw new UserError(`there is no attempt #${attemptId}`, {
        kind: 'command',
        lead: 'see the attempts with',
        command: 'attempts',
      });
    if (!a.active) throw notRunning(a);
    return a;
  }
  const live = hostName ? engine.attempts.allActiveOn(hostName) : [];
  if (live.length === 0)
    throw new UserError(`nothing is running on ${hostName} (according to the ledger)`, {
      kind: 'command',
      lead: 'see what runs where with',
      command: 'status',
    });
  if (live.length > 1) {
    throw new UserError(
      `${hostName} runs ${live.length} servers: ${live.map((a) => `#${a.id} (${a.profile}, GPUs ${a.gpus ?? '?'}, port ${a.port}, by ${a.actor})`).join(', ')}`,
      `name one with --attempt N, e.g. stop --attempt ${live[0]!.id}`,
    );
  }
  return live[0]!;
}

/** Someone asked for this attempt to stop (in this or another bot process). */
export function stopRequested(engine: Pick<Engine, 'attempts'>, attemptId: number): boolean {
  return engine.attempts.events(attemptId).some((e) => e.kind === 'stop_requested');
}

export async function stop(
  engine: Engine,
  hostName: string | undefined,
  actor: string,
  attemptId?: number,
): Promise<StopResult> {
  let attempt = targetAttempt(engine, hostName, attemptId);
  if (attempt.pgid === null && backendFor(engine, attempt.host).kind === 'direct') {
    // Its launcher never recorded where it runs (it died mid-launch): the host's record says, before anything is
    // signalled or closed. Never closed as gone while the host may still start it. (A cluster's job is found by its
    // job id, which the scheduler keeps.)
    await reconcile(engine, undefined, { attemptIds: [attempt.id] });
    attempt = engine.attempts.get(attempt.id)!;
    if (attempt.active && attempt.pgid === null) {
      throw new UserError(`attempt #${attempt.id} is still starting: its host has no record of it yet`, {
        kind: 'command',
        lead: 'try again in a moment; see',
        command: 'status',
      });
    }
    if (!attempt.active) throw notRunning(attempt);
  }
  // Told before the signals: a node watcher that sees a node go down now knows it was asked to (see failNodes).
  engine.attempts.event(attempt.id, engine.clock.now(), 'stop_requested', { actor });
  const backend = backendFor(engine, attempt.host);
  const stops = await backend.stop(engine, attempt);
  const head: Pick<NodeStop, 'how' | 'exitCode' | 'note'> = stops.find((s) => s.node.rank === 0) ?? {
    how: 'already-gone',
    exitCode: null,
  };
  const how = head.how;
  const now = engine.clock.now();
  const workers = stops.filter((s) => s.node.rank > 0);
  const nodesNote = workers.length > 0 ? `; ${stops.length} nodes` : '';
  engine.attempts.finish(attempt.id, {
    status: 'stopped',
    outcome: 'stopped',
    detail:
      how === 'already-gone'
        ? `stopped by ${actor}; the server had already exited${nodesNote}`
        : how === 'dequeued'
          ? `stopped by ${actor} while its job waited in the queue (${head.note ?? 'queued'}): taken out of the queue`
          : `stopped by ${actor} (${how}${head.note ? `; ${head.note}` : ''})${nodesNote}`,
    exitCode: head.exitCode,
    at: now,
  });
  engine.attempts.event(attempt.id, now, 'stopped', {
    actor,
    how,
    nodes: stops.map((s) => ({ rank: s.node.rank, host: s.node.host, how: s.how })),
  });
  // Other servers may share the host: only this attempt's GPUs say whether its memory was released. (A cluster's
  // login node has no GPUs of the job: Slurm's record of the job's end is the confirmation there.)
  const { host, cfg } = hostOf(engine, attempt.host);
  let gpu: GpuReport | null = null;
  let gpuReleased: boolean | null = null;
  let gpusStillInUse: StopResult['gpusStillInUse'] = [];
  if (backend.kind === 'direct')
    try {
      gpu = await readGpus(host, cfg);
      if (gpu.available) {
        const mine = new Set(parseGpus(attempt.gpus));
        gpusStillInUse = gpu.gpus
          .filter((g) => mine.has(g.index) && g.memUsedMiB >= GPU_IN_USE_MIB)
          .map((g) => ({ index: g.index, memUsedMiB: g.memUsedMiB }));
        gpuReleased = gpusStillInUse.length === 0;
      }
    } catch {
      gpu = null;
    }
  const result: StopResult = {
    attempt: engine.attempts.get(attempt.id)!,
    how,
    ...(head.note ? { note: head.note } : {}),
    exitCode: head.exitCode,
    gpu,
    gpuReleased,
    gpusStillInUse,
  };
  // However the stop came (a command in any face, a button, the scheduler, a bisection), its message and thread say so.
  publish(engine, () => {}, { kind: 'stopped', attempt: result.attempt, actor, text: stopSummary(engine, result) });
  return result;
}

/** How a stop went, for people: `stopped attempt #3 (small) on gpu: it exited on SIGTERM` and the GPU memory. */
export function stopSummary(engine: Pick<Engine, 'attempts'>, r: StopResult): string {
  const mine = parseGpus(r.attempt.gpus);
  const gpu =
    r.gpuReleased === null
      ? 'GPU memory: unknown (no nvidia-smi on the host)'
      : r.gpuReleased
        ? `GPU memory released (GPUs ${mine.join(',')}: ${r.gpu?.gpus
            .filter((g) => mine.includes(g.index))
            .map((g) => `${g.memUsedMiB} MiB`)
            .join(', ')} in use)`
        : `GPU memory NOT released: ${r.gpusStillInUse.map((g) => `GPU ${g.index} still holds ${g.memUsedMiB} MiB`).join(', ')}`;
  const how =
    r.how === 'already-gone'
      ? 'it had already exited'
      : r.how === 'dequeued'
        ? `its job was waiting in the queue (${r.note ?? 'queued'}): taken out of the queue, nothing ran to signal`
        : r.note
          ? `it was ${r.how === 'KILL' ? 'killed' : 'ended by Slurm'} (${r.note})`
          : r.how === 'KILL'
            ? 'it ignored SIGTERM and was killed with SIGKILL'
            : 'it exited on SIGTERM';
  const workers = engine.attempts.nodes(r.attempt.id).map((n) => n.host);
  const where = [r.attempt.host, ...workers].join('+');
  return `stopped attempt #${r.attempt.id} (${r.attempt.profile}) on ${where}: ${how}${workers.length ? ` (all ${workers.length + 1} nodes)` : ''}\n${gpu}`;
}
