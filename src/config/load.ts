// Part src/config: owns the bot's config file: its schema (every section's, and its defaults), loading and
//   validation.
// May import: errors.ts, glob.ts, package-root.ts, paths.ts, suggest.ts, yaml.ts.
//
// Finds, parses and validates the config; every problem is reported at once as `path: message (fix: ...)`.
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type Issue } from '../errors.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { expandHome, localPath, pathProblem } from '../paths.ts';
import { closest } from '../suggest.ts';
import { yamlValue } from '../yaml.ts';
import { type Config, ConfigSchema, type HostConfig, HostSchema, SshSchema } from './schema.ts';

export { PACKAGE_ROOT };

export interface LoadedConfig {
  config: Config;
  /** Where it came from: a file path, or `embedded default`. */
  source: string;
  dataDir: string;
  profilesDir: string;
  defaultHost: string;
}

export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'glm-ops', 'config.yaml');
}

/** The config used when there is no file: one local host whose "GPU server" is the SGLang stand-in. */
export function embeddedDefault(env: NodeJS.ProcessEnv = process.env): unknown {
  const data = env.XDG_DATA_HOME ? join(env.XDG_DATA_HOME, 'glm-ops') : join(homedir(), '.local', 'share', 'glm-ops');
  return {
    default_host: 'standin',
    hosts: {
      standin: {
        description: 'this machine, serving the SGLang stand-in (SIMULATED GPU server: no GPU needed)',
        local: true,
        python: join(PACKAGE_ROOT, 'standin', 'python'),
        workdir: join(data, 'hosts', 'standin'),
        bin_dirs: [join(PACKAGE_ROOT, 'standin', 'bin')],
        env: { STANDIN_TIME_SCALE: env.GLM_STANDIN_TIME_SCALE ?? '1' },
      },
    },
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  const explicit = env.GLM_CONFIG;
  const bad = explicit === undefined ? undefined : pathProblem(explicit);
  if (bad)
    throw new ConfigError('GLM_CONFIG', [{ path: 'GLM_CONFIG', message: bad, fix: 'point it at the config file' }]);
  const path = explicit ? resolve(explicit) : defaultConfigPath(env);
  if (explicit && !existsSync(path)) {
    throw new ConfigError(path, [
      {
        path: 'GLM_CONFIG',
        message: `points to ${path}, which does not exist`,
        fix: 'create the file, or unset GLM_CONFIG to use the default location',
      },
    ]);
  }
  if (!existsSync(path)) return finish(validate(embeddedDefault(env), 'embedded default'), 'embedded default', env);
  const text = readFileSync(path, 'utf8');
  return finish(parseConfigText(text, path, { files: true, baseDir: dirname(path) }), path, env);
}

/** `files`: check the bot machine's files the config names; `baseDir`: where its relative paths start. */
export interface ValidateOptions {
  files?: boolean;
  baseDir?: string;
}

export function parseConfigText(text: string, source: string, opts: ValidateOptions = {}): Config {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      source,
      doc.errors.map((e) => ({
        path: `line ${e.linePos?.[0]?.line ?? '?'}`,
        message: e.message.split('\n')[0] ?? e.message,
        fix: 'fix the YAML syntax',
      })),
    );
  }
  const v = yamlValue(doc);
  if (!v.ok) throw new ConfigError(source, [{ path: '(file)', message: v.message, fix: v.fix }]);
  return validate(v.value ?? {}, source, opts);
}

/**
 * Schema, cross-references and, with `files`, the bot machine's files the config names (key files, known_hosts, an
 * ssh config): every problem in one pass, so fixing the first ones never uncovers more.
 */
export function validate(raw: unknown, source: string, opts: ValidateOptions = {}): Config {
  const parsed = ConfigSchema.safeParse(raw);
  const issues: Issue[] = parsed.success ? [] : zodIssues(parsed.error, raw, configKeys);
  if (parsed.success) issues.push(...crossChecks(parsed.data));
  // Files are checked from the raw text too when the schema fails elsewhere: one pass shows them all.
  if (opts.files) issues.push(...fileChecks(parsed.success ? parsed.data : raw, opts.baseDir));
  if (issues.length > 0) throw new ConfigError(source, issues);
  return parsed.data as Config;
}

/**
 * Files on the bot machine that the config names and that must exist: a host entry's key file, known_hosts and ssh
 * config (before anything can connect), and a findings source read from this machine (no `host:`), whose relative
 * path starts at `baseDir` (the config file's directory) as the findings index reads it.
 */
