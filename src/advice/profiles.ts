// What `launch` (and `next`) accept as a profile: a name from profiles/, a variant generated earlier (a file under
// the data dir's variants/), `next:N` (suggestion N of the newest `next` run), each optionally with `--set` changes.
// Variants are validated exactly like profile files: they are profile files (src/profiles/variant.ts).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { assertMayLaunch } from '../access/operator.ts';
import { UserError } from '../errors.ts';
import type { Engine } from '../lifecycle/engine.ts';
import { buildProfiles, type ProfileSource, type ResolvedProfile } from '../profiles/index.ts';
import {
  buildVariant,
  type Overrides,
  parseSetPairs,
  readProfileSources,
  variantName,
  variantText,
} from '../profiles/variant.ts';
import type { Role } from '../runtime/define.ts';
import { suggestionStore } from './store.ts';

export function variantsDir(engine: Engine): string {
  return join(engine.loaded.dataDir, 'variants');
}

/** The package's profiles plus the saved variants on `name`'s extends chain (only those: one bad file stays local). */
function sourcesFor(engine: Engine, name: string): ProfileSource[] {
  const base = readProfileSources(engine.loaded.profilesDir, 'profiles');
  const known = new Set(base.map((s) => s.name));
  const variants = new Map(readProfileSources(variantsDir(engine), 'variants').map((s) => [s.name, s]));
  const chain: ProfileSource[] = [];
  let cur: string | undefined = name;
  while (cur !== undefined && !known.has(cur) && !chain.some((s) => s.name === cur)) {
    const v = variants.get(cur);
    if (!v) break;
    chain.push(v);
    let doc: unknown;
    try {
      doc = parseYaml(v.text);
    } catch {
      break; // buildProfiles reports the YAML problem with its line
    }
    const ext = (doc as { extends?: unknown } | null)?.extends;
    cur = typeof ext === 'string' ? ext : undefined;
  }
  return [...base, ...chain];
}

/** A profile from profiles/ or a saved variant, resolved and checked. */
export function resolveProfileName(engine: Engine, name: string): ResolvedProfile {
  if (engine.profiles.has(name)) return engine.profiles.get(name);
  const sources = sourcesFor(engine, name);
  const own = sources.find((s) => s.name === name);
  if (!own) return engine.profiles.get(name); // throws "unknown profile" with did-you-mean
  return buildProfiles(sources, own.label).get(name);
}

/** Writes a variant's file (same name, same content: names are derived from base and changes). */
export function saveVariant(engine: Engine, base: string, overrides: Overrides, description?: string): string {
  const name = variantName(base, overrides);
  const dir = variantsDir(engine);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.yaml`), variantText({ base, overrides, name, description }));
  return name;
}

/** Builds (validates) a variant of `base` without saving it. */
export function previewVariant(engine: Engine, base: string, overrides: Overrides, label: string): ResolvedProfile {
  return buildVariant(sourcesFor(engine, base), { base, overrides }, { label });
}

/**
 * What `launch PROFILE [--set ...]` runs: `next:N`, a profile or a saved variant, with `--set` changes validated as
 * profile fields. A variant with changes is saved under the data dir, so its name means the same thing later.
 */
export function resolveLaunchProfile(
  engine: Engine,
  spec: string,
  set: string | readonly string[] | undefined,
  role: Role,
): ResolvedProfile {
  let name = spec;
  const next = spec.match(/^next:(\d+)$/);
  if (next) {
    const s = suggestionStore(engine).latest(Number(next[1]));
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

function resolvedWithFile(engine: Engine, p: ResolvedProfile): ResolvedProfile {
  return Object.freeze({ ...p, file: join(variantsDir(engine), `${p.name}.yaml`) });
}

/** The text of a saved variant's file, for showing. */
export function variantFileText(engine: Engine, name: string): string | undefined {
  try {
    return readFileSync(join(variantsDir(engine), `${name}.yaml`), 'utf8');
  } catch {
    return undefined;
  }
}
