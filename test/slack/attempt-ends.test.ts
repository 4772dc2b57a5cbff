// However an attempt ends, its Slack message and thread say so the same way; a crash while the bot was down is told
// when it comes back; and "stop #N and launch" refuses before it stops anything. Signed requests to the bot's HTTP
// endpoint, Slack's Web API played by the local stand-in, a real sshd running the SGLang stand-in.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAttemptStore } from '../../src/ledger/attempts.ts';
import { openDb } from '../../src/ledger/db.ts';
import { freshDirs, terminalContext, testConfig } from '../helpers/app.ts';
import { configFile, spawnBot } from '../helpers/child-bot.ts';
import { freePort } from '../helpers/sshd.ts';
import type { FakeSlack, Message } from './fake-slack.ts';
import { ACCESS, answerTo, blockText, clickBody, OPS, postSigned, SECRET, slashBody, waitFor } from './helpers.ts';
import { sshdWithSlack } from './sshd-with-slack.ts';

const slack = sshdWithSlack();
let fake: FakeSlack;

beforeAll(() => {
  fake = slack.fake;
});

const parentOf = (id: number, channel = OPS): Message | undefined =>
  fake.messages.find((m) => !m.thread_ts && m.channel === channel && blockText(m.blocks).includes(`*attempt #${id}*`));
const thread = (p: Message) => fake.messages.filter((m) => m.thread_ts === p.ts);

const answer = (rid: string, match: RegExp) => answerTo(fake, rid, match);

