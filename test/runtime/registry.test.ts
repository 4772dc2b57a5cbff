import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../commands/index.ts';
import { PACKAGE_ROOT } from '../../src/config/load.ts';
import { UserError } from '../../src/errors.ts';
import { parseArgs, validateArgs } from '../../src/runtime/args.ts';
import { tokenize } from '../../src/runtime/parse.ts';

describe('command registry', () => {
  it('has exactly one command per file in commands/', () => {
    const files = readdirSync(join(PACKAGE_ROOT, 'commands'))
      .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(COMMANDS.map((c) => c.name).sort()).toEqual(files);
  });

  it('commands look up host names in the config, never through the code that builds SSH connections', () => {
    const dir = join(PACKAGE_ROOT, 'commands');
    const reached: string[] = [];
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(join(dir, f), 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\()\s*'([^']+)'/g)) {
        const spec = m[1]!;
        const target = spec.startsWith('.') ? relative(PACKAGE_ROOT, resolve(dir, spec)) : spec;
        if (/^src\/hosts\/(?!types\.ts$)|^(ssh2|@slack\/bolt|node-cron|node:fs)/.test(target))
          reached.push(`${f}: ${target}`);
      }
    }
    expect(reached).toEqual([]);
  });

  it('every command documents usage and examples that parse', () => {
    for (const c of COMMANDS) {
      expect(c.summary.length).toBeGreaterThan(10);
      expect(c.usage.startsWith(c.name)).toBe(true);
      for (const ex of c.examples) {
        const [name, ...rest] = tokenize(ex);
        expect(name).toBe(c.name);
        expect(() => validateArgs(c, parseArgs(c, rest))).not.toThrow();
      }
    }
  });

  it('tokenizes quotes without expanding anything', () => {
    expect(tokenize(`launch "a b" '$(x)' \`y\` --host=h`)).toEqual(['launch', 'a b', '$(x)', '`y`', '--host=h']);
    expect(() => tokenize('launch "open')).toThrow(UserError);
  });

  it('rejects unknown flags with a suggestion', () => {
    const launch = COMMANDS.find((c) => c.name === 'launch')!;
    let err: unknown;
    try {
      parseArgs(launch, ['p', '--dryrun']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe('launch: unknown option --dryrun');
    expect((err as UserError).hint).toMatch(/^did you mean --dry-run\?/);
    expect(() => validateArgs(launch, parseArgs(launch, []))).toThrow(/PROFILE is required/);
  });
});
