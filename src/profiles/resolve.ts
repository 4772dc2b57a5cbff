// Merging a profile over the one it extends. Scalars: the child wins. env: merged, the child's names win.
// extra_args: the parent's, then the child's (argparse keeps the last value, so a child can still override one).
// description is not inherited: a variant's description should say what the variant is.
import type { SlurmJob } from '../config/slurm.ts';
import type { LaunchFields } from './fields.ts';
import type { RawProfile } from './schema.ts';

export interface ResolvedProfile extends LaunchFields {
  name: string;
  description?: string;
  /** This profile first, then the profile it extends, and so on to the root. */
  chain: string[];
  /** Absolute path of the profile's file. */
  file: string;
  /** Smoke-test settings, validated by the smoke part. */
  smoke?: unknown;
  /** Where `launch` runs it without --host: a host or a host group. */
  host?: string;
  /** On a Slurm cluster: this profile's job options over the cluster's. */
  slurm?: SlurmJob;
}

export type Layer = Partial<LaunchFields> & { smoke?: unknown; host?: string; slurm?: SlurmJob };

export const DEFAULTS = { port: 30000, host_bind: '127.0.0.1', cuda_graph: true } as const;

/** One file's settings under the canonical names (dsa_* -> nsa_*), without bookkeeping keys. */
export function toLayer(raw: RawProfile): Layer {
  const {
    description: _description,
    extends: _extends,
    dsa_prefill_backend,
    dsa_decode_backend,
    nsa_prefill_backend,
    nsa_decode_backend,
    ...rest
  } = raw;
  const layer: Layer = { ...rest };
  const prefill = nsa_prefill_backend ?? dsa_prefill_backend;
  const decode = nsa_decode_backend ?? dsa_decode_backend;
  if (prefill !== undefined) layer.nsa_prefill_backend = prefill;
  if (decode !== undefined) layer.nsa_decode_backend = decode;
  return layer;
}

export function mergeLayers(parent: Layer, child: Layer): Layer {
  const merged: Layer = { ...parent };
  for (const [k, v] of Object.entries(child)) {
    if (v !== undefined) (merged as Record<string, unknown>)[k] = v;
  }
  if (parent.env || child.env) merged.env = { ...parent.env, ...child.env };
  if (parent.slurm || child.slurm) {
    const sbatch = [...(parent.slurm?.sbatch ?? []), ...(child.slurm?.sbatch ?? [])];
    merged.slurm = { ...parent.slurm, ...child.slurm, ...(sbatch.length ? { sbatch } : {}) };
  }
  if (parent.extra_args || child.extra_args)
    merged.extra_args = [...(parent.extra_args ?? []), ...(child.extra_args ?? [])];
  return merged;
}

/** Applies defaults; the caller has checked that model_path is set. */
export function finish(layer: Layer, meta: { name: string; description?: string; chain: string[]; file: string }) {
  const p: ResolvedProfile = {
    ...layer,
    model_path: layer.model_path!,
    port: layer.port ?? DEFAULTS.port,
    host_bind: layer.host_bind ?? DEFAULTS.host_bind,
    cuda_graph: layer.cuda_graph ?? DEFAULTS.cuda_graph,
    env: Object.freeze({ ...layer.env }) as Record<string, string>,
    extra_args: Object.freeze([...(layer.extra_args ?? [])]) as string[],
    ...meta,
  };
  if (p.gpus) p.gpus = Object.freeze([...p.gpus]) as number[];
  if (p.description === undefined) delete p.description;
  // Profiles are shared by every caller of ProfileSet.get; freezing stops one caller's edit leaking into another's.
  return Object.freeze(p);
}
