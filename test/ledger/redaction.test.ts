// What the ledger keeps of a crash passes the one redaction (src/redact.ts): a classification's evidence and summary
// are log lines, and a crash line can carry a token (a failure record widens which lines become evidence).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAttemptStore } from '../../src/ledger/attempts.ts';
import { openDb } from '../../src/ledger/db.ts';
import { diagnoseText } from '../../src/logs/classify/index.ts';
import { attemptRow } from '../helpers/app.ts';
import { userDir } from '../helpers/sshd.ts';

describe('the ledger keeps no secret from a crash line', () => {
  it('in the classification (evidence, summary), the close detail and the events', () => {
    const token = `hf_${'a1B2c3D4e5'.repeat(3)}`;
    const line = `[2025-11-05 12:00:03] Failed to download the weights with HF_TOKEN=${token}: 401 Unauthorized (${token})`;
    const d = diagnoseText(['[2025-11-05 12:00:00] Load weight begin.', line, ''].join('\n')).classification;
    expect(d.evidence[0]?.text).toBe(line);

    const file = join(userDir('glm-redact-db-'), 'ledger.db');
    const db = openDb(file);
    const store = createAttemptStore(db);
    const a = store.open(attemptRow('0', 30000));
    store.update(a.id, { classification: d });
    store.event(a.id, 1, 'failed', { summary: d.summary, evidence: d.evidence });
    store.finish(a.id, { status: 'crashed', outcome: d.category, detail: d.summary, exitCode: 1, at: 2 });

    // read back raw, as any other reader of the file would
    const raw = openDb(file);
    const rows = JSON.stringify([
      raw.prepare('SELECT * FROM attempts').all(),
      raw.prepare('SELECT * FROM events').all(),
    ]);
    expect(rows).not.toContain(token);
    expect(rows).toContain('[REDACTED]');
    const kept = store.get(a.id)!.classification as typeof d;
    expect(kept.evidence[0]?.text).toContain('Failed to download the weights');
  });
});
