// Which flags and values the host's own SGLang takes: its `python -m sglang.launch_server --help`, asked once per
// host, Python, environment (the server's: host-info.ts pythonEnv) and SGLang version, and kept in the data directory
// (sglang-help/), so a restart or another bot process on the same data directory does not ask again; a new SGLang
// version, or another environment (a venv, a PYTHONPATH), is a new entry. When the host cannot be asked
// (its Python or SGLang fails), the shipped table (src/profiles/choices.ts) stands in, and callers say so.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { HostConfig } from '../config/schema.ts';
import { ConfigError, type Issue } from '../errors.ts';
import type { RemoteHost } from '../hosts/types.ts';
import type { Logger } from '../logger.ts';
import { typedFlagNames } from '../profiles/fields.ts';
import { checkArgv, type FlagTable, parseHelp, problemIssue, shippedTable } from '../profiles/help-flags.ts';
import { at } from '../profiles/issues.ts';
import { dialectForVersion, renderLaunch } from '../profiles/render.ts';
import type { ResolvedProfile } from '../profiles/resolve.ts';
import { splitSecrets } from '../profiles/secrets.ts';
import { type SingleFlight, singleFlight } from '../single-flight.ts';
import { type Engine, type HostContext, hostOf } from './engine.ts';
import { type PythonEnv, pythonEnv } from './host-info.ts';
import { SGLANG_HELP, script } from './scripts.ts';

export interface HostFlags {
  table: FlagTable;
  /** host: asked just now; cache: an earlier answer from the data directory; shipped: the host could not be asked. */
  source: 'host' | 'cache' | 'shipped';
  /** The SGLang version the table is of (absent when it could not be read). */
  sglang?: string;
  /** When the answer was read from the host (ISO time). */
  askedAt?: string;
  /** Why the host could not be asked (source `shipped`). */
  reason?: string;
}

/**
 * The engine's parts asking needs, for a host of its config; `env` the server's environment there (pythonEnv: with a
 * profile's env when a launch of it asks), the one its version was read in.
 */
export function flagsContext(
  engine: HostContext & Pick<Engine, 'log'>,
  hostName: string,
  env?: PythonEnv,
): FlagsContext {
  const { host, cfg } = hostOf(engine, hostName);
  const timeoutMs = Math.max(engine.loaded.config.timeouts.command_s, 120) * 1000;
  return {
    hostName,
    host,
    cfg,
    env: env ?? pythonEnv(cfg),
    dataDir: engine.loaded.dataDir,
    log: engine.log,
    timeoutMs,
  };
}

/** What asking needs: the host, its config entry, where the cache lives. */
export interface FlagsContext {
  hostName: string;
  host: RemoteHost;
  cfg: HostConfig;
  /** The environment --help runs in, as the server's (its key is part of the cache's). */
  env: PythonEnv;
  dataDir: string;
  log: Logger;
  /** Importing SGLang (torch, kernels) can take a while on a real host. */
  timeoutMs: number;
}

const CacheEntry = z.object({
  host: z.string(),
  python: z.string(),
  sglang: z.string(),
  /** pythonEnv's key: an answer asked in another environment (another venv, PYTHONPATH) is another SGLang's. */
  env: z.string().optional(),
  asked_at: z.string(),
  help: z.string(),
});

function cacheFile(ctx: FlagsContext, sglang: string): string {
  const key = createHash('sha256')
    .update(`${ctx.hostName}\0${ctx.cfg.python}\0${sglang}\0${ctx.env.key}`)
    .digest('hex')
    .slice(0, 16);
  return join(ctx.dataDir, 'sglang-help', `${ctx.hostName.replace(/[^A-Za-z0-9_.-]/g, '_')}-${key}.json`);
}

