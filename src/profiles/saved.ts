// Profiles as the bot finds them by name: the package's profiles/ and the variants saved under the data dir's
// variants/ (by `next`, `launch --set`, autopilot). Each saved variant is a profile file, validated like one.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { LoadedConfig } from '../config/load.ts';
import { buildProfiles, type ProfileSet, type ProfileSource } from './load.ts';
import type { ResolvedProfile } from './resolve.ts';
import { buildVariant, type Overrides, readProfileSources, variantName, variantText } from './variant.ts';

/** Where profiles come from: the loaded config's directories and the package's profile set. */
export interface ProfilePlaces {
  loaded: Pick<LoadedConfig, 'dataDir' | 'profilesDir'>;
  profiles: ProfileSet;
}

export function variantsDir(engine: Pick<ProfilePlaces, 'loaded'>): string {
  return join(engine.loaded.dataDir, 'variants');
}

/** The package's profiles plus the saved variants on `name`'s extends chain (only those: one bad file stays local). */
function sourcesFor(engine: ProfilePlaces, name: string): ProfileSource[] {
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
export function resolveProfileName(engine: ProfilePlaces, name: string): ResolvedProfile {
  if (engine.profiles.has(name)) return engine.profiles.get(name);
  const sources = sourcesFor(engine, name);
  const own = sources.find((s) => s.name === name);
  if (!own) return engine.profiles.get(name); // throws "unknown profile" with did-you-mean
  return buildProfiles(sources, own.label).get(name);
}

/** Writes a variant's file (same name, same content: names are derived from base and changes). */
export function saveVariant(engine: ProfilePlaces, base: string, overrides: Overrides, description?: string): string {
  const name = variantName(base, overrides);
  const dir = variantsDir(engine);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.yaml`), variantText({ base, overrides, name, description }));
  return name;
}

/** Builds (validates) a variant of `base` without saving it. */
export function previewVariant(
  engine: ProfilePlaces,
  base: string,
  overrides: Overrides,
  label: string,
): ResolvedProfile {
  return buildVariant(sourcesFor(engine, base), { base, overrides }, { label });
}

/** The text of a saved variant's file, for showing. */
export function variantFileText(engine: Pick<ProfilePlaces, 'loaded'>, name: string): string | undefined {
  try {
    return readFileSync(join(variantsDir(engine), `${name}.yaml`), 'utf8');
  } catch {
    return undefined;
  }
}
