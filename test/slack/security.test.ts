// Issue 12 through the Slack face: signed requests to the bot's HTTP endpoint, the Web API on the local Slack
// stand-in, the GPU host a real sshd, the ledger a real SQLite file. Nothing runs before it is allowed; a hostile
// value never breaks the audit log; a replayed or oversized request is refused.
import { existsSync, readdirSync } from 'node:fs';

import { beforeAll, describe, expect, it } from 'vitest';
import { variantsDir } from '../../src/profiles/saved.ts';
import { MAX_BODY_BYTES } from '../../src/slack/requests.ts';
import { ledgerDb } from '../helpers/ledger.ts';
import type { FakeSlack } from './fake-slack.ts';
import { blockText, type Face, postSigned, recordExecs, sign, slashBody, waitFor } from './helpers.ts';
import { sshdWithSlack } from './sshd-with-slack.ts';

const slack = sshdWithSlack();
let fake: FakeSlack;
let face: Face;
let execs: string[][];

beforeAll(async () => {
  fake = slack.fake;
  face = await slack.face(slack.config());
  // Every command the bot runs on the GPU host, recorded at the exec chokepoint.
  execs = recordExecs(face.glm.engine.pool.get('gpu'));
});

async function answer(rid: string): Promise<string> {
  const r = await waitFor(`answer to ${rid}`, () => fake.responses.filter((x) => x.id === rid).at(-1));
  return `${r.body.text}\n${blockText(r.body.blocks)}`;
}

const auditRows = () =>
  ledgerDb(face.glm.engine).prepare('SELECT * FROM audit ORDER BY id').all() as {
    command: string;
    args_json: string;
  }[];

describe('permission before work', () => {
  it('launches from an unlisted user in an unlisted channel touch no disk, no ledger table but audit, no host', async () => {
    const before = auditRows().length;
    const rids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { body, rid } = slashBody(fake, `launch small --set cuda_graph_max_bs=${8 + i}`, 'UNOBODY', 'CRANDOM');
      expect((await postSigned(face.port, body)).status).toBe(200);
      rids.push(rid);
    }
    for (const rid of rids) expect(await answer(rid)).toMatch(/not allowed: \/glm is not enabled in this channel/);
    expect(execs).toEqual([]);
    const dir = variantsDir(face.glm.engine);
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    expect(face.glm.engine.attempts.list()).toEqual([]);
    const rows = auditRows().slice(before);
    expect(rows.map((r) => r.command)).toEqual(Array(5).fill('launch'));
  });
});

describe('the audit log survives hostile values', () => {
  it('a secret-named value is redacted inside the JSON, and every listing still works', async () => {
    const { body, rid } = slashBody(fake, 'status OPENAI_API_KEY=x "a\\"b" HF_TOKEN=hf_x', 'UNOBODY', 'CRANDOM');
    expect((await postSigned(face.port, body)).status).toBe(200);
    await answer(rid);
    // Every audit row parses, and the value is gone from it.
    for (const r of auditRows()) expect(() => JSON.parse(r.args_json)).not.toThrow();
    expect(auditRows().at(-1)!.args_json).not.toMatch(/OPENAI_API_KEY=x/);
    // A row written by an older bot (cut-off JSON) does not stop the listing either.
    ledgerDb(face.glm.engine)
      .prepare(
        "INSERT INTO audit (at, actor, origin, place, command, args_json, decision, result, duration_ms) VALUES (1, 'old', 'slack', 'C', 'status', '{\"text\":\"OPENAI_API_KEY=[REDACTED]', 'deny', 'x', 0)",
      )
      .run();
    const { body: b2, rid: r2 } = slashBody(fake, 'audit', 'UADMIN');
    expect((await postSigned(face.port, b2)).status).toBe(200);
    const listing = await answer(r2);
    expect(listing).not.toMatch(/Unterminated|internal error/);
    expect(listing).toMatch(/UNOBODY/);
  });

  it('every log line the face wrote is JSON', () => {
    expect(face.logLines.length).toBeGreaterThan(0);
    for (const l of face.logLines) expect(() => JSON.parse(l), l).not.toThrow();
  });
});

describe('replays and sizes', () => {
  it('a signed request delivered twice runs once; a Slack retry is acknowledged without running', async () => {
    const { body } = slashBody(fake, 'profiles', 'UVIEW');
    const ts = Math.floor(Date.now() / 1000);
    const count = () => auditRows().filter((r) => r.command === 'profiles').length;
    const before = count();
    expect((await postSigned(face.port, body, { ts })).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await postSigned(face.port, body, { ts })).status).toBe(409);
    await waitFor('the one run', () => count() === before + 1);
    // Slack redelivers (a new timestamp and signature, X-Slack-Retry-Num set): acknowledged, not run.
    const { body: b2 } = slashBody(fake, 'profiles', 'UVIEW');
    const ts2 = ts + 1;
    const res = await fetch(`http://127.0.0.1:${face.port}/slack/events`, {
      method: 'POST',
      body: b2,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': String(ts2),
        'x-slack-signature': sign(b2, ts2),
        'x-slack-retry-num': '1',
        'x-slack-retry-reason': 'http_timeout',
      },
    });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(count()).toBe(before + 1);
  });

  it('a body over the limit is refused before it is read; a too-long value gets a clear error', async () => {
    const big = 'x'.repeat(MAX_BODY_BYTES + 10);
    const r = await postSigned(face.port, big);
    expect(r.status).toBe(413);
    const { body, rid } = slashBody(fake, `launch small --set env.NCCL_DEBUG=${'a'.repeat(5000)}`, 'UOPER');
    expect((await postSigned(face.port, body)).status).toBe(200);
    expect(await answer(rid)).toMatch(/a value of \d+ characters .* the limit is 4096 per value/);
    const { body: b2, rid: r2 } = slashBody(fake, `status ${'word '.repeat(4000)}`, 'UOPER');
    expect((await postSigned(face.port, b2)).status).toBe(200);
    expect(await answer(r2)).toMatch(/the command is \d+ characters long; the limit is 16384/);
    expect(execs.filter((a) => a.join(' ').includes('aaaa'))).toEqual([]);
  });
});