function readCache(ctx: FlagsContext, sglang: string): HostFlags | undefined {
  let raw: string;
  try {
    raw = readFileSync(cacheFile(ctx, sglang), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const e = CacheEntry.parse(JSON.parse(raw));
    if (e.host !== ctx.hostName || e.python !== ctx.cfg.python || e.sglang !== sglang || e.env !== ctx.env.key)
      return undefined;
    const table = parseHelp(e.help);
    return table.flags.size > 0 ? { table, source: 'cache', sglang, askedAt: e.asked_at } : undefined;
  } catch (err) {
    // A damaged entry is asked again and rewritten, never trusted.
    ctx.log.warn({ host: ctx.hostName, err: (err as Error).message }, 'ignoring an unreadable SGLang help cache entry');
    return undefined;
  }
}

function writeCache(ctx: FlagsContext, sglang: string, help: string, askedAt: string): void {
  const file = cacheFile(ctx, sglang);
  try {
    mkdirSync(join(ctx.dataDir, 'sglang-help'), { recursive: true });
    // Written whole, then renamed: another bot process reading it sees the old entry or the new one.
    const tmp = `${file}.${process.pid}.tmp`;
    const entry = { host: ctx.hostName, python: ctx.cfg.python, sglang, env: ctx.env.key, asked_at: askedAt, help };
    writeFileSync(tmp, `${JSON.stringify(entry, null, 2)}\n`);
    renameSync(tmp, file);
  } catch (err) {
    ctx.log.warn({ host: ctx.hostName, err: (err as Error).message }, 'could not cache the SGLang help');
  }
}

async function ask(ctx: FlagsContext, sglang: string): Promise<HostFlags> {
  const shipped = (reason: string): HostFlags => ({ table: shippedTable(), source: 'shipped', sglang, reason });
  let r: Awaited<ReturnType<RemoteHost['exec']>>;
  try {
    r = await ctx.host.exec(script(SGLANG_HELP, 'glm-sglang-help', ctx.env.args), {
      stdin: ctx.env.stdin,
      timeoutMs: ctx.timeoutMs,
    });
  } catch (err) {
    return shipped(`python -m sglang.launch_server --help could not run: ${(err as Error).message}`);
  }
  if (r.code !== 0) {
    const last = (r.stderr.trim() || r.stdout.trim()).split('\n').pop() ?? '';
    return shipped(
      `python -m sglang.launch_server --help exited ${r.code ?? `on ${r.signal}`}${last ? `: ${last}` : ''}`,
    );
  }
  const table = parseHelp(r.stdout);
  if (table.flags.size === 0) return shipped('python -m sglang.launch_server --help listed no flags');
  const askedAt = new Date().toISOString();
  ctx.log.info({ host: ctx.hostName, sglang, flags: table.flags.size }, 'read SGLang launch flags from the host');
  writeCache(ctx, sglang, r.stdout, askedAt);
  return { table, source: 'host', sglang, askedAt };
}

// Per connection pool (as readVersions), per environment and version: concurrent launches share one question.
const memo = new WeakMap<RemoteHost, SingleFlight<HostFlags>>();

/**
 * The flags the host's SGLang takes. `sglang` is its version as readVersions read it; undefined (SGLang not
 * importable, say) means the host cannot be asked, and `problem` is why.
 */
export function hostFlags(ctx: FlagsContext, sglang: string | undefined, problem?: string): Promise<HostFlags> {
  if (!sglang) {
    return Promise.resolve({
      table: shippedTable(),
      source: 'shipped',
      reason: `SGLang's version could not be read${problem ? ` (${problem})` : ''}`,
    });
  }
  let flight = memo.get(ctx.host);
  if (!flight) {
    // Kept for the pool's life: a host's SGLang of one version always answers --help alike.
    flight = singleFlight<HostFlags>({ ttlMs: Number.POSITIVE_INFINITY });
    memo.set(ctx.host, flight);
  }
  const key = `${ctx.env.key}\0${sglang}`;
  const shared = flight;
  return shared(key, async () => readCache(ctx, sglang) ?? ask(ctx, sglang)).then((f) => {
    // A host that could not be asked is asked again next time: the fallback is for that moment only.
    if (f.source === 'shipped') shared.forget(key);
    return f;
  });
}

/** One line on where the table came from, for `check` and for a refusal. */
export function flagsSource(f: HostFlags, hostName: string): string {
  if (f.source === 'shipped')
    return `the shipped table (src/profiles/choices.ts), since the host could not be asked: ${f.reason}`;
  const when = f.source === 'cache' ? `, cached ${f.askedAt}` : '';
  return `SGLang ${f.sglang} on ${hostName} (its --help${when})`;
}

/**
 * What argparse on the host would refuse in the rendered launch argv (`python -m sglang.launch_server ...`), named
 * as the profile names it: the typed field, or the extra_args entry. `extraStart` is where extra_args begin.
 */
export function launchFlagIssues(
  f: HostFlags,
  hostName: string,
  profileName: string,
  argv: readonly string[],
  extraStart: number,
): Issue[] {
  const skip = 3; // python -m sglang.launch_server
  const typed = typedFlagNames();
  const args = argv.slice(skip);
  const sglang = f.source === 'shipped' ? 'SGLang (by the shipped table)' : `SGLang ${f.sglang} on ${hostName}`;
  const label = (i: number) => {
    const arg = args[i]!;
    if (i + skip >= extraStart) return at(profileName, `extra_args ${arg}`);
    const field = typed.get(arg.split('=', 1)[0]!);
    return at(profileName, field ?? arg);
  };
  return checkArgv(f.table, args).map((p) => problemIssue(p, label, f.table, sglang));
}

/** Refuses a launch whose flags the host's SGLang would refuse, with every problem at once. */
export function assertLaunchFlags(
  f: HostFlags,
  hostName: string,
  profileName: string,
  argv: readonly string[],
  extraStart: number,
): void {
  refuse(f, hostName, profileName, launchFlagIssues(f, hostName, profileName, argv, extraStart));
}

function refuse(f: HostFlags, hostName: string, profileName: string, issues: Issue[]): void {
  if (issues.length > 0) throw new ConfigError(`profile ${profileName} against ${flagsSource(f, hostName)}`, issues);
}

/**
 * A profile's launch flags against the host's table, rendered as a launch on that host renders them (its dialect,
 * secrets marked): what `check` reports and a launch would refuse.
 */
export function profileFlagIssues(f: HostFlags, hostName: string, cfg: HostConfig, profile: ResolvedProfile): Issue[] {
  const dialect = cfg.flag_dialect === 'auto' ? dialectForVersion(f.sglang) : cfg.flag_dialect;
  const split = splitSecrets(profile.env, profile.extra_args);
  const rendered = renderLaunch(
    { ...profile, env: split.env, extra_args: split.extraArgs },
    { python: cfg.python, dialect },
  );
  return launchFlagIssues(f, hostName, profile.name, rendered.argv, rendered.argv.length - split.extraArgs.length);
}

/** Refuses a profile whose flags the host's SGLang would refuse, rendered as profileFlagIssues renders it. */
export function assertProfileFlags(f: HostFlags, hostName: string, cfg: HostConfig, profile: ResolvedProfile): void {
  refuse(f, hostName, profile.name, profileFlagIssues(f, hostName, cfg, profile));
}
