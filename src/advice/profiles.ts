// What `launch` (and `next`) accept as a profile: a name from profiles/, a variant generated earlier (a file under
// the data dir's variants/), `next:N` (suggestion N of the newest `next` run), each optionally with `--set` changes.
// Variants are validated exactly like profile files: they are profile files (src/profiles/variant.ts); saved ones
// are found by src/profiles/saved.ts.
import { join } from 'node:path';
import { assertMayLaunch } from '../access/operator.ts';
import type { Role } from '../access/roles.ts';
import { UserError } from '../errors.ts';
import type { Engine } from '../lifecycle/engine.ts';
import type { ResolvedProfile } from '../profiles/index.ts';
import { previewVariant, resolveProfileName, saveVariant, variantsDir } from '../profiles/saved.ts';
import { parseSetPairs } from '../profiles/variant.ts';

/**
 * What `launch PROFILE [--set ...]` runs: `next:N`, a profile or a saved variant, with `--set` changes validated as
 * profile fields. A variant with changes is saved under the data dir, so its name means the same thing later.
 */
export function resolveLaunchProfile(
  engine: Pick<Engine, 'ledger' | 'loaded' | 'profiles'>,
  spec: string,
  set: string | readonly string[] | undefined,
  role: Role,
): ResolvedProfile {
  let name = spec;
  const next = spec.match(/^next:(\d+)$/);
  if (next) {
    const s = engine.ledger.suggestions.latest(Number(next[1]));
    if (!s) throw new UserError(`no suggestion ${spec}`, 'run next first; it numbers the suggestions it shows');
    name = s.profile;
  }
  const overrides = set === undefined || set.length === 0 ? undefined : parseSetPairs(set);
  if (!overrides || Object.keys(overrides).length === 0) return resolveProfileName(engine, name);
  resolveProfileName(engine, name); // the base must resolve on its own first
  const resolved = previewVariant(engine, name, overrides, '--set');
  // Checked again at launch; here so a refused change leaves no variant file behind.
  assertMayLaunch(engine, resolved, role);
  saveVariant(engine, name, overrides);
  return resolvedWithFile(engine, resolved);
}

function resolvedWithFile(engine: Pick<Engine, 'loaded'>, p: ResolvedProfile): ResolvedProfile {
  return Object.freeze({ ...p, file: join(variantsDir(engine), `${p.name}.yaml`) });
}
