// A config whose hosts are a test host group (network namespaces or loopback sshds, see netns.ts), each serving the
// SGLang stand-in with its own simulated GPUs, joined as the host group `pair` (node 0 first).
import { join } from 'node:path';
import { type LoadedConfig, PACKAGE_ROOT, validate } from '../../src/config/load.ts';
import { standinHost } from './app.ts';
import type { NetHost } from './netns.ts';
import { userDir } from './sshd.ts';

export function groupConfig(
  hosts: NetHost[],
  opts: { nodeEnv?: Array<Record<string, string>>; profilesDir?: string } = {},
): LoadedConfig {
  const workdirs = hosts.map(() => userDir(`glm-work-${process.env.GLM_TEST_RUN ?? 'manual'}-`));
  const entries = hosts.map((h, i) => [h.name, standinHost(h, workdirs[i]!, h.address, opts.nodeEnv?.[i])]);
  const config = validate(
    {
      default_host: hosts[0]!.name,
      timeouts: { connect_s: 5, command_s: 20, keepalive_s: 2, ready_s: 60, stop_grace_s: 2 },
      hosts: Object.fromEntries(entries),
      host_groups: { pair: { hosts: hosts.map((h) => h.name) } },
    },
    'test config',
  );
  return {
    config,
    source: 'test config',
    dataDir: userDir('glm-data-'),
    profilesDir: opts.profilesDir ?? join(PACKAGE_ROOT, 'profiles'),
    defaultHost: hosts[0]!.name,
  };
}
