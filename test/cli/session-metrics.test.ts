// The interactive session (a long-lived mode with the scheduler) serves /metrics and /healthz when GLM_METRICS_PORT
// is set: run as users run it (bin/glm.js, compiled), driven through its stdin.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { freePort } from '../helpers/sshd.ts';

function session(env: Record<string, string>) {
  const home = mkdtempSync(join(tmpdir(), 'glm-session-'));
  const proc = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'glm.js')], {
    env: {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => {
    out += String(d);
  });
  proc.stderr.on('data', (d) => {
    out += String(d);
  });
  const exited = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
  return { proc, exited, out: () => out };
}

async function until(what: string, f: () => Promise<boolean>, ms = 15_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await f().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('interactive session metrics', () => {
  it('serves /metrics with the commands run and /healthz, on GLM_METRICS_PORT', async () => {
    const port = await freePort();
    const s = session({ GLM_METRICS_PORT: String(port) });
    const metrics = () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
    await until('metrics', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok);
    s.proc.stdin.write('status\n');
    await until('status counted', async () =>
      /glm_command_duration_seconds_count\{command="status",result="ok"\} 1/.test(await metrics()),
    );
    expect(await metrics()).toMatch(/^glm_outbox_messages\{status="sent"\} \d+$|^# TYPE glm_outbox_messages gauge$/m);
    s.proc.stdin.end('exit\n');
    expect(await s.exited).toBe(0);
  });

  it('refuses a GLM_METRICS_PORT that is not a port, with exit code 2', async () => {
    const s = session({ GLM_METRICS_PORT: 'http://x' });
    s.proc.stdin.end();
    expect(await s.exited).toBe(2);
    expect(s.out()).toMatch(/GLM_METRICS_PORT must be a port number .*got 'http:\/\/x'/);
  });
});
