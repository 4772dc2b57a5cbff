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

  it('malformed YAML is reported with its line', () => {
    const issues = issuesOf(() => parseConfigText('hosts:\n  a: [\n', 'c.yaml'));
    expect(issues[0]?.path).toMatch(/^line \d+/);
  });

  it('the committed JSON Schema matches the zod schema', () => {
    expect(readFileSync(CONFIG_SCHEMA_PATH, 'utf8')).toBe(configJsonSchemaText());
  });
});
