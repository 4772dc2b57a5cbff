// Telling a scheduler's requeue (src/lifecycle/requeue.ts) on the real ledger: every follower of an attempt (launch's
// follow, the long-lived monitor, another bot process on the same data directory) asks, and each requeue is told once.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { createAttemptStore } from '../../src/ledger/attempts.ts';
import { openDb } from '../../src/ledger/db.ts';
import type { LaunchEvent } from '../../src/lifecycle/launch/types.ts';
import { requeuedAgain } from '../../src/lifecycle/requeue.ts';
import { createLogger } from '../../src/logger.ts';
import { clusterAttemptRow } from '../helpers/slurm.ts';

function ledger() {
  const file = join(mkdtempSync(join(tmpdir(), 'glm-requeue-')), 'ledger.sqlite');
  const attempts = createAttemptStore(openDb(file));
  const a = attempts.open(clusterAttemptRow());
  return { file, attempts, a };
}

describe('a requeue is told once, however many followers ask', () => {
  it('a follower that missed a requeue (Restarts 0 -> 2) tells it once; a second follower reading Restarts=2 does not tell it again', async () => {
    const { file, attempts, a } = ledger();
    const log = createLogger({ level: 'silent' });
    const emitted: LaunchEvent[] = [];
    const ask = async () => ({ count: 2, text: 'Slurm requeued job 7 (restart 2): preempted' });
    expect(await requeuedAgain({ attempts, clock: systemClock, log }, a, ask, (e) => emitted.push(e))).toBe(true);
    // Another bot process on the same ledger file (its own connection), asking the same job's Restarts.
    const other = createAttemptStore(openDb(file));
    expect(await requeuedAgain({ attempts: other, clock: systemClock, log }, a, ask, (e) => emitted.push(e))).toBe(
      true,
    );
    const told = attempts.events(a.id).filter((e) => e.kind === 'requeued');
    expect(told.map((e) => (e.data as { count: number }).count)).toEqual([2]);
    expect(emitted).toHaveLength(1);
    expect(attempts.get(a.id)!.status).toBe('queued');
    // The next requeue (restart 3) is new, and told.
    const third = async () => ({ count: 3, text: 'Slurm requeued job 7 (restart 3): preempted' });
    await requeuedAgain({ attempts: other, clock: systemClock, log }, a, third, (e) => emitted.push(e));
    expect(attempts.events(a.id).filter((e) => e.kind === 'requeued')).toHaveLength(2);
    expect(emitted).toHaveLength(2);
  });
});
