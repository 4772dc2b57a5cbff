// Part src/advice: owns `next`: the configurations to try after a crash, from the catalog's rules and the ledger, and
//   what `launch next:N` means.
// May import: access, errors.ts, ledger, lifecycle, logs, profiles, reports.
//
// `next`: from the last crash's class, the attempts already made and the profile's flags, the next configurations to
// try. Each suggestion is a variant of the profile (a few changed fields) with the reason from the catalog rule that
// produced it; a variant whose resolved flags equal an attempt in the ledger is never suggested.
import { ConfigError, UserError } from '../errors.ts';
import type { Attempt } from '../ledger/attempts.ts';
import type { Engine } from '../lifecycle/engine.ts';
import type { AdviceRule } from '../logs/classify/schema.ts';
import { flagView, isDsaModel, type ResolvedProfile } from '../profiles/index.ts';
import { type ProfilePlaces, previewVariant, resolveProfileName } from '../profiles/saved.ts';
import type { Overrides } from '../profiles/variant.ts';
import { isFailing } from '../reports/draft.ts';
import { crashKeyOf } from '../reports/upstream.ts';
import { loadRuleSets, rulesFor } from './rules.ts';

export interface Suggestion {
  /** The profile the variant extends. */
  base: string;
  overrides: Overrides;
  /** The variant, resolved and checked like a profile file. */
  profile: ResolvedProfile;
  reason: string;
  ref?: string;
  signatureId: string;
  /** A profile in profiles/ with exactly these settings: launch that instead of a generated variant. */
  existing?: string;
}

export interface Skipped {
  overrides: Overrides;
  why: string;
  signatureId: string;
}

export interface Advice {
  base: ResolvedProfile;
  crash: { attemptId: number; profile: string; category: string; phase: string; signatureId?: string };
  /** `sm120`, from the environment captured for the crashed attempt; undefined when none was captured. */
  arch?: string;
  suggestions: Suggestion[];
  skipped: Skipped[];
}

/** Two configurations are the same when every shown setting is; the port only says where it listened. */
export function sameConfiguration(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  keys.delete('port');
  for (const k of keys) if (a[k] !== b[k]) return false;
  return true;
}

function phaseOf(a: Attempt): string {
  return (a.classification as { phase?: string } | null)?.phase ?? 'unknown';
}

/** The crash the advice answers, and the profile it starts from. */
/** What advice touches: the profiles (and saved variants), the ledger's attempts and environments, the signatures. */
export type AdviceContext = ProfilePlaces & Pick<Engine, 'attempts' | 'ledger' | 'loaded'>;

function pickCrash(engine: AdviceContext, profile?: string): { crash: Attempt; baseName: string } {
  // Newest first, stopping at the first that fits: the ledger's size does not matter.
  const model = profile ? resolveProfileName(engine, profile).model_path : undefined;
  const fits = (a: Attempt) =>
    isFailing(a) &&
    crashKeyOf(a.classification) &&
    (!profile || a.profile === profile || a.flags['model-path'] === model);
  let own: Attempt | undefined;
  let sameModel: Attempt | undefined;
  for (const a of engine.attempts.failingNewestFirst()) {
    if (!fits(a)) continue;
    if (!profile || a.profile === profile) {
      own = a;
      break;
    }
    sameModel ??= a;
  }
  if (!profile) {
    const crash = own;
    if (!crash)
      throw new UserError('no crash in the ledger to advise on', 'launch a profile first; next works from its crash');
    return { crash, baseName: crash.profile };
  }
  if (own) return { crash: own, baseName: profile };
  // No crash of this profile yet: the newest crash of the same model says what goes wrong with it.
  if (!sameModel) {
    throw new UserError(`no crash recorded for ${profile} or its model`, `launch it first: launch ${profile}`);
  }
  return { crash: sameModel, baseName: profile };
}

function whenMatches(
  rule: AdviceRule,
  ctx: { arch?: string; dsa: boolean; phase: string; flags: Record<string, string> },
): boolean {
  const w = rule.when;
  if (!w) return true;
  // An unknown architecture does not rule a rule out: the reason names the architecture it is for.
  if (w.arch && ctx.arch && !w.arch.map((a) => a.toLowerCase()).includes(ctx.arch.toLowerCase())) return false;
  if (w.dsa !== undefined && w.dsa !== ctx.dsa) return false;
  if (w.phase && !w.phase.includes(ctx.phase as (typeof w.phase)[number])) return false;
  for (const [key, want] of Object.entries(w.flags ?? {})) {
    const have = ctx.flags[key];
    const wants = Array.isArray(want) ? want : [want];
    const neg = wants.filter((v) => v.startsWith('!')).map((v) => v.slice(1));
    const pos = wants.filter((v) => !v.startsWith('!'));
    if (neg.length && have !== undefined && neg.includes(have)) return false;
    if (pos.length && (have === undefined || !pos.includes(have))) return false;
  }
  return true;
}

