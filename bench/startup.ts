// Issue 15's start-up figures: `glm help` and `glm status --json` (embedded default, fresh data directory) as users
// run them (bin/glm.js, compiled dist/), each against `node -e 1` measured the same way in the same run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PACKAGE_ROOT } from '../src/package-root.ts';
import { ms, pct, type Row, ratio } from './stats.ts';

const RUNS = 9;

/** Runs `cmd args` RUNS times (bin/glm.js through its own first line, as `npx glm` does). */
function measure(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): { wallMs: number; rssKb: number; cpuMs: number } {
  const walls: number[] = [];
  const rss: number[] = [];
  const cpu: number[] = [];
  const rssFile = join(mkdtempSync(join(tmpdir(), 'glm-bench-rss-')), 'rss');
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const r = spawnSync(cmd, args, {
      cwd: PACKAGE_ROOT,
      env: {
        ...env,
        // The same node first on PATH for `#!/usr/bin/env node` as for the reference.
        PATH: `${dirname(process.execPath)}:${env.PATH ?? ''}`,
        NODE_OPTIONS: `--import=${join(PACKAGE_ROOT, 'bench', 'rss-report.mjs')}`,
        GLM_BENCH_RSS_FILE: rssFile,
      },
      encoding: 'utf8',
    });
    walls.push(performance.now() - t);
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    const u = JSON.parse(readFileSync(rssFile, 'utf8')) as { rssKb: number; cpuUs: number };
    rss.push(u.rssKb);
    cpu.push(u.cpuUs / 1000);
  }
  return { wallMs: pct(walls, 50), rssKb: pct(rss, 50), cpuMs: pct(cpu, 50) };
}

export function benchStartup(): Row[] {
  const home = mkdtempSync(join(tmpdir(), 'glm-bench-home-'));
  // No config file: the embedded default (the local stand-in host), with a data directory of its own.
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
  };
  const node = measure(process.execPath, ['-e', '1'], env);
  const glm = join(PACKAGE_ROOT, 'bin', 'glm.js');
  const help = measure(glm, ['help'], env);
  const status = measure(glm, ['status', '--json'], env);
  const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;
  const rows = (what: string, m: typeof help, wallTarget: string, rssTarget: string): Row[] => [
    {
      metric: `${what}: wall, median of ${RUNS}`,
      value: ms(m.wallMs),
      reference: `${ms(node.wallMs)} (node -e 1)`,
      ratio: ratio(m.wallMs, node.wallMs),
      target: wallTarget,
    },
    {
      // CPU time is what the machine's other load cannot inflate (wall time on a busy 2-core machine can).
      metric: `${what}: CPU time (user + system), median`,
      value: ms(m.cpuMs),
      reference: `${ms(node.cpuMs)} (node -e 1)`,
      ratio: ratio(m.cpuMs, node.cpuMs),
      target: '-',
    },
    {
      metric: `${what}: peak RSS`,
      value: mb(m.rssKb),
      reference: `${mb(node.rssKb)} (node -e 1)`,
      ratio: ratio(m.rssKb, node.rssKb),
      target: rssTarget,
    },
  ];
  return [...rows('glm help', help, '< 300 ms', '< 60 MB'), ...rows('glm status --json', status, '-', '-')];
}
