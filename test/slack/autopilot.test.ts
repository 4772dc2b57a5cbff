// An autopilot run seen from Slack: one parent message for the run, updated in place (phase, launch k of N, what
// runs, the best so far, time left) with a Stop button; every attempt's messages in its thread; Stop is the operator's
// (a viewer's click is refused and audited) and stops every server the run started.
import { beforeAll, describe, expect, it } from 'vitest';
import { autopilotStore } from '../../src/autopilot/store.ts';
import { freePort } from '../helpers/sshd.ts';
import type { FakeSlack, Message } from './fake-slack.ts';
import { blockText, clickBody, type Face, OPS, postSigned, slashBody, waitFor } from './helpers.ts';
import { sshdWithSlack } from './sshd-with-slack.ts';

const slack = sshdWithSlack();
let fake: FakeSlack;
let face: Face;

beforeAll(async () => {
  fake = slack.fake;
  face = await slack.face(slack.config());
});

const parent = (): Message | undefined =>
  fake.messages.find((m) => !m.thread_ts && m.channel === OPS && blockText(m.blocks).includes('*autopilot run #1*'));

describe('autopilot in Slack', () => {
  it('keeps one message per run with a Stop button, the attempts in its thread, and Stop for operators only', async () => {
    const port = await freePort();
    const text = `autopilot glm5-tilelang-bf16 --attempts 12 --knobs chunked_prefill_size,schedule_conservativeness --concurrency 4 --input-len 64 --output-len 16 --requests 8 --port ${port}`;
    const { body } = slashBody(fake, text, 'UOPER');
    expect((await postSigned(face.port, body)).status).toBe(200);
    // The parent shows progress in place: a tune trial has been measured, and the best so far is named.
    const p = await waitFor(
      'the run message with a measured trial',
      () => {
        const m = parent();
        return m?.versions.some((v) => /best so far\* glm5-tilelang-bf16/.test(blockText(v.blocks))) && m;
      },
      60_000,
    );
    const shown = blockText(p.versions.at(-1)!.blocks);
    expect(shown).toMatch(/running, (find|tune) phase, launch \d+ of 12, \d+h\d+m left/);
    expect(shown).toContain('glm_autopilot_stop');
    expect(p.versions.length).toBeGreaterThan(2);
    // Every attempt of the run replies in its thread, none posts a parent of its own.
    const thread = fake.messages.filter((m) => m.thread_ts === p.ts);
    expect(thread.some((m) => /attempt #1\*/.test(blockText(m.blocks)))).toBe(true);
    expect(fake.messages.some((m) => !m.thread_ts && /\*attempt #\d+\*/.test(blockText(m.blocks)))).toBe(false);

    // A viewer may not stop it.
    const denied = clickBody(fake, 'glm_autopilot_stop', '1', 'UVIEW');
    await postSigned(face.port, denied.body);
    await waitFor('the refusal', () =>
      fake.responses.find((r) => r.id === denied.rid && /not allowed/.test(String(r.body.text))),
    );
    expect(autopilotStore(face.glm.engine.ledger).get(1)!.status).toBe('running');

    const ok = clickBody(fake, 'glm_autopilot_stop', '1', 'UOPER');
    await postSigned(face.port, ok.body);
    await waitFor(
      'the run cancelled',
      () => autopilotStore(face.glm.engine.ledger).get(1)!.status === 'cancelled',
      60_000,
    );
    expect(face.glm.engine.attempts.list({ limit: 100 }).filter((a) => a.active)).toEqual([]);
    const audit = face.glm.engine.audit.list(100).filter((a) => a.command === 'autopilot');
    expect(audit.map((a) => [a.actor, a.decision])).toEqual(
      expect.arrayContaining([
        ['UOPER', 'allow'],
        ['UVIEW', 'deny'],
      ]),
    );
    // The message says it ended, without a Stop button any more.
    // Under load the outbox may still be working through the run's earlier updates (one update per message per
    // interval): a bound, not a timing.
    await waitFor('the final message', () => /cancelled/.test(blockText(parent()!.versions.at(-1)!.blocks)), 45_000);
    expect(blockText(parent()!.versions.at(-1)!.blocks)).not.toContain('glm_autopilot_stop');
  }, 120_000);
});
