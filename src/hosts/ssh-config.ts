// Resolves a host name the way `ssh NAME` would, by asking OpenSSH itself: `ssh -G NAME` prints the configuration it
// would use after Include, Host and Match blocks, tokens and defaults (ssh(1) -G, ssh_config(5)). Where there is no
// OpenSSH client, a small reader handles plain Host blocks and refuses files it cannot read faithfully.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { expandHome } from '../paths.ts';

export interface SshAlias {
  hostName: string;
  port?: number;
  user?: string;
  /** IdentityFile entries in order (OpenSSH's defaults when none is configured), tokens and ~ expanded. */
  identityFiles: string[];
  /** ProxyJump hops, first hop first (`[user@]host[:port]`). */
  proxyJump: string[];
  /** UserKnownHostsFile entries, expanded. */
  userKnownHostsFiles: string[];
}

/** Why a name could not be resolved, with how to fix it (the caller names the config path). */
export class SshConfigProblem extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
}

const DEFAULT_CONFIG = '~/.ssh/config';

/** ssh_config(5) TOKENS that `ssh -G` leaves in IdentityFile and UserKnownHostsFile. */
function expandTokens(value: string, t: { host: string; original: string; port: number; user: string }): string {
  const local = userInfo();
  const map: Record<string, string> = {
    '%': '%',
    h: t.host,
    n: t.original,
    p: String(t.port),
    r: t.user,
    u: local.username,
    d: homedir(),
    i: String(local.uid),
  };
  const out = value.replace(/%(.)/g, (whole, k: string) => {
    const v = map[k];
    if (v === undefined)
      throw new SshConfigProblem(
        `'${value}' uses the token ${whole}, which the bot does not expand`,
        'use a literal path (or %h, %p, %r, %u, %d, %n) in the ssh config, or set key_file/known_hosts in the bot config',
      );
    return v;
  });
  return expandHome(out);
}

/** `ssh -G` output (one `keyword value` per line) for the keywords the bot uses. */
export function parseSshG(text: string, original: string): SshAlias {
  const values = new Map<string, string[]>();
  for (const raw of text.split('\n')) {
    const m = raw.trim().match(/^(\S+)\s+(.*)$/);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    values.set(key, [...(values.get(key) ?? []), m[2]!]);
  }
  const one = (k: string) => values.get(k)?.[0];
  const proxyCommand = one('proxycommand');
  if (proxyCommand && proxyCommand !== 'none')
    throw new SshConfigProblem(
      `'${original}' uses ProxyCommand (${proxyCommand}), which the bot cannot run`,
      'use ProxyJump in the ssh config, or jump: HOST in the bot config',
    );
  const hostName = one('hostname') ?? original;
  const port = one('port') ? Number(one('port')) : undefined;
  const user = one('user');
  const tokens = { host: hostName, original, port: port ?? 22, user: user ?? userInfo().username };
  const jump = one('proxyjump');
  return {
    hostName,
    port,
    user,
    identityFiles: (values.get('identityfile') ?? []).map((f) => expandTokens(f, tokens)),
    proxyJump: jump && jump !== 'none' ? jump.split(',').map((h) => h.trim()) : [],
    userKnownHostsFiles: (values.get('userknownhostsfile') ?? [])
      .flatMap((v) => v.split(/\s+/))
      .filter((f) => f && f !== 'none')
      .map((f) => expandTokens(f, tokens)),
  };
}