export function fileChecks(cfg: unknown, baseDir = process.cwd()): Issue[] {
  const issues: Issue[] = [];
  // A path the schema refused (NUL, too long) is reported there once, never echoed back here.
  const str = (v: unknown) => (typeof v === 'string' && v && !pathProblem(v) ? v : undefined);
  const findings = (cfg as { findings?: unknown } | null)?.findings;
  if (Array.isArray(findings)) {
    findings.forEach((f: unknown, i) => {
      const entry = (f ?? {}) as { path?: unknown; host?: unknown };
      const path = str(entry.path);
      if (!path || entry.host !== undefined) return;
      const full = localPath(path, baseDir);
      if (existsSync(full)) return;
      issues.push({
        path: `findings.${i}.path`,
        message: `${path}${full === path ? '' : ` (${full})`} does not exist on the bot machine`,
        fix: "point path at the Markdown file on this machine (a relative path starts at the config file's directory), or add host: NAME to read it on that host over SSH",
      });
    });
  }
  const hosts = (cfg as { hosts?: unknown } | null)?.hosts;
  if (!hosts || typeof hosts !== 'object') return issues;
  for (const [name, h] of Object.entries(hosts as Record<string, unknown>)) {
    const raw = (h as { ssh?: unknown } | null)?.ssh;
    if (!raw || typeof raw !== 'object') continue;
    const r = raw as Record<string, unknown>;
    const ssh = {
      host: str(r.host) ?? name,
      key_file: str(r.key_file),
      known_hosts: str(r.known_hosts),
      ssh_config: str(r.ssh_config) ?? '~/.ssh/config',
    };
    const missing = (p: string) => !existsSync(expandHome(p));
    if (ssh.key_file && missing(ssh.key_file))
      issues.push({
        path: `hosts.${name}.ssh.key_file`,
        message: `${ssh.key_file} does not exist on the bot machine`,
        fix: `make the bot's key (ssh-keygen -t ed25519 -f ${ssh.key_file}) and authorize its .pub on the host, or point key_file at the key`,
      });
    if (ssh.known_hosts && missing(ssh.known_hosts))
      issues.push({
        path: `hosts.${name}.ssh.known_hosts`,
        message: `${ssh.known_hosts} does not exist: every host key would be refused as unknown`,
        fix: `create it with the hosts' keys (check them out of band; ssh-keyscan ${ssh.host} >> ${ssh.known_hosts} shows them)`,
      });
    if (ssh.ssh_config !== '~/.ssh/config' && missing(ssh.ssh_config))
      issues.push({
        path: `hosts.${name}.ssh.ssh_config`,
        message: `${ssh.ssh_config} does not exist`,
        fix: 'point ssh_config at an existing file, or remove it to use ~/.ssh/config',
      });
  }
  return issues;
}

function configKeys(path: PropertyKey[]): string[] {
  const p = path.map(String);
  if (p.length === 0) return Object.keys(ConfigSchema.shape);
  if (p[0] === 'timeouts') return ['connect_s', 'command_s', 'keepalive_s', 'ready_s', 'stop_grace_s', 'stall_s'];
  if (p[0] === 'hosts' && p.length === 2) return Object.keys(HostSchema.shape);
  if (p[0] === 'hosts' && p[2] === 'ssh') return Object.keys(SshSchema.shape);
  return [];
}

