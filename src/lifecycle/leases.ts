// GPU leases and ports: which GPUs a launch takes on each host, and which port it serves on. A profile that lists its
// GPUs gets exactly those (the ledger refuses them while another attempt holds one, naming it); otherwise the bot
// takes the lowest-numbered GPUs that no live attempt holds and nvidia-smi shows idle, so two people sharing a box do
// not start on each other's GPUs and wait minutes for an OOM that looks like a model problem. The port is the
// profile's (or --port); a taken one is refused, or, for a launch allowed to move (a smoke beside a running server
// of its profile), exchanged for a free one.
import { UserError } from '../errors.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { type Engine, type HostContext, hostOf } from './engine.ts';

/** What planning GPUs and ports touches: the hosts, the ledger's leases and the autopilot runs' held GPUs. */
export type LeaseContext = HostContext & Pick<Engine, 'attempts' | 'ledger'>;

import { type GpuReport, readGpus } from './host-info.ts';
import { FREE_PORT, script } from './scripts.ts';

/** A GPU with at least this much memory in use runs something (an idle card shows a few MiB). */
export const GPU_IN_USE_MIB = 1024;

export interface GpuPlan {
  gpus: number[];
  /** The bot chose them (not the profile): rendered as CUDA_VISIBLE_DEVICES unless they are CUDA's default 0..n-1. */
  chosen: boolean;
}

/**
 * The GPUs a launch of `count` GPUs per node takes on `hostName`. `explicit` (the profile's `gpus`, or --gpus) wins;
 * without nvidia-smi the bot cannot see the host's GPUs and takes 0..count-1, CUDA's own choice.
 */
export async function planGpus(
  engine: LeaseContext,
  hostName: string,
  count: number,
  explicit?: readonly number[],
  opts: { dryRun?: boolean; groupKey?: string } = {},
): Promise<GpuPlan> {
  const first = explicit?.length ? [...explicit] : Array.from({ length: count }, (_, i) => i);
  // Named GPUs another attempt holds: the ledger refuses them (naming the holder) without asking nvidia-smi.
  if (explicit?.length && engine.attempts.holders(hostName, explicit).length > 0) return { gpus: first, chosen: false };
  const { host, cfg } = hostOf(engine, hostName);
  let report: GpuReport;
  try {
    report = await readGpus(host, cfg);
  } catch (e) {
    // An unreachable host fails the launch here, before any node starts; a dry run shows CUDA's default instead.
    if (opts.dryRun) return { gpus: first, chosen: false };
    throw e;
  }
  if (!report.available || report.gpus.length === 0) return { gpus: first, chosen: false };
  const leased = new Map(engine.attempts.leasesOn(hostName).map((l) => [l.gpu, l.attemptId]));
  // GPUs an autopilot run holds between its trials (rows of gpu_holds) are not free for anyone else.
  const held = heldGpus(engine, hostName, opts.groupKey);
  const busy = report.gpus.filter((g) => !leased.has(g.index) && g.memUsedMiB >= GPU_IN_USE_MIB);
  if (explicit?.length) {
    // Named GPUs: the ledger refuses those another attempt holds (naming it); memory in use that no attempt holds
    // is someone else's process, and a server started there would die of an OOM minutes later.
    const missing = explicit.filter((g) => !report.gpus.some((x) => x.index === g));
    if (missing.length > 0) {
      throw new UserError(
        `${hostName} has no GPU ${missing.join(',')} (it has ${report.gpus.map((g) => g.index).join(',')})`,
        {
          kind: 'command',
          lead: 'name GPUs the host has, or leave them to the bot; see them with',
          command: `check --host ${hostName}`,
        },
      );
    }
    const taken = busy.filter((g) => explicit.includes(g.index));
    if (taken.length > 0 && !opts.dryRun) {
      throw new UserError(
        `${taken.map((g) => `GPU ${g.index} on ${hostName} has ${g.memUsedMiB} MiB in use`).join('; ')} by a process this bot did not start`,
        'see what holds it with nvidia-smi on the host, free it, or launch on other GPUs (--gpus, or leave them to the bot)',
      );
    }
    return { gpus: [...explicit], chosen: false };
  }
  const free = report.gpus
    .map((g) => g.index)
    .filter((i) => !leased.has(i) && !held.has(i) && !busy.some((b) => b.index === i))
    .sort((a, b) => a - b);
  if (free.length >= count) return { gpus: free.slice(0, count), chosen: true };

  const holders = new Map<number, { attempt: Attempt; gpus: number[] }>();
  for (const [gpu, id] of leased) {
    const a = engine.attempts.get(id);
    if (!a) continue;
    const h = holders.get(id) ?? { attempt: a, gpus: [] };
    h.gpus.push(gpu);
    holders.set(id, h);
  }
  const parts = [
    ...[...holders.values()].map(
      (h) =>
        `GPUs ${h.gpus.sort((x, y) => x - y).join(',')} held by attempt #${h.attempt.id} (${h.attempt.profile}, ${h.attempt.actor}, ${h.attempt.status})`,
    ),
    ...[...new Set(held.values())].map(
      (who) =>
        `GPUs ${[...held]
          .filter(([, w]) => w === who)
          .map(([g]) => g)
          .join(',')} held by ${who}`,
    ),
    ...busy.map((g) => `GPU ${g.index} busy outside this bot (${g.memUsedMiB} MiB in use)`),
  ];
  const firstHolder = [...holders.keys()][0];
  throw new UserError(
    `${hostName} has ${free.length} free GPU${free.length === 1 ? '' : 's'} of ${report.gpus.length}; this launch needs ${count}: ${parts.join('; ')}`,
    firstHolder !== undefined
      ? `wait for a holder to end, or stop one (stop --attempt ${firstHolder}); see who holds what with: status`
      : 'free the GPUs on the host (see nvidia-smi), or launch elsewhere',
  );
}

