// What the Slack face shows of an error a serving server survived (early-alert.ts): nothing in the channel when it
// happens (no page for a server that answers), one line in `/glm status`, a count in `/glm attempts`, and, when the
// server later dies, one line in its crash alert linking the two. Signed requests to the bot's HTTP endpoint, Slack's
// Web API played by the local stand-in, a real sshd running the SGLang stand-in, which logs a helper thread's
// traceback after a request and serves on.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { postGenerate, until } from '../helpers/app.ts';
import { freePort, userDir } from '../helpers/sshd.ts';
import type { FakeSlack, Message } from './fake-slack.ts';
import { answerTo, blockText, OPS, postSigned, slashBody, waitFor } from './helpers.ts';
import { sshdWithSlack } from './sshd-with-slack.ts';

const slack = sshdWithSlack();
let fake: FakeSlack;

beforeAll(() => {
  fake = slack.fake;
});

// The stand-in's helper-thread traceback (standin/messages.mjs helperThreadTraceback): its root line.
const ROOT = 'ConnectionRefusedError: [Errno 111] Connection refused';
const parentOf = (id: number): Message | undefined =>
  fake.messages.find((m) => !m.thread_ts && m.channel === OPS && blockText(m.blocks).includes(`*attempt #${id}*`));
const crashes = () => fake.messages.filter((m) => blockText(m.blocks).includes(':rotating_light: *crash:'));

describe('an error a serving server survived, in Slack', () => {
  it('is one line in /glm status and a count in /glm attempts, and its crash alert later does not claim it survived the error it died of', async () => {
    const control = join(userDir('glm-ctl-'), 'control');
    writeFileSync(control, '', { mode: 0o666 });
    const face = await slack.face(slack.config({ env: { STANDIN_CONTROL: control } }));
    const slash = async (text: string) => {
      const { body, rid } = slashBody(fake, text);
      expect((await postSigned(face.port, body)).status).toBe(200);
      return rid;
    };
    const port = await freePort();
    expect(await answerTo(fake, await slash(`launch small --port ${port}`), /ready:|error/)).toMatch(/ready:/);
    const id = face.glm.engine.attempts.activeOn('gpu')!.id;
    const events = () => face.glm.engine.attempts.events(id).map((e) => e.kind);

    writeFileSync(control, 'thread_traceback\n');
    await postGenerate(face.glm, 'gpu', port);
    await until(() => events().includes('error_survived'), 20_000);
    expect(events()).not.toContain('crash_seen');

    const status = await answerTo(fake, await slash('status'), /host +state/);
    expect(status).toMatch(
      new RegExp(`attempt #${id} survived 1 error \\(the last at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC: other: `),
    );
    expect(status).toContain(`: other: ${ROOT})`);
    const attempts = await answerTo(fake, await slash('attempts'), /outcome/);
    expect(attempts).toMatch(/outcome +survived\n/);
    expect(attempts).toMatch(new RegExp(`\\n${id} +small +.* ready +1\\b`));
    // Nothing was posted about it meanwhile: no alert, nothing in the attempt's thread but its milestones.
    expect(crashes()).toEqual([]);

    writeFileSync(control, 'exit_quietly\n');
    await until(() => face.glm.engine.attempts.get(id)?.active === false, 20_000);
    const parent = await waitFor('the attempt message', () => parentOf(id));
    const alert = await waitFor('the crash alert', () =>
      fake.messages.find(
        (m) => m.thread_ts === parent.ts && blockText(m.blocks).includes(':rotating_light: *crash: other*'),
      ),
    );
    // It died of the very error it had served on: the alert does not say it survived that one (root is ROOT).
    expect(blockText(alert.blocks)).toContain(ROOT);
    expect(blockText(alert.blocks)).not.toContain('survived before this');
    expect(crashes()).toHaveLength(1);
  });
});
