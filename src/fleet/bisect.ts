// Part src/fleet: owns operations over several attempts: flag bisection.
// May import: access, errors.ts, lifecycle, logs, profiles.
//
// Flag bisection: between a profile that serves and one that crashes, launch GOOD with half of the differing
// settings taken from BAD, keep the half that still crashes, and repeat, until one setting is left: the smallest
// change that turns success into the crash. Each step is a real attempt in the ledger (grouped in one chat thread),
// stopped before the next. Assumes one setting is to blame; when the last one alone does not crash, it says so.

import type { Role } from '../access/roles.ts';
import { UserError } from '../errors.ts';
import type { Engine } from '../lifecycle/engine.ts';
import { launch } from '../lifecycle/launch.ts';
import { planGpus } from '../lifecycle/leases.ts';
import { stop } from '../lifecycle/stop.ts';
import type { DiagnoserFactory } from '../logs/diagnosis.ts';
import { diffProfiles, type ResolvedProfile } from '../profiles/index.ts';
import { previewVariant } from '../profiles/saved.ts';
import type { Overrides } from '../profiles/variant.ts';

export interface BisectStep {
  attemptId: number | null;
  /** Settings taken from BAD in this step. */
  applied: string[];
  verdict: 'good' | 'bad';
  outcome: string;
}

export interface BisectResult {
  culprit: string[];
  /** true when the culprit alone was seen to crash (not only inferred). */
  confirmed: boolean;
  steps: BisectStep[];
  /** Differences a variant cannot express (a value BAD unsets), left at GOOD's value. */
  skipped: string[];
  cancelled: boolean;
  groupKey: string;
}

export interface BisectRequest {
  good: ResolvedProfile;
  bad: ResolvedProfile;
  hostName: string;
  actor: string;
  origin: string;
  /** The asker's role, for each step's launch (src/access/operator.ts). */
  role: Role;
  port?: number;
  signal?: AbortSignal;
  say: (text: string) => void;
  diagnoser: DiagnoserFactory;
  /** Steps in this group's thread instead of a new one (an autopilot run's), on these GPUs. */
  groupKey?: string;
  gpus?: number[];
}

/** The differing settings as overrides that move GOOD towards BAD, one unit each. */
export function bisectUnits(
  good: ResolvedProfile,
  bad: ResolvedProfile,
): { units: Map<string, Overrides>; skipped: string[] } {
  const units = new Map<string, Overrides>();
  const skipped: string[] = [];
  const b = bad as unknown as Record<string, unknown>;
  for (const d of diffProfiles(good, bad)) {
    if (d.field === 'port' || d.field === 'host_bind') continue; // where it listens, not how it runs
    if (d.field.startsWith('env.')) {
      const name = d.field.slice(4);
      const value = bad.env[name];
      if (value === undefined) skipped.push(d.field);
      else units.set(d.field, { env: { [name]: value } });
      continue;
    }
    if (d.field === 'extra_args') {
      skipped.push(d.field); // a variant appends to its base's extra_args: it cannot replace them
      continue;
    }
    const value = b[d.field] ?? d.b;
    if (value === undefined) skipped.push(d.field);
    else units.set(d.field, { [d.field]: value });
  }
  return { units, skipped };
}

function merge(units: Map<string, Overrides>, names: string[]): Overrides {
  const out: Overrides = {};
  for (const n of names) {
    const o = units.get(n)!;
    for (const [k, v] of Object.entries(o)) {
      out[k] =
        k === 'env' ? { ...(out.env as Record<string, string> | undefined), ...(v as Record<string, string>) } : v;
    }
  }
  return out;
}

export async function bisect(engine: Engine, req: BisectRequest): Promise<BisectResult> {
  // GPU leases apply to every step as to any launch; asked once up front, so a bisection that cannot start says who
  // holds its GPUs before it opens a thread.
  for (const p of [req.good, req.bad])
    await planGpus(engine, req.hostName, p.gpus?.length ?? p.tp ?? 1, req.gpus ?? p.gpus, { groupKey: req.groupKey });
  const { units, skipped } = bisectUnits(req.good, req.bad);
  if (units.size === 0)
    throw new UserError(`${req.good.name} and ${req.bad.name} launch the same server`, 'pick two profiles that differ');
  const groupKey = req.groupKey ?? `bisect:${engine.clock.now()}:${req.good.name}..${req.bad.name}`;
  if (!req.groupKey)
    engine.notifier?.openGroup(
      groupKey,
      `bisecting ${req.good.name} (good) .. ${req.bad.name} (bad) on ${req.hostName} by ${req.actor}: ${units.size} settings differ`,
    );
  const steps: BisectStep[] = [];
  let candidates = [...units.keys()];
  req.say(
    `bisecting ${units.size} settings: ${candidates.join(', ')}${skipped.length ? ` (cannot vary on their own: ${skipped.join(', ')})` : ''}`,
  );

  const tryApplying = async (names: string[]): Promise<'good' | 'bad' | 'cancelled'> => {
    if (req.signal?.aborted) return 'cancelled';
    const overrides = merge(units, names);
    const profile = previewVariant(engine, req.good.name, overrides, 'bisect');
    const r = await launch(
      engine,
      {
        profile,
        hostName: req.hostName,
        actor: req.actor,
        origin: req.origin,
        role: req.role,
        port: req.port,
        groupKey,
        confirmed: true,
        ...(req.gpus ? { gpus: req.gpus } : {}),
      },
      () => {},
      req.diagnoser,
    );
    // The bot closed mid-step: no verdict (the attempt is left for the next bot, as any follower's).
    if (r.outcome === 'interrupted') return 'cancelled';
    const verdict = r.outcome === 'ready' ? 'good' : 'bad';
    const outcome = r.outcome === 'ready' ? 'ready' : (r.diagnosis?.category ?? r.outcome);
    steps.push({ attemptId: r.attempt?.id ?? null, applied: names, verdict, outcome });
    req.say(
      `step ${steps.length}: attempt #${r.attempt?.id} with ${names.join(', ')} from ${req.bad.name}: ${verdict.toUpperCase()} (${outcome})`,
    );
    // The next step needs the same GPUs: whatever this one left running goes first.
    if (r.attempt && engine.attempts.get(r.attempt.id)?.active)
      await stop(engine, req.hostName, req.actor, r.attempt.id);
    return verdict;
  };

  let cancelled = false;
  while (candidates.length > 1) {
    const half = candidates.slice(0, Math.ceil(candidates.length / 2));
    const v = await tryApplying(half);
    if (v === 'cancelled') {
      cancelled = true;
      break;
    }
    candidates = v === 'bad' ? half : candidates.slice(half.length);
  }
  // The last candidate was inferred unless a step applied exactly it.
  let confirmed = steps.some((s) => s.verdict === 'bad' && s.applied.length === 1 && s.applied[0] === candidates[0]);
  if (!cancelled && !confirmed && candidates.length === 1) {
    const v = await tryApplying(candidates);
    if (v === 'cancelled') cancelled = true;
    else confirmed = v === 'bad';
  }
  return { culprit: candidates, confirmed, steps, skipped, cancelled, groupKey };
}
