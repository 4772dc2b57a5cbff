// Builds a RemoteHost from its config entry. The only place that reads key files and resolves ~/.ssh/config.
import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { LoadedConfig } from '../config/load.ts';
import { ConfigError, UserError } from '../errors.ts';
import { expandHome } from '../paths.ts';
import { createLocalHost } from './local.ts';
import { createSshHost, type SshTarget } from './ssh.ts';
import {
  aliasKey,
  parseJumpHop,
  resolveSshAlias,
  resolveSshAliases,
  type SshAlias,
  SshConfigProblem,
} from './ssh-config.ts';
import type { RemoteHost } from './types.ts';

const LOCAL_USER = () => userInfo().username;

/** The first file that exists (what OpenSSH tries first), else undefined. */
function firstExisting(files: readonly string[]): string | undefined {
  return files.find((f) => existsSync(f));
}

/** Resolved names, asked ahead for many hosts at once (HostPool.prepare), by aliasKey. */
type AliasesAhead = ReadonlyMap<string, SshAlias>;

function aliasOf(loaded: LoadedConfig, path: string, sshConfig: string, host: string, ahead?: AliasesAhead): SshAlias {
  try {
    return ahead?.get(aliasKey(sshConfig, host)) ?? resolveSshAlias(sshConfig, host);
  } catch (e) {
    if (!(e instanceof SshConfigProblem)) throw e;
    throw new ConfigError(loaded.source, [{ path, message: e.message, fix: e.fix }]);
  }
}

export function sshTargetFor(
  loaded: LoadedConfig,
  name: string,
  env: NodeJS.ProcessEnv = process.env,
  ahead?: AliasesAhead,
): SshTarget {
  const h = loaded.config.hosts[name];
  const ssh = h?.ssh;
  if (!ssh) throw new UserError(`host '${name}' is not an SSH host`);
  const alias = aliasOf(loaded, `hosts.${name}.ssh.host`, ssh.ssh_config, ssh.host, ahead);
  const t = loaded.config.timeouts;
  const keyFile = ssh.key_file ?? firstExisting(alias.identityFiles);
  let privateKey: Buffer | undefined;
  if (keyFile) {
    try {
      privateKey = readFileSync(expandHome(keyFile));
    } catch (e) {
      throw new ConfigError(loaded.source, [
        {
          path: `hosts.${name}.ssh.key_file`,
          message: `cannot read ${keyFile}: ${(e as Error).message}`,
          fix: 'point key_file at a readable private key, or set agent: true',
        },
      ]);
    }
  }
  const passphrase = ssh.key_passphrase_env ? env[ssh.key_passphrase_env] : undefined;
  if (ssh.key_passphrase_env && passphrase === undefined) {
    throw new ConfigError(loaded.source, [
      {
        path: `hosts.${name}.ssh.key_passphrase_env`,
        message: `environment variable ${ssh.key_passphrase_env} is not set`,
        fix: `export ${ssh.key_passphrase_env}=... before starting the bot`,
      },
    ]);
  }
  const agent = ssh.agent ? env.SSH_AUTH_SOCK : undefined;
  if (ssh.agent && !agent) {
    throw new ConfigError(loaded.source, [
      {
        path: `hosts.${name}.ssh.agent`,
        message: 'agent: true but SSH_AUTH_SOCK is not set',
        fix: 'start ssh-agent and add the key, or use key_file',
      },
    ]);
  }
  if (!privateKey && !agent) {
    throw new ConfigError(loaded.source, [
      {
        path: `hosts.${name}.ssh`,
        message: `has no key_file, no IdentityFile for ${ssh.host} in the ssh config that exists, and agent is off`,
        fix: 'set key_file, or agent: true',
      },
    ]);
  }
  const knownHosts = (a: SshAlias) =>
    ssh.known_hosts
      ? expandHome(ssh.known_hosts)
      : (firstExisting(a.userKnownHostsFiles) ?? a.userKnownHostsFiles[0] ?? expandHome('~/.ssh/known_hosts'));
  const base = {
    passphrase,
    agent,
    keepaliveIntervalMs: t.keepalive_s * 1000,
    connectTimeoutMs: t.connect_s * 1000,
    execTimeoutMs: t.command_s * 1000,
  };

  /**
   * ProxyJump hops, first hop first: each hop is resolved through the same ssh config (its own HostName, Port,
   * User, IdentityFile, UserKnownHostsFile and, for the first hop, its own ProxyJump), as `ssh -J` would; a hop
   * without a key of its own uses the host's.
   */
  const chain = (hops: readonly string[], depth: number): SshTarget | undefined => {
    if (hops.length === 0) return undefined;
    if (depth > 8)
      throw new ConfigError(loaded.source, [
        {
          path: `hosts.${name}.ssh.host`,
          message: `ProxyJump for ${ssh.host} nests more than 8 hops (a loop?)`,
          fix: 'check the ProxyJump lines in the ssh config',
        },
      ]);
    const spec = parseHop(hops[hops.length - 1]!);
    const a = aliasOf(loaded, `hosts.${name}.ssh.host`, ssh.ssh_config, spec.host, ahead);
    const hopKey = firstExisting(a.identityFiles);
    return {
      ...base,
      name: `${name} (jump ${spec.host})`,
      host: a.hostName,
      port: spec.port ?? a.port ?? 22,
      username: spec.user ?? a.user ?? LOCAL_USER(),
      privateKey: hopKey ? readFileSync(hopKey) : privateKey,
      knownHostsPath: knownHosts(a),
      jump: hops.length > 1 ? chain(hops.slice(0, -1), depth + 1) : chain(a.proxyJump, depth + 1),
    };
  };
  const parseHop = (hop: string) => {
    try {
      return parseJumpHop(hop);
    } catch (e) {
      throw new ConfigError(loaded.source, [
        { path: `hosts.${name}.ssh.host`, message: (e as Error).message, fix: (e as SshConfigProblem).fix },
      ]);
    }
  };

  return {
    ...base,
    name,
    host: alias.hostName,
    port: ssh.port ?? alias.port ?? 22,
    username: ssh.user ?? alias.user ?? LOCAL_USER(),
    privateKey,
    knownHostsPath: knownHosts(alias),
    jump: ssh.jump ? sshTargetFor(loaded, ssh.jump, env, ahead) : chain(alias.proxyJump, 0),
  };
}

