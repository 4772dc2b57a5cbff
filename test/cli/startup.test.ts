// The CLI as users run it (bin/glm.js over the compiled dist/, built by the test run's global setup as `npm ci`
// builds it): a one-shot command loads only what it needs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/load.ts';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { terminalContext } from '../helpers/app.ts';

function run(
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): { out: string; stdout: string; code: number | null; loaded: string[] } {
  const home = mkdtempSync(join(tmpdir(), 'glm-cli-'));
  const record = join(home, 'imports.txt');
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      join(PACKAGE_ROOT, 'test', 'helpers', 'record-imports.mjs'),
      join(PACKAGE_ROOT, 'bin', 'glm.js'),
      ...args,
    ],
    {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        XDG_DATA_HOME: join(home, 'data'),
        GLM_RECORD_IMPORTS: record,
        ...extraEnv,
      },
    },
  );
  return {
    out: r.stdout + r.stderr,
    stdout: r.stdout,
    code: r.status,
    loaded: readFileSync(record, 'utf8').trim().split('\n'),
  };
}

// What a one-shot command must not load unless it uses it (the findings index and the signature catalog are read on
// first use; their small modules may load).
const heavy = [
  '/node_modules/ssh2/',
  '/node_modules/@slack/',
  '/node_modules/prom-client/',
  '/node_modules/@resvg/',
  '/src/lifecycle/launch.',
  '/src/lifecycle/watch.',
  '/src/smoke/run.',
  '/src/bench-load/',
  '/src/reports/',
  '/src/schedule/scheduler.',
  // Autopilot: only its knob table, SLO parser (the command's arguments) and the registry of runs may load.
  '/src/autopilot/run.',
  '/src/autopilot/report.',
  '/src/autopilot/store.',
  '/src/lifecycle/slurm/',
];

/**
 * `help` answers from the command definitions alone: no zod (~15 MB of a process), no config, ledger, logger or host
 * code (issue 15: `glm help` under 60 MB resident).
 */
const heavyForHelp = [
  ...heavy,
  '/node_modules/zod/',
  '/node_modules/better-sqlite3/',
  '/node_modules/pino/',
  '/node_modules/yaml/',
  '/node_modules/node-cron/',
  '/src/config/load.',
  '/src/config/schema.',
  '/src/ledger/',
  '/src/hosts/',
  '/src/app.',
];

/** What `status` may not load either: it reconciles hosts (so the server backends load), but never runs autopilot. */
const heavyForStatus = [
  '/node_modules/ssh2/',
  '/node_modules/@slack/',
  '/src/autopilot/run.',
  '/src/autopilot/report.',
  '/src/autopilot/store.',
];

describe('glm CLI start-up', () => {
  it('runs the compiled code, and `help` loads none of Bolt, ssh2, the lifecycle, smoke, bench or reports', () => {
    const r = run(['help']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/^commands:/m);
    expect(r.out).toMatch(/ launch +start an SGLang server/);
    expect(r.loaded.some((u) => u.includes('/dist/src/cli/main.js'))).toBe(true);
    expect(r.loaded.filter((u) => u.endsWith('.ts'))).toEqual([]);
    for (const h of heavyForHelp) expect(r.loaded.filter((u) => u.includes(h))).toEqual([]);
  });

  it("one-shot `help` and `help NAME` print what the registry's help command prints, without zod, for every command", async () => {
    const home = mkdtempSync(join(tmpdir(), 'glm-cli-reg-'));
    const app = createApp({
      loaded: loadConfig({ XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data') }),
      log: pino({ level: 'silent' }),
    });
    try {
      const ctx = terminalContext(app);
      for (const words of [['help'], ...app.dispatch.commands.map((c) => ['help', c.name]), ['help', 'slack']]) {
        const r = run(words);
        const want = await app.dispatch.runArgv(words, ctx);
        expect(r.code, r.out).toBe(0);
        expect(r.stdout).toBe(`${want.text}\n`);
        expect(r.loaded.filter((u) => u.includes('/node_modules/zod/'))).toEqual([]);
      }
    } finally {
      await app.close();
    }
  });

  it("`launch --help` and `help --json` still go where they went: help for launch, and the registry's refusal (exit 2)", () => {
    const launch = run(['launch', '--help']);
    expect(launch.code, launch.out).toBe(0);
    expect(launch.out).toMatch(/^launch: start an SGLang server/);
    const json = run(['help', '--json']);
    expect(json.code).toBe(2);
    expect(json.out).toContain('help: unknown option --json');
  });

  it('help answers even beside a config file that does not load (which every other command reports, exit 2)', () => {
    const home = mkdtempSync(join(tmpdir(), 'glm-cli-bad-'));
    const config = join(home, 'config.yaml');
    writeFileSync(config, 'hosts: [not, a, map]\n');
    const help = run(['help', 'status'], { GLM_CONFIG: config });
    expect(help.code, help.out).toBe(0);
    expect(help.out).toMatch(/^status: /);
    const status = run(['status'], { GLM_CONFIG: config });
    expect(status.code).toBe(2);
    expect(status.out).toContain('hosts');
  });

  it('`status --json` on the embedded default answers without ssh2, Bolt or autopilot', () => {
    const r = run(['status', '--json']);
    expect(r.code, r.out).toBe(0);
    expect(JSON.parse(r.out).hosts[0]).toMatchObject({ host: 'standin', state: 'idle' });
    for (const h of heavyForStatus) expect(r.loaded.filter((u) => u.includes(h))).toEqual([]);
    expect(r.loaded.some((u) => u.includes('/dist/src/lifecycle/reconcile.js'))).toBe(true);
  });

  it('dist/ imports no .ts file (every relative import, static or dynamic, was rewritten to .js)', () => {
    const bad: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.js') && /(?:from |import\()\s*['"]\.{1,2}\/[^'"]*\.ts['"]/.test(readFileSync(p, 'utf8')))
          bad.push(p);
      }
    };
    walk(join(PACKAGE_ROOT, 'dist'));
    expect(bad).toEqual([]);
  });
});
