// A host named by its ~/.ssh/config alias is reached the way `ssh ALIAS` would reach it: resolved by OpenSSH's own
// `ssh -G` (Include, Match, HostName, Port, User, IdentityFile, UserKnownHostsFile, ProxyJump), through a real jump
// sshd to a real target sshd, both on loopback.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type LoadedConfig, PACKAGE_ROOT, validate } from '../../src/config/load.ts';
import { ConfigError, RemoteError } from '../../src/errors.ts';
import { sshTargetFor } from '../../src/hosts/from-config.ts';
import { createSshHost } from '../../src/hosts/ssh.ts';
import { parseSshConfig, SshConfigProblem } from '../../src/hosts/ssh-config.ts';
import type { Sshd } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

// A jump host and the target behind it.
const shared = sshdWithBots({ sshds: 2 });
let jump: Sshd;
let gpu: Sshd;
let dir: string;
let sshConfig: string;

function loaded(ssh: Record<string, unknown>): LoadedConfig {
  const config = validate(
    { default_host: 'gpu', timeouts: { connect_s: 5, command_s: 10 }, hosts: { gpu: { ssh } } },
    'test config',
  );
  return {
    config,
    source: 'test config',
    dataDir: dir,
    profilesDir: join(PACKAGE_ROOT, 'profiles'),
    defaultHost: 'gpu',
  };
}

beforeAll(() => {
  [jump, gpu] = shared.sshds as [Sshd, Sshd];
  dir = mkdtempSync(join(tmpdir(), 'glm-sshcfg-'));
  // One known_hosts for both, named only in the ssh config (the bot config sets no known_hosts).
  const knownHosts = join(dir, 'pinned_hosts');
  writeFileSync(knownHosts, readFileSync(jump.knownHostsPath, 'utf8') + readFileSync(gpu.knownHostsPath, 'utf8'));
  mkdirSync(join(dir, 'conf.d'));
  // The jump host lives in an Included file.
  writeFileSync(
    join(dir, 'conf.d', 'bastion.conf'),
    [
      'Host bastion',
      '  HostName 127.0.0.1',
      `  Port ${jump.port}`,
      `  User ${jump.user}`,
      `  IdentityFile ${jump.userKeyPath}`,
      `  UserKnownHostsFile ${knownHosts}`,
      '',
    ].join('\n'),
  );
  sshConfig = join(dir, 'config');
  writeFileSync(
    sshConfig,
    [
      `Include ${join(dir, 'conf.d')}/*.conf`,
      'Host gpu-box',
      '  HostName 127.0.0.1',
      `  Port ${gpu.port}`,
      '  ProxyJump bastion',
      // User, key and known_hosts come only from a Match block.
      'Match originalhost gpu-box',
      `  User ${gpu.user}`,
      `  IdentityFile ${join(gpu.dir, 'user_%r')}`,
      `  UserKnownHostsFile ${knownHosts}`,
      '',
    ].join('\n'),
  );
  // %r expands to the remote user: the key file named by the token.
  writeFileSync(join(gpu.dir, `user_${gpu.user}`), readFileSync(gpu.userKeyPath), { mode: 0o600 });
});

describe('hosts from ~/.ssh/config via ssh -G', () => {
  it('resolves Include, Match, User, Port, IdentityFile, UserKnownHostsFile and ProxyJump', () => {
    const t = sshTargetFor(loaded({ host: 'gpu-box', ssh_config: sshConfig }), 'gpu');
    expect(t).toMatchObject({
      host: '127.0.0.1',
      port: gpu.port,
      username: gpu.user,
      knownHostsPath: join(dir, 'pinned_hosts'),
    });
    expect(String(t.privateKey)).toBe(String(readFileSync(gpu.userKeyPath)));
    expect(t.jump).toMatchObject({ host: '127.0.0.1', port: jump.port, username: jump.user });
    expect(String(t.jump?.privateKey)).toBe(String(readFileSync(jump.userKeyPath)));
  });

  it('runs a command on the target through the ProxyJump host, and fails naming the jump when it is down', async () => {
    const cfg = loaded({ host: 'gpu-box', ssh_config: sshConfig });
    const h = createSshHost(sshTargetFor(cfg, 'gpu'));
    expect((await h.exec(['echo', 'through the bastion'])).stdout).toBe('through the bastion\n');
    await h.close();
    await jump.stop();
    try {
      const h2 = createSshHost(sshTargetFor(cfg, 'gpu'));
      const err = (await h2.exec(['true']).catch((e: unknown) => e)) as RemoteError;
      expect(err).toBeInstanceOf(RemoteError);
      expect(err.message).toMatch(/through jump host gpu \(jump bastion\)/);
      await h2.close();
    } finally {
      await jump.start();
    }
  });

  it('the bot config wins over the ssh config where it sets a value', () => {
    const t = sshTargetFor(
      loaded({
        host: 'gpu-box',
        ssh_config: sshConfig,
        port: 2222,
        user: 'someone',
        key_file: jump.userKeyPath,
        known_hosts: jump.knownHostsPath,
      }),
      'gpu',
    );
    expect(t).toMatchObject({ port: 2222, username: 'someone', knownHostsPath: jump.knownHostsPath });
    expect(String(t.privateKey)).toBe(String(readFileSync(jump.userKeyPath)));
  });

  it('a broken ssh config is a config error naming the host entry, with what ssh said', () => {
    const bad = join(dir, 'bad_config');
    writeFileSync(bad, 'Host gpu-box\n  HostNmae 127.0.0.1\n');
    const err = (() => {
      try {
        sshTargetFor(loaded({ host: 'gpu-box', ssh_config: bad, key_file: gpu.userKeyPath }), 'gpu');
      } catch (e) {
        return e;
      }
    })() as ConfigError;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.issues[0]?.path).toBe('hosts.gpu.ssh.host');
    expect(err.issues[0]?.message).toMatch(/ssh -G gpu-box failed: .*Bad configuration option: hostnmae/);
    expect(err.issues[0]?.fix).toMatch(/fix the ssh config/);
  });

  it('a missing ssh_config file named in the bot config is reported, not ignored', () => {
    expect(() =>
      sshTargetFor(loaded({ host: 'gpu-box', ssh_config: join(dir, 'nope'), key_file: gpu.userKeyPath }), 'gpu'),
    ).toThrow(/Can't open user config file/);
  });

  it('ProxyCommand is refused by name, not silently bypassed', () => {
    const pc = join(dir, 'pc_config');
    writeFileSync(pc, 'Host gpu-box\n  ProxyCommand nc %h %p\n');
    expect(() => sshTargetFor(loaded({ host: 'gpu-box', ssh_config: pc, key_file: gpu.userKeyPath }), 'gpu')).toThrow(
      /uses ProxyCommand/,
    );
  });
});

describe('without an OpenSSH client', () => {
  it('reads plain Host blocks, and refuses Include and Match instead of half reading them', () => {
    expect(parseSshConfig('Host gpu\n  HostName 10.0.0.5\n  Port 2200\n  User bot\n', 'gpu')).toMatchObject({
      hostName: '10.0.0.5',
      port: 2200,
      user: 'bot',
    });
    expect(() => parseSshConfig('Include ~/.ssh/conf.d/*\nHost gpu\n  Port 1\n', 'gpu')).toThrow(
      /line 1 uses Include, which only OpenSSH's client evaluates/,
    );
    expect(() => parseSshConfig('Match host gpu\n  Port 1\n', 'gpu')).toThrow(SshConfigProblem);
  });
});
