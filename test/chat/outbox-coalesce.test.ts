// Updates to one message coalesce while they wait, never into one whose send is under way: that call carries the
// older state, and the newest would be lost when it is marked sent.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/ledger/db.ts';
import { createOutbox } from '../../src/ledger/outbox.ts';

describe('outbox updates', () => {
  it('coalesce while pending, but a newer state never folds into one being sent', () => {
    const db = openDb(join(mkdtempSync(join(tmpdir(), 'glm-outbox-')), 'ledger.sqlite'));
    const outbox = createOutbox(db);
    const up = (n: number) =>
      outbox.enqueue({ key: `m:u:${n}`, kind: 'update', channel: 'C', refKey: 'm', payload: { text: `v${n}` }, at: n });
    up(1);
    up(2);
    expect(outbox.pending().map((i) => (i.payload as { text: string }).text)).toEqual(['v2']);
    const sending = outbox.pending()[0]!;
    outbox.trying(sending.id);
    up(3);
    const texts = outbox.pending().map((i) => (i.payload as { text: string }).text);
    expect(texts).toEqual(['v2', 'v3']);
    db.close();
  });
});
