import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_SCHEMA_PATH, configJsonSchemaText } from '../../scripts/write-schema.ts';
import { embeddedDefault, loadConfig, parseConfigText, validate } from '../../src/config/load.ts';
import { ConfigError } from '../../src/errors.ts';

function issuesOf(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

describe('config', () => {
  it('the embedded default is valid: one local host serving the stand-in', () => {
    const cfg = validate(embeddedDefault({ HOME: '/home/x' }), 'embedded default');
    expect(Object.keys(cfg.hosts)).toEqual(['standin']);
    expect(cfg.hosts.standin?.local).toBe(true);
    expect(cfg.hosts.standin?.python).toMatch(/standin\/python$/);
  });

  it('uses the embedded default when there is no file, and GLM_CONFIG when set', () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-cfg-'));
    expect(loadConfig({ XDG_CONFIG_HOME: dir, HOME: dir }).source).toBe('embedded default');
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'hosts:\n  a:\n    local: true\n');
    const l = loadConfig({ GLM_CONFIG: file, HOME: dir });
    expect(l.source).toBe(file);
    expect(l.defaultHost).toBe('a');
  });

  it('a GLM_CONFIG that points nowhere is an error that says how to fix it', () => {
    const issues = issuesOf(() => loadConfig({ GLM_CONFIG: '/nonexistent/glm.yaml' }));
    expect(issues[0]).toMatchObject({ path: 'GLM_CONFIG' });
    expect(issues[0]?.fix).toMatch(/unset GLM_CONFIG/);
  });

  it('reports every problem at once, with paths and fixes', () => {
    const issues = issuesOf(() =>
      parseConfigText(
        [
          'default_host: gpu2',
          'timeouts: { conect_s: 3 }',
          'hosts:',
          '  gpu1:',
          '    ssh: { host: 10.0.0.1, prot: 22, jump: bastoin }',
          '    pyhton: /usr/bin/python3',
          '    flag_dialect: dsb',
          '  gpu3: {}',
        ].join('\n'),
        'c.yaml',
      ),
    );
    const byPath = Object.fromEntries(issues.map((i) => [i.path, i]));
    expect(byPath['timeouts.conect_s']?.fix).toBe("did you mean 'connect_s'?");
    expect(byPath['hosts.gpu1.ssh.prot']?.fix).toBe("did you mean 'port'?");
    expect(byPath['hosts.gpu1.pyhton']?.fix).toBe("did you mean 'python'?");
    expect(byPath['hosts.gpu1.flag_dialect']?.message).toMatch(/'dsb' is not one of auto, nsa, dsa/);
    expect(issues.length).toBeGreaterThanOrEqual(4);
  });

  it('cross-checks: a host must be reachable one way, jump and default_host must exist', () => {
    const issues = issuesOf(() =>
      parseConfigText(
        'default_host: gpu2\nhosts:\n  gpu1:\n    ssh: { host: h, jump: bastoin }\n  gpu3: {}\n  bastion:\n    ssh: { host: b }\n',
        'c.yaml',
      ),
    );
    const paths = issues.map((i) => `${i.path}: ${i.message} (${i.fix ?? ''})`);
    expect(paths).toContain("hosts.gpu1.ssh.jump: names unknown host 'bastoin' (did you mean 'bastion'?)");
    expect(paths.some((p) => p.startsWith('hosts.gpu3: says neither'))).toBe(true);
    expect(paths.some((p) => p.startsWith("default_host: names unknown host 'gpu2'"))).toBe(true);
  });

  it('host groups: known hosts, listed once, a head the other nodes can reach, no name shared with a host', () => {
    const issues = issuesOf(() =>
      parseConfigText(
        [
          'hosts:',
          '  a: { ssh: { host: gpu-a.lan } }',
          '  b: { ssh: { host: 10.0.0.2 } }',
          'host_groups:',
          '  pair: { hosts: [a, bb] }',
          '  twice: { hosts: [b, b] }',
          '  b: { hosts: [b, a] }',
          '',
        ].join('\n'),
        'c.yaml',
      ),
    );
    const paths = issues.map((i) => `${i.path}: ${i.message} (${i.fix ?? ''})`);
    expect(paths).toContain("host_groups.pair.hosts.1: names unknown host 'bb' (did you mean 'b'?)");
    expect(paths).toContain("host_groups.twice.hosts.1: lists 'b' twice ()");
    expect(paths).toContain('host_groups.b: has the name of a host (give the group a name no host has)');
    // a's ssh.host is a DNS name: the workers need an address for it.
    expect(paths).toContain(
      "hosts.a.dist_addr: is needed: 'a' is the head of group 'pair' and its ssh.host is not an IP address (set dist_addr to the IP address the other nodes reach it on)",
    );
  });

  it('a host group of one host is a schema error', () => {
    const issues = issuesOf(() =>
      parseConfigText('hosts:\n  a: { local: true }\nhost_groups:\n  solo: { hosts: [a] }\n', 'c.yaml'),
    );
    expect(issues.map((i) => `${i.path}: ${i.message}`)).toContain(
      'host_groups.solo.hosts: a group has at least two hosts',
    );
  });

  it('malformed YAML is reported with its line', () => {
    const issues = issuesOf(() => parseConfigText('hosts:\n  a: [\n', 'c.yaml'));
    expect(issues[0]?.path).toMatch(/^line \d+/);
  });

  it('the committed JSON Schema matches the zod schema', () => {
    expect(readFileSync(CONFIG_SCHEMA_PATH, 'utf8')).toBe(configJsonSchemaText());
  });
});
