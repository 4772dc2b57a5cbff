// Issue 12 item 8: hostile files and paths get a clear error and exit code 2, never "internal error": a YAML alias
// bomb ("billion laughs") as the config or as a profile file, a NUL byte or an over-long name as a path (in the
// config, in GLM_CONFIG, typed into the session). The real CLI, as a person runs it.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function glm(args: string[], opts: { env?: Record<string, string>; input?: string } = {}) {
  const home = mkdtempSync(join(tmpdir(), 'glm-hostile-'));
  const env = { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...opts.env };
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/glm.js'), ...args], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    input: opts.input,
    timeout: 60_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Nine aliases of nine aliases of ...: 9^8 (43 million) strings from 9 lines. */
function bomb(): string {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 8; i++)
    lines.push(
      `a${i}: &a${i} [${Array(9)
        .fill(`*a${i - 1}`)
        .join(', ')}]`,
    );
  return `${lines.join('\n')}\n`;
}

function file(name: string, text: string): string {
  const p = join(mkdtempSync(join(tmpdir(), 'glm-hostile-f-')), name);
  writeFileSync(p, text);
  return p;
}

const LOCAL = 'hosts:\n  gpu: { local: true }\n';

describe('YAML alias bombs', () => {
  it('as the config: a config error naming the aliases, exit 2', () => {
    const cfg = file('config.yaml', `${LOCAL}${bomb()}`);
    const r = glm(['profiles'], { env: { GLM_CONFIG: cfg } });
    expect(r.out).not.toMatch(/internal error/);
    expect(r.out).toMatch(/config error in .*config\.yaml/);
    expect(r.out).toMatch(/aliases \(\*name\) expand to too much data .*billion laughs/);
    expect(r.out).toMatch(/fix: write the repeated values out/);
    expect(r.status).toBe(2);
  });

  it('as a profile file: a problem of that file, exit 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-hostile-p-'));
    cpSync(join(ROOT, 'profiles'), dir, { recursive: true });
    writeFileSync(join(dir, 'laughs.yaml'), `description: x\nmodel_path: m\n${bomb().replace(/^a/gm, 'x_a')}`);
    const cfg = file('config.yaml', `${LOCAL}profiles_dir: ${dir}\n`);
    const r = glm(['profiles'], { env: { GLM_CONFIG: cfg } });
    expect(r.out).not.toMatch(/internal error/);
    expect(r.out).toMatch(/laughs\.yaml: YAML: its aliases \(\*name\) expand to too much data/);
    expect(r.status).toBe(2);
  });
});

describe('NUL bytes and over-long names as paths', () => {
  it('in the config: each named with what is wrong, the long one not echoed back, exit 2', () => {
    const long = `/tmp/${'x'.repeat(100_000)}`;
    const cfg = file(
      'config.yaml',
      [
        'data_dir: "/tmp/a\\0b"', // a YAML escape: the value holds a real NUL
        `profiles_dir: /tmp/${'y'.repeat(300)}`,
        `hosts: { gpu: { ssh: { host: 127.0.0.1, known_hosts: ${long} } } }`,
        '',
      ].join('\n'),
    );
    const r = glm(['profiles'], { env: { GLM_CONFIG: cfg } });
    expect(r.out).not.toMatch(/internal error/);
    expect(r.out).toMatch(/data_dir: contains a NUL byte/);
    expect(r.out).toMatch(
      /profiles_dir: has a name of 300 bytes \(y{16}\.\.\.\); a file or directory name is at most 255/,
    );
    expect(r.out).toMatch(/hosts\.gpu\.ssh\.known_hosts: is 100005 bytes long; a path is at most 4095 bytes/);
    expect(r.out.length).toBeLessThan(5000);
    expect(r.status).toBe(2);
  });

  it('as GLM_CONFIG: a config error that does not print 100 kB back, exit 2', () => {
    const r = glm(['profiles'], { env: { GLM_CONFIG: `/tmp/${'x'.repeat(100_000)}` } });
    expect(r.out).toMatch(/GLM_CONFIG: is 100005 bytes long/);
    expect(r.out.length).toBeLessThan(2000);
    expect(r.status).toBe(2);
  });

  it('typed into the session: classify of a NUL path or a 300-byte name is bad input, not an internal error', () => {
    const r = glm([], { input: `classify /tmp/a\0b\nclassify /tmp/${'z'.repeat(300)}\n` });
    expect(r.out).not.toMatch(/internal error/);
    expect(r.out).toMatch(/error: classify: FILE: contains a NUL byte/);
    expect(r.out).toMatch(/error: classify: FILE: has a name of 300 bytes/);
  });
});
