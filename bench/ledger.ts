// Issue 15's ledger figures: `attempts`, `next` and `draft-issue` on a ledger of 100 attempts against one of 100,000
// (generated), both ending in the same 100-attempt campaign, so a command that reads only what it shows costs the
// same on both. Run on real SQLite files through the command registry.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate } from '../src/config/load.ts';
import { PACKAGE_ROOT } from '../src/package-root.ts';
import { flagView } from '../src/profiles/index.ts';
import { makeBot, type TestBot } from '../test/helpers/app.ts';
import { ledgerDb } from '../test/helpers/ledger.ts';
import { ms, pct, type Row, ratio } from './stats.ts';

const RUNS = 5;

function bot(total: number): TestBot {
  const dataDir = mkdtempSync(join(tmpdir(), `glm-bench-ledger-${total}-`));
  const workdir = join(dataDir, 'host');
  mkdirSync(workdir);
  const loaded = {
    config: validate({ default_host: 'gpu', hosts: { gpu: { local: true, workdir } } }, 'bench config'),
    source: 'bench config',
    dataDir,
    profilesDir: join(PACKAGE_ROOT, 'profiles'),
    defaultHost: 'gpu',
  };
  const b = makeBot(loaded, { dataDir, workdir });
  fill(b, total);
  return b;
}

/** `total` finished attempts: older ones on other hosts and models, then the newest 100 on gpu with glm5-nvfp4. */
function fill(b: TestBot, total: number): void {
  const db = ledgerDb(b.app.engine);
  const campaign = flagView(b.app.engine.profiles.get('glm5-nvfp4'));
  const insert = db.prepare(`INSERT INTO attempts
    (host, profile, profile_json, flags_json, argv_json, env_json, command_line, port, gpus, actor, origin, status,
     active, outcome, classification_json, started_at, ended_at, model_path)
    VALUES (?, ?, '{}', ?, '[]', '{}', 'python -m sglang.launch_server ...', 30000, '0,1', 'bench', 'terminal', ?, 0, ?, ?,
     ?, ?, ?)`);
  const nan = JSON.stringify({
    category: 'nan_in_sampling',
    phase: 'decode',
    dedupKey: 'nan_in_sampling/nan-probability/x',
    summary: 'NaN in sampling',
    evidence: [{ line: 1, text: 'probability tensor contains either inf, nan or element < 0' }],
  });
  const t0 = Date.UTC(2024, 0, 1);
  db.transaction(() => {
    for (let i = 0; i < total; i++) {
      const current = i >= total - 100;
      const flags = current
        ? { ...campaign, 'cuda-graph-max-bs': String(8 + (i % 100)) }
        : { 'model-path': `org/model-${i % 50}`, tp: String(1 + (i % 8)), 'mem-fraction-static': `0.${50 + (i % 40)}` };
      const crashed = i % 5 < 2;
      insert.run(
        current ? 'gpu' : `old-h${i % 40}`,
        current ? 'glm5-nvfp4' : `p${i % 30}`,
        JSON.stringify(flags),
        crashed ? 'crashed' : 'stopped',
        crashed ? 'nan_in_sampling' : 'stopped',
        crashed ? nan : null,
        t0 + i * 60_000,
        t0 + i * 60_000 + 30_000,
        flags['model-path'],
      );
    }
  })();
}

async function time(b: TestBot, cmd: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const r = await b.run(cmd);
    times.push(performance.now() - t);
    if (r.exitCode !== 0) throw new Error(`${cmd} failed: ${r.text.slice(0, 300)}`);
  }
  return pct(times, 50);
}

export async function benchLedger(): Promise<Row[]> {
  const small = bot(100);
  const big = bot(100_000);
  const rows: Row[] = [];
  for (const cmd of ['attempts', 'next', 'draft-issue --no-search']) {
    const a = await time(small, cmd);
    const z = await time(big, cmd);
    rows.push({
      metric: `${cmd.split(' ')[0]} on 100,000 attempts (median of ${RUNS})`,
      value: ms(z),
      reference: `${ms(a)} on 100 attempts`,
      ratio: ratio(z, a),
      target: '< 2x',
    });
  }
  for (const b of [small, big]) await b.app.close();
  return rows;
}
