// status reconciles every host's live attempt at once, not one host after the other (npm run bench times it over 16
// and 64 hosts): counted on real local hosts whose exec is watched, not replaced.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validate } from '../../src/config/load.ts';
import type { RemoteHost } from '../../src/hosts/types.ts';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { makeBot } from '../helpers/app.ts';
import { ledgerDb } from '../helpers/ledger.ts';

describe('reconcile', () => {
  it('checks the hosts of all live attempts concurrently, and closes the ones their hosts do not know', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'glm-reconcile-'));
    const hosts: Record<string, unknown> = {};
    for (let i = 0; i < 6; i++) {
      const workdir = join(dataDir, `h${i}`);
      mkdirSync(workdir);
      hosts[`h${i}`] = { local: true, workdir };
    }
    const loaded = {
      config: validate({ default_host: 'h0', hosts }, 'test config'),
      source: 'test config',
      dataDir,
      profilesDir: join(PACKAGE_ROOT, 'profiles'),
      defaultHost: 'h0',
    };
    const b = makeBot(loaded, { dataDir, workdir: join(dataDir, 'h0') });
    const insert = ledgerDb(b.app.engine).prepare(`INSERT INTO attempts
      (host, profile, profile_json, flags_json, argv_json, env_json, command_line, port, actor, origin, status, active,
       pgid, pgid_start, started_at, model_path)
      VALUES (?, 'small', '{}', '{}', '[]', '{}', 'x', 30000, 't', 'terminal', 'running', 1, 4242, 'x', 1, '')`);
    for (let i = 0; i < 6; i++) insert.run(`h${i}`);
    // Count execs in flight across the hosts (the real exec runs).
    let inFlight = 0;
    let most = 0;
    const get = b.app.engine.pool.get.bind(b.app.engine.pool);
    b.app.engine.pool.get = (name: string): RemoteHost => {
      const h = get(name);
      return {
        ...h,
        async exec(argv, opts) {
          inFlight++;
          most = Math.max(most, inFlight);
          try {
            return await h.exec(argv, opts);
          } finally {
            inFlight--;
          }
        },
      };
    };
    const r = await b.run('status --json');
    expect(r.exitCode, r.text).toBe(0);
    expect(JSON.parse(r.text).closedSinceLastLook).toEqual([1, 2, 3, 4, 5, 6]);
    expect(most).toBe(6);
    await b.app.close();
  });
});
