// Issue 15's fleet figure: `status` over 64 hosts against 16, each host its own SSH connection (host entries on the
// loopback sshd), every host holding one live attempt whose record `status` must check there. The checks run at once,
// so 4x the hosts should cost well under 4x the time.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate } from '../src/config/load.ts';
import { PACKAGE_ROOT } from '../src/package-root.ts';
import { makeBot, seedUnwatched, standinHost, type TestBot } from '../test/helpers/app.ts';
import type { Sshd } from '../test/helpers/sshd.ts';
import { ms, pct, type Row, ratio } from './stats.ts';

const RUNS = 5;

const names = (n: number) => Array.from({ length: n }, (_, i) => `h${i}`);

function fleet(sshd: Sshd, n: number): TestBot {
  const dataDir = mkdtempSync(join(tmpdir(), `glm-bench-fleet-${n}-`));
  const hosts: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    const workdir = join(dataDir, `h${i}`);
    mkdirSync(workdir);
    hosts[`h${i}`] = standinHost(sshd, workdir);
  }
  const loaded = {
    config: validate({ default_host: 'h0', hosts }, 'bench config'),
    source: 'bench config',
    dataDir,
    profilesDir: join(PACKAGE_ROOT, 'profiles'),
    defaultHost: 'h0',
  };
  return makeBot(loaded, { dataDir, workdir: join(dataDir, 'h0') });
}

/** Median `status --json`; `fresh`: every host connected anew each run (else over the pool's kept connections). */
async function statusTime(sshd: Sshd, n: number, fresh: boolean): Promise<number> {
  const b = fleet(sshd, n);
  const times: number[] = [];
  if (!fresh) {
    seedUnwatched(b.app, names(n));
    await b.run('status --json');
  }
  for (let i = 0; i < RUNS; i++) {
    seedUnwatched(b.app, names(n));
    if (fresh) await b.app.engine.pool.closeAll();
    const t = performance.now();
    const r = await b.run('status --json');
    times.push(performance.now() - t);
    const closed = (JSON.parse(r.text) as { closedSinceLastLook: number[] }).closedSinceLastLook;
    if (r.exitCode !== 0 || closed.length !== n) throw new Error(`status over ${n} hosts: ${r.text.slice(0, 300)}`);
  }
  await b.app.close();
  return pct(times, 50);
}

export async function benchStatusHosts(sshd: Sshd): Promise<Row[]> {
  const rows: Row[] = [];
  for (const fresh of [false, true]) {
    const t16 = await statusTime(sshd, 16, fresh);
    const t64 = await statusTime(sshd, 64, fresh);
    rows.push({
      metric: `status over 64 hosts, one live attempt each, ${fresh ? 'connecting to every host first' : 'connections kept (a running bot)'} (median of ${RUNS})`,
      value: ms(t64),
      reference: `${ms(t16)} over 16 hosts`,
      ratio: ratio(t64, t16),
      // Connecting is an SSH key exchange per host, CPU work on both ends on one 2-core machine here: it grows with
      // the hosts whatever the concurrency.
      target: fresh ? '- (key exchanges: CPU-bound here)' : '< 2x',
    });
  }
  return rows;
}
