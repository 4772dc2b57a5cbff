// What an operator may change in a launch. Profile files (profiles_dir) are written by whoever controls the repo,
// so they are trusted as they are; what comes from chat (`--set`, a `next:N` suggestion, a saved variant, a bisect
// step) is not: beyond its profile file, an operator may set only the allow-listed environment variables and SGLang
// flags (access.operator_may_set), and never change which model or code runs. Anything else needs an admin. The
// terminal's local user and the scheduler's jobs (from the config) act as admin.

import type { LoadedConfig } from '../config/load.ts';
import { DEFAULT_OPERATOR_ARGS, DEFAULT_OPERATOR_ENV } from '../config/operator.ts';
import { NotAllowedError } from '../errors.ts';
import { matchesPatternList } from '../glob.ts';
import type { ProfileSet, ResolvedProfile } from '../profiles/index.ts';
import type { Role } from './roles.ts';

/** The typed fields that pick which model (and so which code, with trust_remote_code) runs. */
const CODE_FIELDS = ['model_path', 'trust_remote_code'] as const;

export interface OperatorLimits {
  env: readonly string[];
  extra_args: readonly string[];
}

/** One `--flag` with the values after it, as SGLang's argparse groups them; the unit an allow-list decides. */
function argUnits(args: readonly string[]): { flag: string; text: string }[] {
  const units: { flag: string; text: string }[] = [];
  for (const a of args) {
    const last = units.at(-1);
    if (a.startsWith('--') || !last) units.push({ flag: a.split('=', 1)[0]!, text: a });
    else last.text += `\0${a}`;
  }
  return units;
}

/**
 * What in `p` an operator may not set: each env variable, flag or field that differs from `trusted` (the nearest
 * profile file on its extends chain; none: everything counts) and is not allow-listed. Names only, never values.
 */
export function adminOnlyChanges(
  p: Pick<ResolvedProfile, 'env' | 'extra_args' | 'model_path' | 'trust_remote_code'>,
  trusted: Pick<ResolvedProfile, 'env' | 'extra_args' | 'model_path' | 'trust_remote_code'> | undefined,
  limits: OperatorLimits,
): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(p.env)) {
    if (trusted?.env[name] === value) continue;
    if (!matchesPatternList(limits.env, name)) out.push(`env.${name}`);
  }
  const kept = new Set(argUnits(trusted?.extra_args ?? []).map((u) => u.text));
  for (const u of argUnits(p.extra_args)) {
    if (kept.has(u.text)) continue;
    if (!matchesPatternList(limits.extra_args, u.flag) && !out.includes(`extra_args ${u.flag}`))
      out.push(`extra_args ${u.flag}`);
  }
  for (const f of CODE_FIELDS) {
    if ((p[f] ?? false) !== (trusted?.[f] ?? false)) out.push(f);
  }
  return out;
}

/**
 * Refuses a launch (or the variant behind it) that makes a change only an admin may make; one check for every face
 * and every way a profile reaches a launch. Throws NotAllowedError naming what and who may set it.
 */
export function assertMayLaunch(
  engine: { profiles: ProfileSet; loaded: Pick<LoadedConfig, 'config'> },
  p: ResolvedProfile,
  role: Role,
): void {
  if (role === 'admin') return;
  const { profiles } = engine;
  const limits = engine.loaded.config.access?.operator_may_set ?? {
    env: DEFAULT_OPERATOR_ENV,
    extra_args: DEFAULT_OPERATOR_ARGS,
  };
  const trustedName = p.chain.find((n) => profiles.has(n));
  const trusted = trustedName ? profiles.get(trustedName) : undefined;
  const changes = adminOnlyChanges(p, trusted, limits);
  if (changes.length === 0) return;
  const base = trustedName ? `the profile file ${trustedName}` : 'any profile file';
  throw new NotAllowedError(
    `${changes.join(', ')}: only an admin may set ${changes.length === 1 ? 'this' : 'these'} (you are ${role === 'operator' ? 'an' : 'a'} ${role}); beyond what ${base} sets, an operator may set environment variables matching access.operator_may_set.env and SGLang flags in access.operator_may_set.extra_args, and never model_path or trust_remote_code`,
    'ask an admin to launch it, to put the setting into a profile file, or to allow it in access.operator_may_set',
  );
}