describe('every way an attempt ends', () => {
  it('a slash-command stop and a terminal stop both finalise the message and say so in its thread', async () => {
    const face = await slack.face(slack.config());
    const slash = async (text: string) => {
      const { body, rid } = slashBody(fake, text);
      expect((await postSigned(face.port, body)).status).toBe(200);
      return rid;
    };
    for (const gpu of [0, 1]) {
      const rid = await slash(`launch small --gpus ${gpu} --port ${await freePort()}`);
      expect(await answer(rid, /ready:|error/)).toMatch(/ready: attempt #\d+ \(small\)/);
    }
    // 1: by slash command.
    const rid = await slash('stop --attempt 1');
    expect(await answer(rid, /stopped|error/)).toMatch(/stopped attempt #1/);
    // 2: from a terminal on the same bot (as the scheduler or a bisection would, through the same stop).
    await face.glm.dispatch.run('stop --attempt 2', terminalContext(face.glm, { actor: 'cron' }));
    for (const [id, who] of [
      [1, '<@UOPER>'],
      [2, 'cron'],
    ] as const) {
      const parent = await waitFor(`attempt #${id} message says stopped`, () => {
        const p = parentOf(id);
        return p && /stopped/.test(blockText(p.blocks)) && p;
      });
      expect(blockText(parent.blocks)).not.toContain('glm_stop');
      expect(blockText(parent.blocks)).not.toContain('glm_probe');
      const note = await waitFor(`attempt #${id} thread says who stopped it`, () =>
        thread(parent).find((m) => blockText(m.blocks).includes(`stopped by ${who}`)),
      );
      expect(blockText(note.blocks)).toMatch(
        new RegExp(`stopped attempt #${id} \\(small\\) on gpu: it exited on SIGTERM`),
      );
    }
  });

  it('a crash while the bot was down (SIGKILLed during the load): on start it is classified, alerted once, its message final', async () => {
    const dirs = freshDirs();
    const port = await freePort();
    const loaded = testConfig(slack.sshd, {
      ...dirs,
      // Slow enough to kill the bot while the server loads, before it crashes.
      env: { STANDIN_TIME_SCALE: '0.05' },
      // A channel of its own: the other tests' attempt #1 is in theirs.
      extra: { slack: { channel: 'CDOWN', port }, access: { ...ACCESS, channels: ['CDOWN'] } },
    });
    const config = configFile(loaded);
    const env = {
      GLM_HTTP_HOST: '127.0.0.1',
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: fake.apiUrl,
    };
    const first = spawnBot(config, ['slack'], env);
    slack.later(() => first.kill());
    await waitFor(
      'first bot up',
      () => /Slack face started/.test(first.output()) || first.proc.exitCode !== null,
      30_000,
    );
    const { body } = slashBody(fake, `launch glm5-attempt3 --yes --port ${await freePort()}`, 'UOPER', 'CDOWN');
    expect((await postSigned(port, body)).status).toBe(200);
    const ledger = createAttemptStore(openDb(join(dirs.dataDir, 'ledger.sqlite')));
    // Killed once its message is posted and recorded as sent (a kill between Slack accepting a message and the outbox
    // recording it is the delivery's problem, not this one's).
    const db = openDb(join(dirs.dataDir, 'ledger.sqlite'));
    const parentSent = () =>
      (
        db.prepare("SELECT status FROM outbox WHERE key LIKE '%attempt:1:parent'").get() as
          | { status: string }
          | undefined
      )?.status === 'sent';
    await waitFor('loading, its message posted', () => ledger.get(1)?.status === 'loading' && parentSent(), 30_000);
    await first.kill();
    expect(ledger.get(1)!.classification).toBeNull();
    // The server crashes while no bot runs.
    await waitFor('the crash', () => existsSync(join(ledger.get(1)!.runDir!, 'exit')), 60_000);

    const second = spawnBot(config, ['slack'], env);
    slack.later(() => second.kill());
    const parent = await waitFor(
      'message final',
      () => {
        const p = parentOf(1, 'CDOWN');
        return p && /crashed: backend_assertion/.test(blockText(p.blocks)) && p;
      },
      30_000,
    ).catch((e: Error) => {
      // Say what the bot did instead.
      const outbox = db.prepare('SELECT key, status, sent_at FROM outbox ORDER BY id').all();
      throw new Error(
        `${e.message}\nattempt: ${ledger.get(1)?.status} ${ledger.get(1)?.outcome}\noutbox: ${JSON.stringify(outbox)}\nmessage: ${blockText(parentOf(1, 'CDOWN')?.blocks)}\nbot: ${second.output().slice(-3000)}`,
      );
    });
    expect(blockText(parent.blocks)).not.toContain('glm_stop');
    expect(blockText(parent.blocks)).not.toContain('glm_probe');
    const alert = await waitFor('alert', () =>
      thread(parent).find((m) => blockText(m.blocks).includes(':rotating_light: *crash: backend_assertion*')),
    );
    expect(blockText(alert.blocks)).toMatch(/AssertionError/);
    expect(ledger.get(1)).toMatchObject({ status: 'crashed', outcome: 'backend_assertion', active: false });
    // Once: a third start tells nothing again. (Stopped with SIGTERM: a SIGKILL between Slack accepting a message and
    // the outbox marking it sent is the delivery's own problem, not this one.)
    second.proc.kill('SIGTERM');
    await second.exited;
    const third = spawnBot(config, ['slack'], env);
    slack.later(() => third.kill());
    await waitFor('third bot up', () => /Slack face started/.test(third.output()), 30_000);
    const { body: s2, rid: r2 } = slashBody(fake, 'status', 'UOPER', 'CDOWN');
    expect((await postSigned(port, s2)).status).toBe(200);
    await waitFor(
      'third bot answered',
      () => fake.responses.some((r) => r.id === r2 && /host +state/.test(blockText(r.body.blocks))),
      30_000,
    );
    expect(
      fake.messages.filter((m) => m.channel === 'CDOWN' && blockText(m.blocks).includes(':rotating_light: *crash:')),
    ).toHaveLength(1);
  }, 150_000);
});

describe('"stop #N and launch"', () => {
  it('a launch that would be refused (known to crash here) is refused before anything is stopped', async () => {
    const dirs = freshDirs();
    const face = await slack.face(
      testConfig(slack.sshd, {
        ...dirs,
        extra: { slack: { channel: 'CREPL', port: 0 }, access: { ...ACCESS, channels: ['CREPL'] } },
      }),
    );
    const slash = async (text: string) => {
      const { body, rid } = slashBody(fake, text, 'UOPER', 'CREPL');
      expect((await postSigned(face.port, body)).status).toBe(200);
      return rid;
    };
    const port = await freePort();
    expect(await answer(await slash(`launch small --gpus 0 --port ${port}`), /ready:|error/)).toMatch(/ready:/);
    // On the same port: the bot asks to replace attempt #1; glm5-attempt4 is known to crash on this SM120 host.
    const rid = await slash(`launch glm5-attempt4 --gpus 0 --port ${port}`);
    await answer(rid, /already runs/);
    const resp = fake.responses.find((x) => x.id === rid && blockText(x.body.blocks).includes('glm_replace'))!;
    const value = (resp.body.blocks as Array<{ type: string; elements?: Array<Record<string, unknown>> }>)
      .find((b) => b.type === 'actions')!
      .elements!.find((e) => e.action_id === 'glm_replace')!.value;
    const click = clickBody(fake, 'glm_replace', String(value), 'UOPER', 'CREPL');
    await postSigned(face.port, click.body);
    const said = await answer(click.rid, /known to crash|stopped attempt|error/);
    expect(face.glm.engine.attempts.get(1)).toMatchObject({ active: true, status: 'ready' });
    expect(said).toMatch(/not replaced: glm5-attempt4 on gpu is known to crash/);
    expect(said).toMatch(/--yes/);
    expect(said).toMatch(/attempt #1 keeps running/);
    expect(face.glm.engine.attempts.list()).toHaveLength(1);
  });
});
