// The errors each attempt's server survived, read for a whole table at once (AttemptStore.survived, one query on the
// events index): the count per attempt and its newest event's time, class and root line, redacted.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAttemptStore } from '../../src/ledger/attempts.ts';
import { openDb } from '../../src/ledger/db.ts';
import { attemptRow } from '../helpers/app.ts';
import { userDir } from '../helpers/sshd.ts';

describe('survived errors per attempt', () => {
  it('counts each attempt’s error_survived events and names its newest one, among its other events', () => {
    const store = createAttemptStore(openDb(join(userDir('glm-survived-db-'), 'ledger.db')));
    const a = store.open(attemptRow('0', 30000));
    const b = store.open(attemptRow('1', 30001));
    const c = store.open(attemptRow('2', 30002));
    const token = `sk-${'Q1w2E3r4T5'.repeat(3)}`;
    store.event(a.id, 10, 'error_survived', { category: 'other', root: 'OSError: first', why: 'alive' });
    store.event(b.id, 11, 'error_survived', { category: 'cuda_oom', root: 'torch.OutOfMemoryError: b', why: 'alive' });
    store.event(a.id, 12, 'crash_seen', { category: 'other' });
    store.event(a.id, 13, 'error_survived', { category: 'nccl_error', root: `push failed: ${token}`, why: 'alive' });
    store.event(c.id, 14, 'ready', {});
    const s = store.survived([a.id, b.id, c.id]);
    expect([...s.keys()]).toEqual([a.id, b.id]);
    expect(s.get(a.id)).toEqual({ count: 2, lastAt: 13, category: 'nccl_error', root: 'push failed: [REDACTED]' });
    expect(s.get(b.id)).toEqual({ count: 1, lastAt: 11, category: 'cuda_oom', root: 'torch.OutOfMemoryError: b' });
    expect(store.survived([c.id]).size).toBe(0);
    expect(store.survived([]).size).toBe(0);
  });

  it('sums a window event’s count; survivedExcept leaves out one dedup key and names the newest other error', () => {
    const store = createAttemptStore(openDb(join(userDir('glm-survived-db-'), 'ledger.db')));
    const a = store.open(attemptRow('0', 30000));
    store.event(a.id, 10, 'error_survived', { category: 'other', root: 'old: X', why: 'alive' }); // written before keys
    store.event(a.id, 20, 'error_survived', { category: 'other', root: 'A', why: 'alive', keys: ['ka'], count: 1 });
    const [, ev] = store.survivedEvents(a.id);
    const prev = { category: 'other', root: 'A', key: 'ka', at: 20 };
    store.updateEvent(ev!.id, {
      category: 'cuda_oom',
      root: 'B',
      why: 'alive',
      keys: ['ka', 'kb'],
      count: 2,
      lastAt: 25,
      prev,
    });
    expect(store.survived([a.id]).get(a.id)).toEqual({ count: 3, lastAt: 25, category: 'cuda_oom', root: 'B' });
    expect(store.survivedExcept(a.id, 'kb')).toEqual({ count: 2, lastAt: 20, category: 'other', root: 'A' });
    expect(store.survivedExcept(a.id, 'ka')).toEqual({ count: 2, lastAt: 25, category: 'cuda_oom', root: 'B' });
    expect(store.survivedExcept(a.id, 'none')).toEqual({ count: 3, lastAt: 25, category: 'cuda_oom', root: 'B' });
    const b = store.open(attemptRow('1', 30001));
    store.event(b.id, 30, 'error_survived', { category: 'other', root: 'C', why: 'alive', keys: ['kc'], count: 1 });
    expect(store.survivedExcept(b.id, 'kc')).toBeUndefined();
  });
});