function heldGpus(engine: Pick<Engine, 'ledger'>, host: string, except?: string): Map<number, string> {
  return engine.ledger.autopilot().heldGpus(host, except);
}

/** GPUs per node: the profile's list, else its tensor-parallel size split over the nodes. */
export function gpusPerNode(tp: number | undefined, nnodes: number): number {
  const total = tp ?? 1;
  if (total % nnodes !== 0) {
    throw new UserError(
      `tp ${total} does not split over ${nnodes} nodes`,
      `use a tp that is a multiple of ${nnodes} (each node runs tp/${nnodes} GPUs)`,
    );
  }
  return total / nnodes;
}

/** Whether a plan must be spelled out as CUDA_VISIBLE_DEVICES (CUDA takes 0..n-1 by itself). */
export function needsVisibleDevices(plan: GpuPlan): boolean {
  return plan.chosen && plan.gpus.some((g, i) => g !== i);
}

/**
 * The live attempt a launch would run into on this host (its port, or GPUs it needs), or undefined when it fits
 * beside whatever runs there. For faces that offer to replace a server instead of refusing.
 */
export async function clashingAttempt(
  engine: LeaseContext,
  hostName: string,
  want: { port: number; count: number; gpus?: readonly number[] },
): Promise<Attempt | undefined> {
  return (await launchBlocker(engine, hostName, want))?.holder ?? undefined;
}

/**
 * Why a launch does not fit on this host now: its port (when it has a fixed one) or the GPUs it needs, with the
 * attempt in the way when one of ours is; undefined when it fits. An unreachable host is not a clash: the launch
 * reports it itself.
 */
export async function launchBlocker(
  engine: LeaseContext,
  hostName: string,
  want: { port?: number; count: number; gpus?: readonly number[] },
): Promise<{ error: UserError; holder?: Attempt } | undefined> {
  // Named GPUs, or the port: the ledger's own refusal says who is in the way (no server has port 0).
  const named =
    want.port !== undefined || want.gpus?.length
      ? engine.attempts.conflict(hostName, want.port ?? 0, want.gpus ?? [])
      : null;
  if (named) return { error: named.error, ...(named.holder ? { holder: named.holder } : {}) };
  if (want.gpus?.length) return undefined;
  try {
    await planGpus(engine, hostName, want.count);
    return undefined;
  } catch (e) {
    // Not enough free GPUs: the first holder is the one to offer replacing. Anything else (an unreachable host) is
    // the launch's own error to report, not a clash.
    if (!(e instanceof UserError)) return undefined;
    const held = engine.attempts.leasesOn(hostName)[0];
    return { error: e, holder: held ? engine.attempts.get(held.attemptId) : undefined };
  }
}

/** Why `port` cannot be served on one of `hostNames`: one of our servers has it, or something else answers there. */
async function portTaken(
  engine: HostContext & Pick<Engine, 'attempts'>,
  hostNames: readonly string[],
  port: number,
): Promise<UserError | null> {
  // A port one of our own servers uses is refused naming it; only then is a port nobody we know of answers on probed.
  for (const h of hostNames) {
    const c = engine.attempts.conflict(h, port, []);
    if (c) return c.error;
  }
  for (const h of hostNames) {
    try {
      await hostOf(engine, h).host.http(port, { method: 'GET', path: '/health', timeoutMs: 2000 });
    } catch {
      continue; // nothing answers: free
    }
    return new UserError(
      `port ${port} on ${h} is already in use by a process this bot did not start`,
      'stop that process, or give the profile another port',
    );
  }
  return null;
}

/** The first port from `from` up that nothing listens on, as the host's own socket table says. */
export async function findFreePort(engine: HostContext, hostName: string, from: number): Promise<number> {
  const r = await hostOf(engine, hostName).host.exec(script(FREE_PORT, 'glm-free-port', [String(from)]));
  const found = Number(r.stdout.trim());
  if (!Number.isInteger(found) || found <= 0) throw new Error(`no free port found on ${hostName}: ${r.stdout.trim()}`);
  return found;
}

export interface PortPlan {
  port: number;
  /** Why the wanted port was not taken (only when `move` chose another). */
  movedBecause?: string;
}

/**
 * The port a launch serves on, on every node: `port` when it is free there; else, with `move`, the next free one
 * above it (free in the host's socket table and in the ledger: a loading server may not listen yet), else the
 * refusal naming who holds it.
 */
export async function planPort(
  engine: HostContext & Pick<Engine, 'attempts'>,
  hostNames: readonly string[],
  port: number,
  opts: { move?: boolean } = {},
): Promise<PortPlan> {
  const taken = await portTaken(engine, hostNames, port);
  if (!taken) return { port };
  if (!opts.move) throw taken;
  let from = port + 1;
  for (let i = 0; i < 20 && from < 65535; i++) {
    const p = await findFreePort(engine, hostNames[0]!, from);
    if (!(await portTaken(engine, hostNames, p))) return { port: p, movedBecause: taken.message };
    from = p + 1;
  }
  throw new UserError(`${taken.message}, and no free port was found above it`, taken.data ?? taken.hint);
}
