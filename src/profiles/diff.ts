// What the attempts table shows: every launch-relevant setting as text, with SGLang's own choice shown as `auto`
// (or `on`/`off` for switches) when a profile leaves it unset, so "unset" and "explicitly auto" compare equal.
import { shArgv } from '../hosts/quote.ts';
import { FLAGS, type LaunchFields } from './fields.ts';

interface Entry {
  /** The profile field (`kv_cache_dtype`, `env.NCCL_P2P_LEVEL`, `gpus`, `extra_args`). */
  field: string;
  /** What it sets on the host: the CLI flag (SGLang <= 0.5.12 spelling) or the environment variable. */
  flag: string;
  /** Key in flagView. */
  key: string;
  value: string | undefined;
}

function entries(p: LaunchFields): Entry[] {
  const out: Entry[] = [];
  for (const spec of FLAGS) {
    const v = p[spec.field];
    let value: string | undefined;
    if (v === undefined) value = spec.unset;
    else if (spec.kind === 'value') value = String(v);
    else value = v ? 'on' : 'off';
    out.push({ field: spec.field, flag: spec.flag, key: spec.view, value });
  }
  out.push({ field: 'gpus', flag: 'CUDA_VISIBLE_DEVICES', key: 'gpus', value: p.gpus?.join(',') });
  for (const name of Object.keys(p.env).sort()) {
    out.push({ field: `env.${name}`, flag: name, key: `env.${name}`, value: p.env[name] });
  }
  out.push({
    field: 'extra_args',
    flag: 'extra_args',
    key: 'extra-args',
    value: p.extra_args.length ? shArgv(p.extra_args) : undefined,
  });
  return out;
}

/**
 * Flag name -> shown value, in render order: `kv-cache-dtype: fp8_e4m3`, `cuda-graph: on`, `env.NCCL_P2P_LEVEL: PHB`.
 * Settings that are unset and have no SGLang default worth naming (served-model-name, parsers, gpus) are left out.
 */
export function flagView(profile: LaunchFields): Record<string, string> {
  const view: Record<string, string> = {};
  for (const e of entries(profile)) if (e.value !== undefined) view[e.key] = e.value;
  return view;
}

export interface FlagDiff {
  field: string;
  flag: string;
  a: string | undefined;
  b: string | undefined;
}

/** The settings whose shown values differ, in render order (env names sorted, extra_args last). */
export function diffProfiles(a: LaunchFields, b: LaunchFields): FlagDiff[] {
  const ea = entries(a);
  const eb = entries(b);
  const byField = new Map<string, { flag: string; a?: string; b?: string }>();
  for (const e of ea) byField.set(e.field, { flag: e.flag, a: e.value });
  for (const e of eb) {
    const cur = byField.get(e.field);
    if (cur) cur.b = e.value;
    else byField.set(e.field, { flag: e.flag, b: e.value });
  }
  // env names present on one side only were appended at the end of the map; put them with the other env entries.
  const order = (f: string) => (f === 'extra_args' ? 2 : f.startsWith('env.') ? 1 : 0);
  return [...byField.entries()]
    .map(([field, v]) => ({ field, flag: v.flag, a: v.a, b: v.b }))
    .sort((x, y) => order(x.field) - order(y.field) || (order(x.field) === 1 ? (x.field < y.field ? -1 : 1) : 0))
    .filter((d) => d.a !== d.b);
}
