// Hardware-aware launches: a host's GPUs say its architecture (compute capability 12.0 = sm120); the hardware catalog
// (catalog/hardware.yaml) and the ledger say which flag combinations crashed there. A launch that matches either is
// held back with the evidence until a person confirms it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../errors.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { flagView, isDsaModel, type ResolvedProfile } from '../profiles/index.ts';

const KnownBad = z
  .object({
    id: z.string().min(1),
    arch: z.string().regex(/^(sm\d+|any)$/),
    model: z.enum(['dsa', 'any']).default('any'),
    when: z.record(z.string(), z.array(z.string()).min(1)),
    outcome: z.string(),
    why: z.string(),
    upstream: z.array(z.string().url()).default([]),
  })
  .strict();
const HardwareCatalog = z.object({ version: z.literal(1), known_bad: z.array(KnownBad) }).strict();
export type KnownBadEntry = z.infer<typeof KnownBad>;

export const HARDWARE_CATALOG = join(PACKAGE_ROOT, 'catalog', 'hardware.yaml');

export function loadHardwareCatalog(file = HARDWARE_CATALOG): KnownBadEntry[] {
  const parsed = HardwareCatalog.safeParse(parse(readFileSync(file, 'utf8')));
  if (!parsed.success) {
    throw new ConfigError(
      file,
      parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    );
  }
  return parsed.data.known_bad;
}

/** `12.0` -> `sm120`; unknown -> undefined. */
export function archOf(computeCap: string | undefined): string | undefined {
  const m = computeCap?.match(/^(\d+)\.(\d+)$/);
  return m ? `sm${m[1]}${m[2]}` : undefined;
}

export interface HardwareWarning {
  text: string;
  evidence: string[];
  /** The crash class it is known to end in (the catalog's outcome, or the attempt's). */
  outcome?: string;
}

function configuration(flags: Record<string, string>): Record<string, string> {
  const { port: _port, ...rest } = flags;
  return rest;
}

/**
 * What could not be checked when the host's GPU architecture is unknown (no nvidia-smi, or it failed): the catalog's
 * entries for a specific architecture are skipped, so say so, naming those this configuration would match.
 */
export function uncheckedArchNote(
  profile: ResolvedProfile,
  hostName: string,
  why: string,
  catalog: KnownBadEntry[],
): string {
  const flags = flagView(profile);
  const dsa = isDsaModel(profile.model_path);
  const specific = catalog.filter((k) => k.arch !== 'any');
  const archs = [...new Set(specific.map((k) => k.arch))].join(', ');
  const wouldMatch = specific.filter(
    (k) =>
      !(k.model === 'dsa' && !dsa) &&
      Object.entries(k.when).every(([flag, values]) => values.includes(flags[flag] ?? 'auto')),
  );
  const base = `the GPU architecture of ${hostName} is unknown (${why}): the hardware catalog's ${archs} checks (${specific.length} known crashes) did not run`;
  if (wouldMatch.length === 0) return `${base}; the ledger's check of past crashes on this host did`;
  const named = wouldMatch
    .map(
      (k) =>
        `${Object.keys(k.when)
          .map((f) => `${f} ${flags[f] ?? 'auto'}`)
          .join(' with ')} crashes on ${k.arch} (${k.outcome})`,
    )
    .join('; ');
  return `${base}, and this configuration matches: ${named}; check the host's GPUs before trusting this launch`;
}

export function hardwareWarnings(
  profile: ResolvedProfile,
  arch: string | undefined,
  catalog: KnownBadEntry[],
  pastOnHost: Attempt[],
): HardwareWarning[] {
  const out: HardwareWarning[] = [];
  const flags = flagView(profile);
  const dsa = isDsaModel(profile.model_path);
  for (const k of catalog) {
    if (k.arch !== 'any' && k.arch !== arch) continue;
    if (k.model === 'dsa' && !dsa) continue;
    const matches = Object.entries(k.when).every(([flag, values]) => values.includes(flags[flag] ?? 'auto'));
    if (!matches) continue;
    out.push({
      text: `${Object.keys(k.when)
        .map((f) => `${f} ${flags[f] ?? 'auto'}`)
        .join(' with ')} is known to crash${k.arch === 'any' ? '' : ` on ${k.arch}`} (${k.outcome}): ${k.why}`,
      evidence: k.upstream,
      outcome: k.outcome,
    });
  }
  // The ledger: this very configuration already crashed on this host.
  const mine = JSON.stringify(configuration(flags));
  const crashed = pastOnHost.filter((a) => a.status === 'crashed' && JSON.stringify(configuration(a.flags)) === mine);
  if (crashed.length > 0) {
    const cls = crashed.map((a) => `#${a.id} ${a.outcome ?? 'crashed'}`).join(', ');
    out.push({
      text: `this exact configuration already crashed on this host: attempt ${cls}`,
      evidence: [],
      ...(crashed[0]!.outcome ? { outcome: crashed[0]!.outcome } : {}),
    });
  }
  return out;
}