function crossChecks(cfg: Config): Issue[] {
  const issues: Issue[] = [];
  const names = Object.keys(cfg.hosts);
  if (names.length === 0)
    issues.push({ path: 'hosts', message: 'no hosts are configured', fix: 'add at least one host' });
  for (const [name, h] of Object.entries(cfg.hosts)) {
    if (!h.ssh && !h.local) {
      issues.push({
        path: `hosts.${name}`,
        message: 'says neither how to reach it nor that it is local',
        fix: 'add an ssh: block, or local: true',
      });
    }
    if (h.ssh && h.local) {
      issues.push({ path: `hosts.${name}`, message: 'has both ssh: and local: true', fix: 'keep one of them' });
    }
    const jump = h.ssh?.jump;
    if (jump !== undefined) {
      const j = cfg.hosts[jump];
      if (!j) {
        const s = closest(jump, names);
        issues.push({
          path: `hosts.${name}.ssh.jump`,
          message: `names unknown host '${jump}'`,
          fix: s ? `did you mean '${s}'?` : `use one of: ${names.join(', ')}`,
        });
      } else if (!j.ssh) {
        issues.push({
          path: `hosts.${name}.ssh.jump`,
          message: `jump host '${jump}' has no ssh: block`,
          fix: 'a jump host must be reached over SSH',
        });
      } else if (jump === name) {
        issues.push({ path: `hosts.${name}.ssh.jump`, message: 'a host cannot be its own jump host' });
      }
    }
  }
  cfg.findings.forEach((f, i) => {
    if (f.host !== undefined && !cfg.hosts[f.host]) {
      const s = closest(f.host, names);
      issues.push({
        path: `findings.${i}.host`,
        message: `names unknown host '${f.host}'`,
        fix: s ? `did you mean '${s}'?` : `use one of: ${names.join(', ')}`,
      });
    }
  });
  for (const [group, g] of Object.entries(cfg.host_groups)) {
    if (cfg.hosts[group]) {
      issues.push({
        path: `host_groups.${group}`,
        message: `has the name of a host`,
        fix: 'give the group a name no host has',
      });
    }
    g.hosts.forEach((h, i) => {
      if (!cfg.hosts[h]) {
        const s = closest(h, names);
        issues.push({
          path: `host_groups.${group}.hosts.${i}`,
          message: `names unknown host '${h}'`,
          fix: s ? `did you mean '${s}'?` : `use one of: ${names.join(', ')}`,
        });
      } else if (g.hosts.indexOf(h) !== i) {
        issues.push({ path: `host_groups.${group}.hosts.${i}`, message: `lists '${h}' twice` });
      }
    });
    const head = cfg.hosts[g.hosts[0]!];
    if (head && distAddress(head) === undefined) {
      issues.push({
        path: `hosts.${g.hosts[0]}.dist_addr`,
        message: `is needed: '${g.hosts[0]}' is the head of group '${group}' and its ssh.host is not an IP address`,
        fix: 'set dist_addr to the IP address the other nodes reach it on',
      });
    }
  }
  if (cfg.default_host !== undefined && !cfg.hosts[cfg.default_host]) {
    const s = closest(cfg.default_host, names);
    issues.push({
      path: 'default_host',
      message: `names unknown host '${cfg.default_host}'`,
      fix: s ? `did you mean '${s}'?` : `use one of: ${names.join(', ')}`,
    });
  }
  return issues;
}

/** The address other nodes reach a multi-node head on: dist_addr, else ssh.host when it is an IP address. */
export function distAddress(h: HostConfig): string | undefined {
  if (h.dist_addr) return h.dist_addr;
  const a = h.ssh?.host;
  if (a && (isIP(a) !== 0 || a === 'localhost')) return a === 'localhost' ? '127.0.0.1' : a;
  if (h.local) return '127.0.0.1';
  return undefined;
}

function valueAt(raw: unknown, path: PropertyKey[]): unknown {
  let cur = raw;
  for (const p of path) cur = cur && typeof cur === 'object' ? (cur as Record<PropertyKey, unknown>)[p] : undefined;
  return cur;
}

export function zodIssues(err: z.ZodError, raw: unknown, knownKeys?: (path: PropertyKey[]) => string[]): Issue[] {
  const out: Issue[] = [];
  for (const i of err.issues) {
    const path = i.path.map(String).join('.') || '(top level)';
    if (i.code === 'unrecognized_keys') {
      const known = knownKeys?.(i.path) ?? [];
      for (const k of i.keys) {
        const s = closest(k, known);
        out.push({
          path: path === '(top level)' ? k : `${path}.${k}`,
          message: 'unknown key',
          fix: s ? `did you mean '${s}'?` : 'remove it',
        });
      }
    } else if (i.code === 'invalid_type' && valueAt(raw, i.path) === undefined) {
      out.push({ path, message: 'is required', fix: `add ${i.path[i.path.length - 1]?.toString() ?? 'it'}` });
    } else if (i.code === 'invalid_value' && 'values' in i) {
      const got = String(valueAt(raw, i.path));
      const values = (i.values as unknown[]).map(String);
      const s = closest(got, values);
      out.push({
        path,
        message: `'${got}' is not one of ${values.join(', ')}`,
        fix: s ? `did you mean '${s}'?` : undefined,
      });
    } else {
      out.push({ path, message: i.message });
    }
  }
  return out;
}

function finish(config: Config, source: string, env: NodeJS.ProcessEnv): LoadedConfig {
  const base = source === 'embedded default' ? process.cwd() : dirname(source);
  const rel = (p: string) => (isAbsolute(expandHome(p)) ? expandHome(p) : resolve(base, p));
  const dataDir = config.data_dir
    ? rel(config.data_dir)
    : env.XDG_DATA_HOME
      ? join(env.XDG_DATA_HOME, 'glm-ops')
      : join(homedir(), '.local', 'share', 'glm-ops');
  const profilesDir = config.profiles_dir ? rel(config.profiles_dir) : join(PACKAGE_ROOT, 'profiles');
  const hostNames = Object.keys(config.hosts);
  const defaultHost = config.default_host ?? (hostNames.length === 1 ? hostNames[0]! : '');
  return { config, source, dataDir, profilesDir, defaultHost };
}
