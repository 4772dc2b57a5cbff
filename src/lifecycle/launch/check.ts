// Launch, step 2: check. What the hardware catalog (catalog/hardware.yaml) and this host's past attempts say about
// the configuration; a known crash is held back until the person confirms it. `checkLaunch` runs every check that
// can refuse a launch without starting anything (for "stop #N and launch").
import { UserError } from '../../errors.ts';
import type { ResolvedProfile } from '../../profiles/index.ts';
import { type Engine, type HostContext, hostOf } from '../engine.ts';
import {
  archOf,
  type HardwareWarning,
  hardwareWarnings,
  type KnownBadEntry,
  loadHardwareCatalog,
  uncheckedArchNote,
} from '../hardware.ts';
import { readComputeCap, readVersions } from '../host-info.ts';
import { planLaunch } from './plan.ts';
import type { LaunchRequest } from './types.ts';

export interface KnownCrashes {
  warnings: HardwareWarning[];
  /** Checks that could not run (e.g. the GPU architecture is unknown). */
  notes: string[];
}

let hardwareCatalog: KnownBadEntry[] | undefined;

/**
 * What the hardware catalog and this host's past attempts say about this configuration, and which of those checks
 * could not run (an unknown architecture skips the catalog's per-architecture entries: said, never silent).
 */
export async function knownCrashes(
  engine: HostContext & Pick<Engine, 'attempts'>,
  req: Pick<LaunchRequest, 'hostName' | 'profile'>,
): Promise<KnownCrashes> {
  const { host, cfg } = hostOf(engine, req.hostName);
  let why = '';
  const cap = await readComputeCap(host, cfg).catch((e: Error) => {
    why = `nvidia-smi could not be read: ${e.message}`;
    return null;
  });
  hardwareCatalog ??= loadHardwareCatalog();
  const past = engine.attempts.list({ host: req.hostName, limit: 500 });
  const arch = archOf(cap ?? undefined);
  const notes: string[] = [];
  if (!arch) {
    why ||= cap === null ? 'no nvidia-smi on the host' : `unrecognised compute capability '${cap}'`;
    notes.push(uncheckedArchNote(req.profile, req.hostName, why, hardwareCatalog));
  }
  return { warnings: hardwareWarnings(req.profile, arch, hardwareCatalog, past), notes };
}

/**
 * A known crash goes no further unless confirmed: by the request (`--yes`), or by the person when the face can ask.
 * Throws the refusal, with how to launch it anyway.
 */
export async function confirmKnownCrashes(req: LaunchRequest, { warnings, notes }: KnownCrashes): Promise<void> {
  if (warnings.length === 0 || req.confirmed) return;
  const known = knownCrashText(req, warnings, notes);
  const yes = req.confirm ? await req.confirm(`${known}\nlaunch it anyway? [y/N]`) : false;
  if (!yes) throw knownCrashRefusal(req.confirm ? `not launched: ${known}` : known);
}

function knownCrashText(req: LaunchRequest, warnings: HardwareWarning[], notes: string[]): string {
  return `${req.profile.name} on ${req.hostName} is known to crash:\n${warnings.map((w) => `  - ${w.text}${w.evidence.length ? ` (${w.evidence.join(', ')})` : ''}`).join('\n')}${notes.map((n) => `\n  note: ${n}`).join('')}`;
}

const knownCrashRefusal = (text: string) =>
  new UserError(
    text,
    'launch it anyway with --yes (e.g. to reproduce the crash for a bug report), or pick another configuration (next)',
  );

/**
 * Every check that can refuse this launch, run without starting or stopping anything: the asker's role may launch
 * it, its backend accepts the request as given, the host answers and runs SGLang, the configuration is not known to
 * crash here (unless confirmed), and no attempt other than `replacing` holds its port or named GPUs. "Stop #N and
 * launch" runs it before the stop, so a refusal leaves #N running. Throws the refusal the launch itself would give.
 */
export async function checkLaunch(engine: Engine, req: LaunchRequest, replacing?: number): Promise<void> {
  const hosts = req.nodes && req.nodes.length > 1 ? req.nodes : [req.hostName];
  const profile: ResolvedProfile = req.gpus ? { ...req.profile, gpus: req.gpus } : req.profile;
  // A dry run's plan takes nothing (no leases, no ports) and refuses what the backend would (e.g. --gpus on Slurm).
  const { backend } = await planLaunch(engine, { ...req, dryRun: true });
  if (backend.kind === 'direct') {
    // The host the server would start on answers and runs SGLang (a cluster's login node need not have it).
    const { host, cfg } = hostOf(engine, req.hostName);
    await readVersions(host, cfg);
  }
  const { warnings, notes } = await knownCrashes(engine, req);
  if (warnings.length > 0 && !req.confirmed) throw knownCrashRefusal(knownCrashText(req, warnings, notes));
  const port = req.port ?? profile.port;
  for (const h of hosts) {
    const c = engine.attempts.conflict(h, port, profile.gpus ?? [], req.groupKey);
    if (c && (!c.holder || c.holder.id !== replacing)) throw c.error;
  }
}
