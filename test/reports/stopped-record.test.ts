// A stopped attempt is no failing attempt, whatever its ledger row holds: rows written before the survival rules
// (src/logs/diagnosis.ts showsCrash) could keep a failure record the server served on after as the classification of
// an attempt a person then stopped. draft-issue must neither report it, nor count it among the configurations that
// failed, nor choose it as the report's crash. Planted in a real ledger, drafted through the command.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Attempt } from '../../src/ledger/attempts.ts';
import type { IssueDraft } from '../../src/reports/issue.ts';
import { launchRow, type TestBot } from '../helpers/app.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
let b: TestBot;
const MODEL = 'Qwen/Qwen2.5-0.5B-Instruct';

const crash = (category: string, summary: string) => ({
  category,
  phase: 'runtime',
  summary,
  evidence: [{ line: 12, text: summary }],
  rank: 0,
  dedupKey: `${category}:test`,
  confidence: 0.9,
});
/** An NCCL warning record a serving server logged and served on after; the old rows kept it, unmarked. */
const oldRecord = crash('nccl_error', '[rank0] NCCL WARN Connection closed by peer, retrying');

function plant(tp: string, end: { status: 'crashed' | 'stopped'; outcome: string }, classification: unknown) {
  const engine = b.app.engine;
  const a: Attempt = engine.attempts.open(launchRow(tp, engine.clock.now(), MODEL));
  engine.attempts.update(a.id, { classification });
  engine.attempts.finish(a.id, { ...end, detail: end.outcome, exitCode: null, at: engine.clock.now() });
  return a.id;
}

beforeAll(() => {
  b = shared.bot();
  // #1 crashed (OOM); #2 and #3 stopped by a person, each row holding the old NCCL record; #4 crashed (OOM) again;
  // #5, the newest, stopped with the record too.
  plant(
    '1',
    { status: 'crashed', outcome: 'cuda_oom' },
    crash('cuda_oom', 'torch.OutOfMemoryError: CUDA out of memory'),
  );
  plant('2', { status: 'stopped', outcome: 'stopped' }, oldRecord);
  plant('4', { status: 'stopped', outcome: 'stopped' }, oldRecord);
  plant(
    '8',
    { status: 'crashed', outcome: 'cuda_oom' },
    crash('cuda_oom', 'torch.OutOfMemoryError: CUDA out of memory'),
  );
  plant('8', { status: 'stopped', outcome: 'stopped' }, oldRecord);
});

describe('draft-issue and attempts a person stopped', () => {
  it('drafts around the newest crash, counts only the crashes as failing, and never names the stopped rows’ record', async () => {
    const r = await b.run('draft-issue --no-search --json');
    expect(r.exitCode, r.text).toBe(0);
    const d = r.data as IssueDraft;
    // The newest failing attempt is #4 (not #5, stopped), and the report is about its OOM, not the record that two
    // stopped rows share (more often than the OOM's one crash... before the fix, by count).
    expect(d.primary).toBe(4);
    expect(d.attempts).toEqual([1, 2, 3, 4]);
    expect(d.body).toMatch(/2 of the 4 configurations tried failed this way\./);
    expect(d.body).not.toMatch(/the others: nccl_error/);
    expect(d.body).not.toMatch(/NCCL WARN/);
    expect(d.title).not.toMatch(/NCCL|nccl/);
  });

  it('named attempts that were all stopped are no bug report: the command says so (exit 2)', async () => {
    const r = await b.run('draft-issue 2 3 5');
    expect(r.exitCode).toBe(2);
    expect(r.text).toMatch(/none of these attempts failed: a bug report needs a crash/);
  });
});
