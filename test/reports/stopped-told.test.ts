// An attempt whose failure the bot told while the server still ran, then stopped by a person, is a failing attempt
// for draft-issue: recordHang keeps a hung server live with its watchdog_timeout classification, and the early alert
// writes a crash and its crash_seen event while the process still runs (NCCL ranks hang after an error; SGLang's HTTP
// server outlives its scheduler). Only a failure record alone (`survivable`) the server may have served on after is
// left out (stopped-record.test.ts has the unmarked old rows). Planted in a real ledger as those paths write them.
import { beforeAll, describe, expect, it } from 'vitest';
import type { IssueDraft } from '../../src/reports/issue.ts';
import { launchRow, type TestBot } from '../helpers/app.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
let b: TestBot;
const MODEL = 'Qwen/Qwen2.5-0.5B-Instruct';

function plant(tp: string, classification: Record<string, unknown>, event: string): number {
  const engine = b.app.engine;
  const a = engine.attempts.open(launchRow(tp, engine.clock.now(), MODEL));
  engine.attempts.update(a.id, { classification });
  engine.attempts.event(a.id, engine.clock.now(), event, { category: classification.category });
  // what stop.ts writes when a person stops it
  engine.attempts.finish(a.id, {
    status: 'stopped',
    outcome: 'stopped',
    detail: 'stopped by alice (TERM)',
    exitCode: 143,
    at: engine.clock.now(),
  });
  return a.id;
}

const base = { evidence: [] as Array<{ line: number; text: string }>, rank: 0, confidence: 0.9 };

beforeAll(() => {
  b = shared.bot();
  // #1 hung, then stopped
  plant(
    '1',
    { ...base, category: 'watchdog_timeout', phase: 'decode', summary: 'no log line for 15m (hang)', dedupKey: 'hang' },
    'hang',
  );
  // #2 a crash the early alert told, then stopped
  const ima = 'RuntimeError: CUDA error: an illegal memory access was encountered';
  plant(
    '2',
    {
      ...base,
      category: 'illegal_memory_access',
      phase: 'decode',
      summary: ima,
      evidence: [{ line: 9, text: ima }],
      dedupKey: 'ima',
    },
    'crash_seen',
  );
  // #3 a failure record alone (survivable) told by an early alert of before the survival rules, then stopped
  const rec = '[rank0] NCCL WARN Connection closed by peer, retrying';
  plant(
    '4',
    {
      ...base,
      category: 'nccl_error',
      phase: 'runtime',
      summary: rec,
      evidence: [{ line: 12, text: rec }],
      dedupKey: 'nccl',
      survivable: true,
    },
    'crash_seen',
  );
});

describe('draft-issue and failures told before a person stopped the server', () => {
  it('a hung attempt then stopped is a bug report of its hang', async () => {
    const r = await b.run('draft-issue 1 --no-search --json');
    expect(r.exitCode, r.text).toBe(0);
    const d = r.data as IssueDraft;
    expect(d.primary).toBe(1);
    expect(d.title).toMatch(/watchdog timeout/i);
  });

  it('a crash told early then stopped is a failing attempt: the newest one, the report is about it', async () => {
    const r = await b.run('draft-issue --no-search --json');
    expect(r.exitCode, r.text).toBe(0);
    const d = r.data as IssueDraft;
    expect(d.primary).toBe(2);
    expect(d.attempts).toEqual([1, 2]);
    expect(d.title).toMatch(/illegal memory access/i);
    expect(d.body).toMatch(/the others: watchdog_timeout/);
  });

  it('a failure record alone the server may have served on, then stopped, is still no bug report (exit 2)', async () => {
    const r = await b.run('draft-issue 3');
    expect(r.exitCode).toBe(2);
    expect(r.text).toMatch(/none of these attempts failed: a bug report needs a crash/);
  });
});
