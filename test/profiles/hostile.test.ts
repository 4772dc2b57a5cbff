// Values that a shell would execute must reach SGLang literally. Each hostile value is either refused when the
// profile loads, or rendered so that the real /bin/sh, running the displayed command line, passes it through untouched.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandLine, loadProfiles, renderLaunch } from '../../src/profiles/index.ts';
import { loadError, profileDir } from './helpers.ts';

const work = mkdtempSync(join(tmpdir(), 'hostile-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const CANARY = join(work, 'canary');

// Stands in for python: prints each argument on its own line, then the environment variables under test.
const FAKE_PY = join(work, 'fakepy');
writeFileSync(
  FAKE_PY,
  `#!/bin/sh\nprintf '%s\\n' "$@"\nfor v in V1 V2 V3 V4 V5 V6; do eval "printf 'ENV %s=%s\\\\n' $v \\"\\$$v\\""; done\n`,
);
chmodSync(FAKE_PY, 0o755);

const BAD = [
  `$(touch ${CANARY})`,
  `\`touch ${CANARY}\``,
  `; touch ${CANARY}`,
  `'; touch ${CANARY}; '`,
  `"; touch ${CANARY}; "`,
  `a|touch ${CANARY}&`,
  `$HOME \${PATH} * ? [a] ~ !x > ${CANARY}`,
  '',
];

const y = (v: unknown) => JSON.stringify(v);

function runLine(line: string): { out: string[]; env: Record<string, string> } {
  const r = spawnSync('/bin/sh', ['-c', line], { cwd: work, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const lines = r.stdout.replace(/\n$/, '').split('\n');
  const env: Record<string, string> = {};
  for (const l of lines.filter((l) => l.startsWith('ENV '))) {
    const [k, ...v] = l.slice(4).split('=');
    env[k!] = v.join('=');
  }
  return { out: lines.filter((l) => !l.startsWith('ENV ')), env };
}

describe('hostile values that are valid data', () => {
  it('keeps them literal through sh -c "$(commandLine)" and never runs them', () => {
    const env = Object.fromEntries(BAD.slice(0, 6).map((v, i) => [`V${i + 1}`, v]));
    const extra = ['--foo', BAD[0], `--bar=${BAD[1]}`, '--baz', BAD[2], BAD[3], '--qux', '-1', '--empty', ''];
    const dir = profileDir({
      'hostile.yaml': [
        `model_path: ${y(`org/model ${BAD[0]}${BAD[1]}${BAD[2]}`)}`,
        `served_model_name: ${y(BAD[4])}`,
        `env: ${y(env)}`,
        `extra_args: ${y(extra)}`,
        '',
      ].join('\n'),
    });
    const p = loadProfiles(dir).get('hostile');
    for (const dialect of ['nsa', 'dsa'] as const) {
      const r = renderLaunch(p, { python: FAKE_PY, dialect });
      const { out, env: seen } = runLine(commandLine(r));
      expect(out).toEqual(r.argv.slice(1));
      expect(out).toContain(`org/model ${BAD[0]}${BAD[1]}${BAD[2]}`);
      expect(out).toContain(BAD[4]);
      expect(out.slice(-extra.length)).toEqual(extra);
      expect(seen).toEqual(env);
    }
    expect(existsSync(CANARY)).toBe(false);
  });

  it('quotes every remaining shell metacharacter in env values', () => {
    const p = loadProfiles(
      profileDir({ 'p.yaml': `model_path: m\nenv: ${y({ V1: BAD[6], V2: BAD[7], V3: 'a"b\\c' })}\n` }),
    ).get('p');
    const { env } = runLine(commandLine(renderLaunch(p, { python: FAKE_PY })));
    expect(env).toMatchObject({ V1: BAD[6], V2: '', V3: 'a"b\\c' });
    expect(existsSync(CANARY)).toBe(false);
  });
});

describe('hostile values that are refused', () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      'model_path with a newline',
      `model_path: ${y(`org/m\ntouch ${CANARY}`)}`,
      /model_path: must not contain control characters/,
    ],
    ['model_path starting with -', `model_path: ${y('--help')}`, /model_path: must not start with '-'/],
    ['model_path starting with ~', `model_path: ${y('~/models/glm')}`, /model_path: must not start with '~'/],
    [
      'served_model_name starting with -',
      `model_path: m\nserved_model_name: "-x"`,
      /served_model_name: must not start with '-'/,
    ],
    [
      'env value with a newline',
      `model_path: m\nenv: ${y({ A: `x\ntouch ${CANARY}` })}`,
      /env\.A: must not contain a newline or NUL/,
    ],
    ['env value with NUL', `model_path: m\nenv: ${y({ A: 'x\u0000y' })}`, /env\.A: must not contain a newline or NUL/],
    [
      'env name with shell syntax',
      `model_path: m\nenv: ${y({ [`A;touch ${CANARY}`]: 'x' })}`,
      /must be an environment variable name/,
    ],
    [
      'env name starting with a digit',
      `model_path: m\nenv: ${y({ '1A': 'x' })}`,
      /must be an environment variable name/,
    ],
    [
      'extra arg with a newline',
      `model_path: m\nextra_args: ${y([`--a=x\ntouch ${CANARY}`])}`,
      /extra_args\[0\]: must not contain a newline or NUL/,
    ],
    [
      'extra arg with a single dash',
      `model_path: m\nextra_args: ${y(['--a', '-rf'])}`,
      /extra_args\[1\]: '-rf' starts with '-' but is not a --flag/,
    ],
    [
      'extra arg value first',
      `model_path: m\nextra_args: ${y([`; touch ${CANARY}`])}`,
      /extra_args\[0\]: .* is a value with no --flag before it/,
    ],
    [
      'extra arg flag name with shell syntax',
      `model_path: m\nextra_args: ${y([`--x;touch=1`])}`,
      /extra_args\[0\]: .* is not a --flag/,
    ],
    ['bare -- in extra args', `model_path: m\nextra_args: ${y(['--'])}`, /extra_args\[0\]: a bare '--'/],
  ];
  it.each(cases)('%s', (_what, text, re) => {
    const err = loadError({ 'p.yaml': `${text}\n` });
    expect(err.message).toMatch(re);
    expect(existsSync(CANARY)).toBe(false);
  });

  it('refuses a python that is not one executable path', () => {
    const p = loadProfiles(profileDir({ 'p.yaml': 'model_path: m\n' })).get('p');
    expect(() => renderLaunch(p, { python: '-c' })).toThrow(/invalid python/);
    expect(() => renderLaunch(p, { python: 'py\nthon' })).toThrow(/invalid python/);
    expect(() => renderLaunch(p, { python: '' })).toThrow(/invalid python/);
  });
});