/** One ProxyJump hop: `[user@]host[:port]` or `ssh://[user@]host[:port]`. */
export function parseJumpHop(hop: string): { host: string; user?: string; port?: number } {
  const m = hop.replace(/^ssh:\/\//, '').match(/^(?:([^@]+)@)?(\[[^\]]+\]|[^:]+)(?::(\d+))?$/);
  if (!m)
    throw new SshConfigProblem(
      `ProxyJump hop '${hop}' is not [user@]host[:port]`,
      'write each hop as [user@]host[:port]',
    );
  return { user: m[1], host: m[2]!.replace(/^\[|\]$/g, ''), port: m[3] ? Number(m[3]) : undefined };
}

/**
 * Asks OpenSSH how it would connect to `name`. `configPath` is the bot config's `ssh.ssh_config`: at its default,
 * ssh reads the user's and the system's files itself, as `ssh NAME` would; a path of its own is passed as `-F`
 * (that file only, as `ssh -F`). Returns undefined when there is no ssh client.
 */
function askOpenSsh(configPath: string, name: string): SshAlias | undefined {
  const args = sshGArgs(configPath, name).slice(0, -3);
  let out: string;
  try {
    // argv, never a shell; `--` so a name can never be read as an option.
    out = execFileSync('ssh', sshGArgs(configPath, name), {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 10_000,
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') return undefined;
    const why = String(err.stderr ?? err.message)
      .split('\n')
      .filter((l) => l.trim() && !/Pseudo-terminal/.test(l))
      .slice(0, 3)
      .join('; ');
    throw new SshConfigProblem(
      `ssh -G ${name} failed: ${why || 'no reason given'}`,
      `fix the ssh config (try: ssh ${args.join(' ')} -G ${name}), or set ssh_config to another file`,
    );
  }
  return parseSshG(out, name);
}

function matches(patterns: string[], alias: string): boolean {
  let ok = false;
  for (const p of patterns) {
    const neg = p.startsWith('!');
    const re = new RegExp(
      `^${(neg ? p.slice(1) : p)
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
      'i',
    );
    if (re.test(alias)) {
      if (neg) return false;
      ok = true;
    }
  }
  return ok;
}

/**
 * Without an OpenSSH client: plain `Host` blocks, first value wins. Include and Match need OpenSSH's own
 * evaluation, so a file using them is refused rather than half read.
 */
export function parseSshConfig(text: string, alias: string): SshAlias {
  const found: Record<string, string> = {};
  const lists: Record<string, string[]> = { identityfile: [], userknownhostsfile: [] };
  let active = true;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const m = line.match(/^(\S+?)\s*(?:=\s*|\s+)(.+)$/);
    if (!m) return;
    const key = m[1]!.toLowerCase();
    const value = m[2]!.trim().replace(/^"(.*)"$/, '$1');
    if (key === 'include' || key === 'match')
      throw new SshConfigProblem(
        `line ${i + 1} uses ${m[1]}, which only OpenSSH's client evaluates, and there is no ssh client here`,
        'install the OpenSSH client (ssh) on the bot machine, or set host, port, user and key_file in the bot config',
      );
    if (key === 'host') {
      active = matches(value.split(/\s+/), alias);
      return;
    }
    if (!active) return;
    if (key in lists) lists[key]!.push(...value.split(/\s+/));
    else found[key] ??= value;
  });
  return parseSshG(
    [
      ...Object.entries(found).map(([k, v]) => `${k} ${v}`),
      ...lists.identityfile!.map((f) => `identityfile ${f}`),
      ...(lists.userknownhostsfile!.length ? [`userknownhostsfile ${lists.userknownhostsfile!.join(' ')}`] : []),
    ].join('\n'),
    alias,
  );
}

/** `ssh -G`'s arguments for `name`: the config file when it is not the default, `--` so a name is never an option. */
function sshGArgs(configPath: string, name: string): string[] {
  return [...(configPath === DEFAULT_CONFIG ? [] : ['-F', expandHome(configPath)]), '-G', '--', name];
}

/** A name's key in resolveSshAliases' answers: the ssh config it was resolved with, and the name. */
export const aliasKey = (configPath: string, name: string) => JSON.stringify([configPath, name]);

/**
 * Asks `ssh -G` about many names at once, each in its own process, concurrently: a bot about to reach 64 hosts
 * (status, a reconcile) would otherwise run 64 of them one after the other (~7 ms each here) before it connects to any.
 * Answers by aliasKey; a name whose answer fails or does not parse is left out, for resolveSshAlias to ask again and
 * report the problem.
 */
export async function resolveSshAliases(
  pairs: ReadonlyArray<readonly [configPath: string, name: string]>,
): Promise<Map<string, SshAlias>> {
  const answers = new Map<string, SshAlias>();
  const wanted = new Map(pairs.map(([c, n]) => [aliasKey(c, n), [c, n] as const]));
  await Promise.all(
    [...wanted].map(
      ([key, [configPath, name]]) =>
        new Promise<void>((resolve) => {
          execFile('ssh', sshGArgs(configPath, name), { encoding: 'utf8', timeout: 10_000 }, (err, stdout) => {
            if (!err) {
              try {
                answers.set(key, parseSshG(stdout, name));
              } catch {
                // resolveSshAlias asks again and says what is wrong
              }
            }
            resolve();
          }).stdin?.end();
        }),
    ),
  );
  return answers;
}

/** How `ssh NAME` would reach `name`, by `ssh -G` where there is a client, else the plain reader. */
export function resolveSshAlias(configPath: string, name: string): SshAlias {
  const viaSsh = askOpenSsh(configPath, name);
  if (viaSsh) return viaSsh;
  const path = expandHome(configPath);
  if (!existsSync(path)) {
    if (configPath === DEFAULT_CONFIG) return parseSshConfig('', name);
    throw new SshConfigProblem(`${path} does not exist`, 'point ssh_config at an existing file, or remove it');
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new SshConfigProblem(`cannot read ${path}: ${(e as Error).message}`, 'make the file readable by the bot');
  }
  return parseSshConfig(text, name);
}
