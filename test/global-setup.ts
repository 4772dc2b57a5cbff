// Before the run: the compiled CLI matches the sources. After the whole run: no stand-in server started by a test
// outlives it, even when a test failed before its own cleanup. Each run marks its work directories with its own id,
// so one run's teardown never touches the servers of another run on the same machine.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/package-root.ts';

export default function setup(): () => void {
  // Tests that start the CLI run bin/glm.js, which runs the compiled dist/ as users do: bring it up to date with the
  // sources first (incremental, a few seconds when nothing changed).
  execFileSync(
    process.execPath,
    [join(PACKAGE_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: PACKAGE_ROOT,
      stdio: 'inherit',
    },
  );
  const run = randomBytes(4).toString('hex');
  // Read by test/helpers/app.ts (workers inherit the environment).
  process.env.GLM_TEST_RUN = run;
  return () => {
    const marker = `glm-server ${join(tmpdir(), `glm-work-${run}-`)}`;
    const rows = execFileSync('ps', ['-eo', 'pgid=,args='], { encoding: 'utf8' }).split('\n');
    const groups = new Set(rows.filter((r) => r.includes(marker)).map((r) => Number(r.trim().split(/\s+/)[0])));
    for (const g of groups) {
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
}
