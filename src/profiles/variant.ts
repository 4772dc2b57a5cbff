// Profile variants: a profile plus a few changed fields (`launch glm5-attempt5 --set kv_cache_dtype=bfloat16`, a
// `next` suggestion). A variant is an ordinary profile file that `extends` its base, so it goes through exactly the
// same parsing, schema, inheritance and SGLang checks as the files in profiles/ (buildProfiles); only the label in
// its error messages differs.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { UserError } from '../errors.ts';
import { buildProfiles, type ProfileSource } from './load.ts';
import type { ResolvedProfile } from './resolve.ts';
import { PROFILE_NAME } from './schema.ts';
import { markSecrets } from './secrets.ts';

/** Field -> value, in profile field names; `env` is a mapping of variables to add or change. */
export type Overrides = Record<string, unknown>;

/** The *.yaml files of a folder as profile sources (no validation: buildProfiles does that). */
export function readProfileSources(dir: string, labelPrefix?: string): ProfileSource[] {
  const abs = resolve(dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({
      name: f.slice(0, -5),
      file: join(abs, f),
      label: `${labelPrefix ?? abs}/${f}`,
      text: readFileSync(join(abs, f), 'utf8'),
    }));
}

/**
 * `kv_cache_dtype=bfloat16,cuda_graph=false,env.NCCL_P2P_LEVEL=SYS` (one string, or several). Values are read as
 * YAML scalars, like a profile file would read them (`false`, `128`, `0.8`, `[0, 1]`); env values stay text.
 */
export function parseSetPairs(spec: string | readonly string[]): Overrides {
  const parts: string[] = [];
  for (const s of typeof spec === 'string' ? [spec] : spec) {
    let depth = 0;
    let cur = '';
    for (const c of s) {
      if (c === '[' || c === '{') depth++;
      if (c === ']' || c === '}') depth--;
      if (c === ',' && depth === 0) {
        parts.push(cur);
        cur = '';
      } else cur += c;
    }
    parts.push(cur);
  }
  const out: Overrides = {};
  for (const raw of parts.map((p) => p.trim()).filter(Boolean)) {
    const eq = raw.indexOf('=');
    if (eq <= 0) throw new UserError(`--set: '${raw}' is not field=value`, 'e.g. --set kv_cache_dtype=bfloat16');
    const key = raw.slice(0, eq).trim();
    const text = raw.slice(eq + 1).trim();
    if (key === 'extends' || key === 'description') {
      throw new UserError(`--set: '${key}' cannot be set on a variant`, 'name another profile to start from instead');
    }
    if (key.startsWith('env.')) {
      const env = (out.env ?? {}) as Record<string, string>;
      env[key.slice(4)] = text;
      out.env = env;
      continue;
    }
    // A line break is kept as it is, so the schema refuses it exactly as in a profile file (YAML would fold it into
    // a space and launch something nobody typed).
    let value: unknown = text;
    if (!/[\r\n]/.test(text)) {
      try {
        value = parseYaml(text);
      } catch {
        value = text;
      }
    }
    out[key] = value === null ? text : value;
  }
  return out;
}

/** The overrides with their secrets (env values, extra_args) replaced by the SECRET marker. */
export function markOverrides(o: Overrides): Overrides {
  const env = o.env && typeof o.env === 'object' ? (o.env as Record<string, string>) : undefined;
  const args = Array.isArray(o.extra_args) ? o.extra_args.map(String) : undefined;
  if (!env && !args) return o;
  const marked = markSecrets({ env, extra_args: args });
  return { ...o, ...(env ? { env: marked.env } : {}), ...(args ? { extra_args: marked.extra_args } : {}) };
}

function slug(v: unknown): string {
  const s = typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
  return s
    .toLowerCase()
    .replace(/[^a-z0-9.]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** A readable, deterministic name: `glm5-attempt5.kv-cache-dtype-bfloat16`; a hash when that would be too long. */
export function variantName(base: string, given: Overrides): string {
  // Named after the marked changes: a secret never becomes part of a name (lower-cased, no pattern would find it).
  const overrides = markOverrides(given);
  const pairs: string[] = [];
  for (const k of Object.keys(overrides).sort()) {
    const v = overrides[k];
    if (k === 'env' && v && typeof v === 'object') {
      for (const n of Object.keys(v).sort()) pairs.push(`env-${slug(n)}-${slug((v as Record<string, unknown>)[n])}`);
    } else pairs.push(`${slug(k)}-${slug(v)}`);
  }
  const readable = `${base}.${pairs.join('.')}`;
  if (readable.length <= 72 && PROFILE_NAME.test(readable)) return readable;
  const hash = createHash('sha1')
    .update(JSON.stringify([base, overrides, Object.keys(overrides).sort()]))
    .digest('hex');
  return `${base.slice(0, 48)}.v${hash.slice(0, 8)}`;
}

export interface VariantSpec {
  base: string;
  overrides: Overrides;
  name?: string;
  description?: string;
}

/** The variant as a profile file. */
export function variantText(given: VariantSpec & { name: string }, opts: { keepSecrets?: boolean } = {}): string {
  // A file keeps markers; the host keeps the values (src/profiles/secrets.ts). Only the in-memory build of the
  // variant a launch runs keeps them, so the launch can hand them to the host.
  const spec = opts.keepSecrets ? given : { ...given, overrides: markOverrides(given.overrides) };
  const doc = {
    description: spec.description ?? `${spec.base} with ${describeOverrides(spec.overrides)}`,
    extends: spec.base,
    ...spec.overrides,
  };
  return `# Generated by glm-ops: ${spec.name}. A profile like those in profiles/; copy it there to keep it.\n${stringify(doc)}`;
}

/** `kv_cache_dtype=bfloat16,env.X=1`: the --set form, which is also how a variant is shown. */
export function describeOverrides(given: Overrides): string {
  const overrides = markOverrides(given);
  const parts: string[] = [];
  for (const [k, v] of Object.entries(overrides)) {
    if (k === 'env' && v && typeof v === 'object') {
      for (const [n, x] of Object.entries(v)) parts.push(`env.${n}=${String(x)}`);
    } else parts.push(`${k}=${Array.isArray(v) ? `[${v.join(',')}]` : String(v)}`);
  }
  return parts.join(',');
}

/**
 * Resolves a variant against `sources` (the profiles it may extend). Problems are reported like a profile file's,
 * labelled `label` (`--set: tp: expected number, got the string 'eight'`); throws ConfigError.
 */
export function buildVariant(
  sources: readonly ProfileSource[],
  spec: VariantSpec,
  opts: { label?: string; file?: string } = {},
): ResolvedProfile {
  for (const k of ['extends', 'description']) {
    if (k in spec.overrides)
      throw new UserError(`a variant cannot change '${k}'`, 'name another profile to start from');
  }
  const name = spec.name ?? variantName(spec.base, spec.overrides);
  if (!sources.some((s) => s.name === spec.base)) {
    throw new UserError(`unknown profile '${spec.base}'`, 'list them with: profiles');
  }
  const label = opts.label ?? '--set';
  const own: ProfileSource = {
    name,
    file: opts.file ?? `(variant ${name})`,
    label,
    text: variantText({ ...spec, name }, { keepSecrets: true }),
  };
  const others = sources.filter((s) => s.name !== name);
  return buildProfiles([...others, own], label).get(name);
}