/** One RemoteHost per configured host, created on first use and kept (one SSH connection per host). */
export function createHostPool(
  loaded: LoadedConfig,
  env: NodeJS.ProcessEnv = process.env,
  warn?: (host: string, text: string) => void,
) {
  const hosts = new Map<string, RemoteHost>();
  // What prepare() learnt of the hosts' names from OpenSSH, until the hosts are made (and made anew after closeAll).
  let ahead = new Map<string, SshAlias>();
  return {
    get(name: string): RemoteHost {
      let h = hosts.get(name);
      if (!h) {
        const cfg = loaded.config.hosts[name];
        if (!cfg) throw new UserError(`unknown host '${name}'`);
        if (cfg.local) h = createLocalHost(name);
        else {
          const target = sshTargetFor(loaded, name, env, ahead);
          // The host's pinning warnings (and its jump hosts'), named after the host they came up for.
          for (let t: SshTarget | undefined = target; t && warn; t = t.jump) t.warn = (text) => warn(name, text);
          h = createSshHost(target);
        }
        hosts.set(name, h);
      }
      return h;
    },
    /**
     * Before reaching many hosts at once: how OpenSSH resolves each SSH host not made yet is asked for all of them
     * concurrently (`ssh -G` per host, src/hosts/ssh-config.ts), so that making them is not one `ssh -G` after another.
     */
    async prepare(names: readonly string[]): Promise<void> {
      const pairs = names.flatMap((name) => {
        const ssh = hosts.has(name) ? undefined : loaded.config.hosts[name]?.ssh;
        return ssh ? [[ssh.ssh_config, ssh.host] as const] : [];
      });
      if (pairs.length < 2) return;
      for (const [k, v] of await resolveSshAliases(pairs)) ahead.set(k, v);
    },
    /** The hosts made so far (metrics read their connection counts). */
    connected(): Array<[string, RemoteHost]> {
      return [...hosts.entries()];
    },
    async closeAll(): Promise<void> {
      await Promise.all([...hosts.values()].map((h) => h.close()));
      hosts.clear();
      ahead = new Map();
    },
  };
}

export type HostPool = ReturnType<typeof createHostPool>;