/** Env values are text in a profile; a YAML rule may have written a number. */
function normalise(set: Record<string, unknown>): Overrides {
  const out: Overrides = { ...set };
  if (out.env && typeof out.env === 'object') {
    out.env = Object.fromEntries(Object.entries(out.env as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
  }
  return out;
}

/** The changes a rule proposes, in the order to try them. */
function candidates(rule: AdviceRule, base: ResolvedProfile): Overrides[] {
  const fixed = normalise(rule.set ?? {});
  const steps: Overrides[] = [];
  for (const [dir, spec] of [
    ['lower', rule.lower],
    ['raise', rule.raise],
  ] as const) {
    for (const [field, values] of Object.entries(spec ?? {})) {
      const cur = (base as unknown as Record<string, unknown>)[field];
      for (const v of values) {
        // Unset means SGLang picks: any candidate may be a change, and the ledger check sorts out the rest.
        const ok = typeof cur !== 'number' || (dir === 'lower' ? v < cur : v > cur);
        if (ok) steps.push({ ...fixed, [field]: v });
      }
    }
  }
  return steps.length ? steps : rule.set ? [fixed] : [];
}

export function advise(engine: AdviceContext, opts: { profile?: string; limit?: number } = {}): Advice {
  const { crash, baseName } = pickCrash(engine, opts.profile);
  const base = resolveProfileName(engine, baseName);
  const key = crashKeyOf(crash.classification)!;
  const env = engine.ledger.environments.forAttempt(crash);
  return adviseFor(
    engine,
    base,
    { attemptId: crash.id, profile: crash.profile, phase: phaseOf(crash), ...key },
    { arch: env?.facts.arch, limit: opts.limit },
  );
}

/**
 * The suggestions for one crash of `base` (from the ledger, or known from the hardware catalog without a launch:
 * attemptId 0), never a configuration in `attempts` (default: every attempt in the ledger).
 */
export function adviseFor(
  engine: AdviceContext,
  base: ResolvedProfile,
  crash: Advice['crash'],
  opts: { arch?: string; limit?: number; attempts?: Attempt[] } = {},
): Advice {
  // Whether a configuration was already tried: only attempts of its model can be the same configuration, so the
  // ledger is read by model (an index lookup), not whole.
  const ofModel = new Map<string, Attempt[]>();
  const triedAs = (flags: Record<string, string>) => {
    if (opts.attempts) return opts.attempts.find((a) => sameConfiguration(a.flags, flags));
    const m = flags['model-path'] ?? '';
    if (!ofModel.has(m)) ofModel.set(m, engine.attempts.ofModel(m));
    return ofModel.get(m)!.find((a) => sameConfiguration(a.flags, flags));
  };
  const key = { category: crash.category, ...(crash.signatureId ? { signatureId: crash.signatureId } : {}) };
  const arch = opts.arch;
  const baseFlags = flagView(base);
  const ctx = { arch, dsa: isDsaModel(base.model_path), phase: crash.phase, flags: baseFlags };
  const sets = loadRuleSets(engine.loaded.config.signatures);
  const limit = opts.limit ?? 5;
  const shipped = engine.profiles.names().map((n) => ({ name: n, flags: flagView(engine.profiles.get(n)) }));
  const suggestions: Suggestion[] = [];
  const skipped: Skipped[] = [];
  for (const { signatureId, rule } of rulesFor(sets, key)) {
    if (suggestions.length >= limit) break;
    if (!whenMatches(rule, ctx)) continue;
    for (const overrides of candidates(rule, base)) {
      let variant: ResolvedProfile;
      try {
        variant = previewVariant(engine, base.name, overrides, `advice rule of ${signatureId}`);
      } catch (e) {
        if (!(e instanceof ConfigError || e instanceof UserError)) throw e;
        skipped.push({
          overrides,
          signatureId,
          why: `not a valid profile change: ${e.message.split('\n').slice(1).join(' ').trim() || e.message}`,
        });
        break;
      }
      const flags = flagView(variant);
      if (sameConfiguration(flags, baseFlags)) continue; // changes nothing here
      const tried = triedAs(flags);
      if (tried) {
        skipped.push({ overrides, signatureId, why: `already tried as attempt #${tried.id} (${tried.profile})` });
        continue;
      }
      if (suggestions.some((s) => sameConfiguration(flagView(s.profile), flags))) continue;
      const existing = shipped.find((p) => sameConfiguration(p.flags, flags))?.name;
      suggestions.push({
        base: base.name,
        overrides,
        profile: existing ? engine.profiles.get(existing) : variant,
        reason: rule.reason,
        ...(rule.ref ? { ref: rule.ref } : {}),
        signatureId,
        ...(existing ? { existing } : {}),
      });
      break;
    }
  }
  return {
    base,
    crash,
    ...(arch ? { arch } : {}),
    suggestions,
    skipped,
  };
}
