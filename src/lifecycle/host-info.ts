// What a host has: Python and SGLang versions, GPUs. Cached per host for the bot's lifetime (cheap to ask once,
// slow to ask on every launch); `check` refreshes it.
import { createHash } from 'node:crypto';
import type { HostConfig } from '../config/schema.ts';
import type { RemoteHost } from '../hosts/types.ts';
import { isSecretName, redactText } from '../redact.ts';
import { GPUS, script, VERSIONS } from './scripts.ts';

export interface Gpu {
  index: number;
  name: string;
  memUsedMiB: number;
  memTotalMiB: number;
  computeCap: string;
}

export interface GpuReport {
  available: boolean;
  gpus: Gpu[];
  apps: Array<{ pid: number; memMiB: number }>;
}

export interface Versions {
  python?: string;
  sglang?: string;
  /** Why a version could not be read. */
  problem?: string;
}

/**
 * The environment the server's python runs in, as its launch builds it (scripts.ts, PYTHON_ENV): the host's bin_dirs
 * on PATH, its env and the profile's (a value the profile sets wins), its env_file, in the launch's order. Asked of
 * in it, the version, the flag dialect and `--help` are those of the SGLang the server imports (a venv on PATH, a
 * PYTHONPATH in the env file). Secrets are left out: they are the launch's, and never pick the SGLang.
 */
export interface PythonEnv {
  args: string[];
  stdin: string;
  /** Names this environment in caches (a hash: no value of it is written anywhere). */
  key: string;
}

export function pythonEnv(cfg: HostConfig, profileEnv: Record<string, string> = {}): PythonEnv {
  const env = Object.entries({ ...cfg.env, ...profileEnv }).filter(
    ([k, v]) => !isSecretName(k) && redactText(v) === v && !/[\n\r]/.test(v),
  );
  // A direct launch sources the env file, then its run's env; a Slurm batch script exports its env, then sources it.
  const order = cfg.slurm ? 'env-file' : 'file-env';
  const args = [cfg.python, cfg.bin_dirs.join(':'), cfg.env_file ?? '', order];
  const stdin = env.map(([k, v]) => `${k}=${v}\n`).join('');
  const key = createHash('sha256')
    .update(JSON.stringify([args, stdin]))
    .digest('hex')
    .slice(0, 16);
  return { args, stdin, key };
}

// Keyed by the host object: one cache per connection pool, so two bots (or a test's fresh bot) never share it; then
// by the environment asked in.
const cache = new WeakMap<RemoteHost, Map<string, Versions>>();

export async function readVersions(
  host: RemoteHost,
  cfg: HostConfig,
  fresh = false,
  env: PythonEnv = pythonEnv(cfg),
): Promise<Versions> {
  let mine = cache.get(host);
  if (!mine) {
    mine = new Map();
    cache.set(host, mine);
  }
  const hit = mine.get(env.key);
  if (hit && !fresh) return hit;
  const r = await host.exec(script(VERSIONS, 'glm-versions', env.args), { stdin: env.stdin });
  const v: Versions = {};
  for (const line of r.stdout.split('\n')) {
    const m = line.match(/^(python|sglang) (.*)$/);
    if (!m) continue;
    const value = m[2]!.trim();
    if (m[1] === 'python') {
      if (/^Python \d/.test(value)) v.python = value.replace(/^Python /, '');
      else v.problem = `python at ${cfg.python} did not run: ${value}`;
    } else if (/^\d+\.\d+/.test(value)) {
      v.sglang = value;
    } else {
      v.problem ??= `sglang is not importable by ${cfg.python}: ${value}`;
    }
  }
  mine.set(env.key, v);
  return v;
}

/**
 * The host's configured environment, as for a launch (a library path nvidia-smi or Python needs, say), for a script
 * that exports it: on stdin, one NAME=value a line, so a value (a token, perhaps) never sits on a command line.
 */
export function hostEnvStdin(cfg: HostConfig): string {
  return Object.entries(cfg.env)
    .filter(([, v]) => !/[\n\r]/.test(v))
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');
}

export async function readGpus(host: RemoteHost, cfg: HostConfig): Promise<GpuReport> {
  const r = await host.exec(script(GPUS, 'glm-gpus', [cfg.bin_dirs.join(':')]), { stdin: hostEnvStdin(cfg) });
  if (r.stdout.startsWith('NO_NVIDIA_SMI')) return { available: false, gpus: [], apps: [] };
  const [gpuPart = '', appPart = ''] = r.stdout.split('APPS\n');
  const gpus = gpuPart
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(',').map((s) => s.trim()))
    .map(([index, name, used, total, cap]) => ({
      index: Number(index),
      name: name ?? '?',
      memUsedMiB: Number(used),
      memTotalMiB: Number(total),
      computeCap: cap ?? '?',
    }));
  const apps = appPart
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(',').map((s) => s.trim()))
    .map(([pid, mem]) => ({ pid: Number(pid), memMiB: Number(mem) }));
  return { available: true, gpus, apps };
}

// The architecture does not change while the bot runs: ask once per connection pool.
const archCache = new WeakMap<RemoteHost, string | null>();

/** The compute capability of the host's first GPU (`12.0`), or null without nvidia-smi. */
export async function readComputeCap(host: RemoteHost, cfg: HostConfig): Promise<string | null> {
  if (archCache.has(host)) return archCache.get(host) ?? null;
  const g = await readGpus(host, cfg);
  const cap = g.available ? (g.gpus[0]?.computeCap ?? null) : null;
  archCache.set(host, cap);
  return cap;
}
