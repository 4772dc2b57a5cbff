// Which configured host (or hosts, for a multi-node launch) a name means: plain lookups in the config, with the
// "did you mean" hint. Kept apart from src/hosts/from-config.ts (which builds SSH connections), so commands and faces
// that only need a name never load the connection code.
import { UserError } from '../errors.ts';
import { closest } from '../suggest.ts';
import type { LoadedConfig } from './load.ts';

export function hostNames(loaded: LoadedConfig): string[] {
  return Object.keys(loaded.config.hosts);
}

export function resolveHostName(loaded: LoadedConfig, name: string | undefined): string {
  const names = hostNames(loaded);
  const chosen = name ?? loaded.defaultHost;
  if (!chosen)
    throw new UserError('no host given and no default_host configured', `pass --host with one of: ${names.join(', ')}`);
  if (!loaded.config.hosts[chosen]) {
    const s = closest(chosen, names);
    throw new UserError(
      `unknown host '${chosen}'`,
      s ? `did you mean '${s}'? hosts: ${names.join(', ')}` : `hosts: ${names.join(', ')}`,
    );
  }
  return chosen;
}

/**
 * The hosts a launch runs on: one host, a host group (host_groups in the config), or `a,b,...` for one multi-node
 * server; node 0 (the head) first. With the group comes its rendezvous port, when it sets one.
 */
export function resolveLaunchHosts(
  loaded: LoadedConfig,
  name: string | undefined,
): { hosts: string[]; distPort?: number; group?: string } {
  const group = name ? loaded.config.host_groups[name] : undefined;
  if (group) return { hosts: [...group.hosts], distPort: group.dist_port, group: name };
  if (name?.includes(',')) {
    const hosts = name.split(',').map((h) => h.trim());
    hosts.forEach((h) => {
      resolveHostName(loaded, h);
    });
    if (new Set(hosts).size !== hosts.length)
      throw new UserError(`'${name}' names a host twice`, 'list each node once, the head first');
    return { hosts };
  }
  if (!name || loaded.config.hosts[name]) return { hosts: [resolveHostName(loaded, name)] };
  const groups = Object.keys(loaded.config.host_groups);
  const s = closest(name, [...hostNames(loaded), ...groups]);
  throw new UserError(
    `unknown host or host group '${name}'`,
    `${s ? `did you mean '${s}'? ` : ''}hosts: ${hostNames(loaded).join(', ')}; ${
      groups.length ? `groups: ${groups.join(', ')}` : 'no host groups: define one under host_groups in the config'
    }`,
  );
}
