// End to end through the Slack face: requests signed as Slack signs them, to the bot's HTTP endpoint on 127.0.0.1;
// the bot's Web API calls go to the local Slack stand-in; the GPU host is a real sshd running the SGLang stand-in.
import { appendFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { terminalContext } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import type { FakeSlack, Message } from './fake-slack.ts';
import {
  answerTo,
  blockText,
  clickBody,
  type Face,
  OPS,
  postSigned,
  SECRET,
  sign,
  slashBody,
  submitBody,
  waitFor,
} from './helpers.ts';
import { sshdWithSlack } from './sshd-with-slack.ts';

// A Hugging Face token shape (hf_ + 34 letters): the redaction patterns must catch it wherever it shows up.
const CANARY = `hf_${'QwErTyUiOpAsDfGhJkLzXcVbNm'}${'QwErTyUi'}`;

const slack = sshdWithSlack();
let fake: FakeSlack;
let face: Face;

beforeAll(async () => {
  fake = slack.fake;
  fake.groups.SGPU = ['UGROUPIE'];
  face = await slack.face(slack.config({ env: { HF_TOKEN: CANARY } }));
});

const terminal = () => terminalContext(face.glm, { actor: 'teardown' });

async function slash(text: string, user = 'UOPER', channel = OPS) {
  const { body, rid } = slashBody(fake, text, user, channel);
  const r = await postSigned(face.port, body);
  expect(r.status).toBe(200);
  return { ...r, rid, ack: JSON.parse(r.text) as { text: string } };
}

/** The command's answer, through its response_url (the last one, which replaced "working on it"). */
const answer = (rid: string, match?: RegExp) => answerTo(fake, rid, match);

const parentOf = (id: number): Message | undefined =>
  fake.messages.find((m) => !m.thread_ts && m.channel === OPS && blockText(m.blocks).includes(`*attempt #${id}*`));
const thread = (p: Message) => fake.messages.filter((m) => m.thread_ts === p.ts);

describe('requests Slack did not sign', () => {
  it('forged, stale and unsigned requests get 401 and do nothing', async () => {
    const before = fake.calls.length;
    const { body } = slashBody(fake, 'launch small');
    const now = Math.floor(Date.now() / 1000);
    expect((await postSigned(face.port, body, { secret: 'not-the-secret' })).status).toBe(401);
    expect((await postSigned(face.port, body, { ts: now - 400 })).status).toBe(401);
    expect((await postSigned(face.port, body, { signature: null })).status).toBe(401);
    // A valid signature over another body (tampered in transit).
    expect((await postSigned(face.port, `${body}&x=1`, { signature: sign(body, now), ts: now })).status).toBe(401);
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.calls.slice(before)).toEqual([]);
    expect(face.glm.engine.attempts.list()).toHaveLength(0);
    void SECRET;
  });
});

describe('/glm', () => {
  it('help: acked at once, the answer replaces the "working" line', async () => {
    const r = await slash('help');
    expect(r.ack.text).toContain('/glm help');
    expect(r.ms).toBeLessThan(1000);
    const text = await answer(r.rid);
    expect(text).toMatch(/launch\s+start an SGLang server/);
    expect(fake.responses.find((x) => x.id === r.rid)!.body.replace_original).toBe(true);
  });

  it("reads arguments with the terminal's own definitions: the same argument errors, the same refusals", async () => {
    for (const text of [
      'launch small --port abc',
      'launch',
      'launch small --dryrun',
      'logs --lines 0',
      'lanch small',
    ]) {
      const term = await face.glm.dispatch.run(text, terminal());
      expect(term.exitCode).toBe(2);
      const r = await slash(text);
      // The same error line; a hint naming a command names it as each face types it.
      const [what, fix] = term.text.split('\n');
      // Slack's text escapes &, < and > (mrkdwn); read it back as a person sees it.
      const got = (await answer(r.rid, /error: /)).replace(/&gt;/g, '>').replace(/&lt;/g, '<').replace(/&amp;/g, '&');
      expect(got).toContain(what);
      if (fix) expect(got).toContain(fix.replace(/npx glm /g, '/glm '));
    }
    // --follow is refused by the logs command itself, through the registry (audited as the logs command it is).
    const f = await slash('logs --follow');
    expect(await answer(f.rid, /error: /)).toMatch(
      /error: logs --follow streams without end, which a Slack message cannot\n {2}use: \/glm logs --lines N, or the Logs button/,
    );
    const row = face.glm.engine.audit.list(20).find((e) => e.actor === 'UOPER' && e.command === 'logs');
    expect(row).toMatchObject({ decision: 'allow', args: { follow: true } });
    expect(row?.result).toMatch(/^error: logs --follow streams without end/);
  });

  it('errors are short and say how to fix them', async () => {
    const r = await slash('lanch small');
    expect(await answer(r.rid)).toMatch(/unknown command 'lanch'[\s\S]*did you mean 'launch'/);
    const r2 = await slash('launch small —dry-run'); // a Slack client's em dash for --
    expect(await answer(r2.rid)).toMatch(/dry run: would run on gpu/);
  });

  it('an expired response_url: the answer still arrives, as an ephemeral message', async () => {
    const { body, rid } = slashBody(fake, 'profiles', 'UVIEW');
    fake.expire(rid);
    expect((await postSigned(face.port, body)).status).toBe(200);
    const eph = await waitFor('postEphemeral', () =>
      fake.named('chat.postEphemeral').find((c) => blockText(c.body.blocks).includes('glm5-nvfp4')),
    );
    expect(eph.body).toMatchObject({ channel: OPS, user: 'UVIEW' });
  });

  it('refuses outside the allowed channels and people without a role, and audits it', async () => {
    const r = await slash('status', 'UOPER', 'CRANDOM');
    expect(await answer(r.rid)).toMatch(/not allowed: \/glm is not enabled in this channel/);
    const r2 = await slash('launch small', 'UNOBODY');
    expect(await answer(r2.rid)).toMatch(/launch needs the operator role/);
    const denied = face.glm.engine.audit.list(50).filter((e) => e.decision === 'deny');
    expect(denied.map((e) => [e.actor, e.command, e.place])).toEqual(
      expect.arrayContaining([
        ['UOPER', 'status', 'CRANDOM (command)'],
        ['UNOBODY', 'launch', `${OPS} (command)`],
      ]),
    );
  });
});

describe('an attempt in Slack', () => {
  let id = 0;

  it('launch to ready: one parent message updated in place, phase changes in its thread', async () => {
    const port = await freePort();
    const r = await slash(`launch small --port ${port}`, 'UGROUPIE'); // an operator through a user group
    expect(r.ack.text).toContain(`progress in <#${OPS}>`);
    expect(await answer(r.rid, /ready|error/)).toMatch(/ready: attempt #\d+ \(small\) on gpu/);
    id = face.glm.engine.attempts.list().at(-1)!.id;
    const parent = await waitFor('parent says ready', () => {
      const p = parentOf(id);
      return p && /ready in/.test(blockText(p.blocks)) && p;
    });
    expect(fake.messages.filter((m) => !m.thread_ts && blockText(m.blocks).includes(`*attempt #${id}*`))).toHaveLength(
      1,
    );
    expect(parent.versions.length).toBeGreaterThan(1);
    expect(parent.versions.map((v) => blockText(v.blocks)).join('\n')).toMatch(/loading/);
    expect(blockText(parent.blocks)).toContain('<@UGROUPIE>');
    // The thread hears of phase changes only (issue 17, item 16): the load's steps are the parent's versions.
    const milestones = thread(parent).map((m) => m.text);
    expect(milestones.join('\n')).toMatch(/loading weights[\s\S]*weights loaded[\s\S]*CUDA graph capture started/);
    const phaseOf = (t: string) =>
      /shards|^loading weights/.test(t) ? 'weights' : /weights loaded|KV cache/.test(t) ? 'kv_cache' : t;
    expect(new Set(milestones.map(phaseOf)).size).toBe(milestones.length);
    expect(parent.versions.map((v) => blockText(v.blocks)).join('\n')).toMatch(/KV cache|weights|CUDA graph/);
    // Buttons carry only the attempt id.
    const actions = parent.blocks.find((b) => (b as { type: string }).type === 'actions') as {
      elements: Array<{ action_id: string; value: string; style?: string }>;
    };
    expect(actions.elements.map((e) => [e.action_id, e.value, e.style])).toEqual([
      ['glm_stop', String(id), 'danger'],
      ['glm_probe', String(id), undefined],
      ['glm_logs', String(id), undefined],
    ]);
    expect(fake.named('usergroups.users.list').map((c) => c.body.usergroup)).toContain('SGPU');
  });

  it('a viewer clicking Stop is refused and audited; nothing is stopped', async () => {
    const { body, rid } = clickBody(fake, 'glm_stop', String(id), 'UVIEW');
    expect((await postSigned(face.port, body)).status).toBe(200);
    expect(await answer(rid)).toMatch(/not allowed: stop needs the operator role; you are a viewer/);
    expect(fake.named('views.open')).toHaveLength(0);
    expect(face.glm.engine.attempts.get(id)!.status).toBe('ready');
    const row = face.glm.engine.audit.list(20).find((e) => e.actor === 'UVIEW' && e.command === 'stop');
    expect(row).toMatchObject({ decision: 'deny', place: `${OPS} (button)`, origin: 'slack' });
  });

  it('Probe answers in the thread; Logs uploads the tail as a file with secrets scrubbed', async () => {
    const a = face.glm.engine.attempts.get(id)!;
    appendFileSync(a.logPath!, `debug: HF_TOKEN=${CANARY}\nloaded token ${CANARY} from env\n`);
    await postSigned(face.port, clickBody(fake, 'glm_probe', String(id), 'UVIEW').body);
    const parent = parentOf(id)!;
    const probe = await waitFor('probe reply', () =>
      thread(parent).find((m) => blockText(m.blocks).includes('probe by')),
    );
    expect(blockText(probe.blocks)).toMatch(/\/health:\s+200/);
    await postSigned(face.port, clickBody(fake, 'glm_logs', String(id), 'UVIEW').body);
    const file = await waitFor('log file', () => fake.files.find((f) => f.filename === `attempt-${id}.log`));
    expect(file.thread_ts).toBe(parent.ts);
    expect(file.content).toContain('The server is fired up and ready to roll!');
    expect(file.content).toContain('HF_TOKEN=[REDACTED]');
    expect(file.content).not.toContain(CANARY);
  });

  it('launching over the running server asks first, naming what would be replaced', async () => {
    // A launch that fits beside it (another GPU, another port) needs no question: it just goes.
    const beside = await slash(`launch small --gpus 5 --port ${await freePort()}`);
    expect(await answer(beside.rid, /ready:|error|already runs/)).toMatch(/ready: attempt #\d+ \(small\)/);
    const besideId = face.glm.engine.attempts.list().at(-1)!.id;
    expect(face.glm.engine.attempts.get(besideId)!.gpus).toBe('5');
    await face.glm.dispatch.run(`stop --attempt ${besideId}`, terminal());
    // Its GPU (or its port) is what a launch would run into.
    const r = await slash(`launch small --gpus 0 --port ${await freePort()}`);
    const prompt = await answer(r.rid, /already runs/);
    expect(prompt).toMatch(new RegExp(`already runs attempt #${id} \`small\` on \`gpu\`.*launched by <@UGROUPIE>`));
    const resp = fake.responses.find((x) => x.id === r.rid && blockText(x.body.blocks).includes('glm_replace'))!;
    const button = (resp.body.blocks as Array<{ type: string; elements?: Array<Record<string, unknown>> }>)
      .find((b) => b.type === 'actions')!
      .elements!.find((e) => e.action_id === 'glm_replace')!;
    expect(button.style).toBe('danger');
    expect(blockText(button.confirm)).toContain(`Attempt #${id} (small on gpu, launched by UGROUPIE)`);
    // Cancel: nothing changes.
    const cancel = clickBody(fake, 'glm_cancel', String(button.value));
    await postSigned(face.port, cancel.body);
    expect(await answer(cancel.rid)).toMatch(/cancelled/);
    expect(face.glm.engine.attempts.activeOn('gpu')!.id).toBe(id);

    // Again, and this time replace: the named attempt is stopped, the new one launched.
    const again = await slash(`launch small --gpus 0 --port ${await freePort()}`);
    await answer(again.rid, /already runs/);
    const resp2 = fake.responses.find((x) => x.id === again.rid && blockText(x.body.blocks).includes('glm_replace'))!;
    const value = (resp2.body.blocks as Array<{ type: string; elements?: Array<Record<string, unknown>> }>)
      .find((b) => b.type === 'actions')!
      .elements!.find((e) => e.action_id === 'glm_replace')!.value;
    const replace = clickBody(fake, 'glm_replace', String(value));
    await postSigned(face.port, replace.body);
    expect(await answer(replace.rid, /ready:|error/)).toMatch(/ready: attempt #\d+ \(small\)/);
    expect(face.glm.engine.attempts.get(id)!.status).toBe('stopped');
    const next = face.glm.engine.attempts.activeOn('gpu')!;
    expect(next.id).toBeGreaterThan(id);
    expect(next.actor).toBe('UOPER');
    // A confirmation works once.
    const reuse = clickBody(fake, 'glm_replace', String(value));
    await postSigned(face.port, reuse.body);
    expect(await answer(reuse.rid)).toMatch(/expired or was used/);
    id = next.id;
  });

  it('Stop asks in a modal naming the server and who launched it, then stops it', async () => {
    const { body } = clickBody(fake, 'glm_stop', String(id), 'UOPER');
    await postSigned(face.port, body);
    const open = await waitFor('views.open', () => fake.named('views.open')[0]);
    const view = open.body.view as { callback_id: string; private_metadata: string; blocks: unknown[] };
    expect(blockText(view.blocks)).toMatch(
      new RegExp(`stops attempt #${id} \`small\` on \`gpu\` \\(port \\d+, ready for .*\\), launched by <@UOPER>`),
    );
    const submitted = await postSigned(face.port, submitBody(view.callback_id, view.private_metadata, 'UOPER'));
    expect(submitted.status).toBe(200);
    const parent = parentOf(id)!;
    const stopped = await waitFor('stop reply in thread', () =>
      thread(parent).find((m) => blockText(m.blocks).includes('stopped by <@UOPER>')),
    );
    expect(blockText(stopped.blocks)).toMatch(/stopped attempt #\d+ \(small\) on gpu: it exited on SIGTERM/);
    expect(face.glm.engine.attempts.get(id)!.status).toBe('stopped');
    await waitFor('parent says stopped', () => /stopped/.test(blockText(parentOf(id)!.blocks)));
    const audit = face.glm.engine.audit.list(50).filter((e) => e.command === 'stop' && e.actor === 'UOPER');
    expect(audit.map((e) => [e.place, e.result])).toEqual(
      expect.arrayContaining([
        [`${OPS} (button)`, 'confirmation shown'],
        [`${OPS} (modal)`, 'ok'],
      ]),
    );
  });

  it('a crash: parent says crashed, the alert in its thread, broadcast, naming class, root lines and launcher', async () => {
    const r = await slash(`launch glm5-attempt3 --yes --port ${await freePort()}`);
    expect(await answer(r.rid, /crashed|error/)).toMatch(/crashed/);
    const a = face.glm.engine.attempts.list().at(-1)!;
    const parent = await waitFor('parent says crashed', () => {
      const p = parentOf(a.id);
      return p && /crashed/.test(blockText(p.blocks)) && p;
    });
    const alert = await waitFor('alert', () => thread(parent).find((m) => blockText(m.blocks).includes('crash:')));
    expect(alert.reply_broadcast).toBe(true);
    const text = blockText(alert.blocks);
    expect(text).toContain('launched by <@UOPER>');
    expect(text).toMatch(/root lines/);
    expect(text).toMatch(/AssertionError/);
    for (const b of alert.blocks as Array<{ type: string; text?: { text: string } }>) {
      expect(b.text?.text.length ?? 0).toBeLessThanOrEqual(3000);
    }

    // The same crash again: the first alert's count goes up; no second alert.
    const r2 = await slash(`launch glm5-attempt3 --yes --port ${await freePort()}`);
    expect(await answer(r2.rid, /crashed|error/)).toMatch(/crashed/);
    await waitFor('count bumped', () => /seen 2 times/.test(blockText(alert.blocks)));
    const alerts = fake.messages.filter((m) => blockText(m.blocks).includes(':rotating_light: *crash:'));
    expect(alerts).toHaveLength(1);

    // Draft issue, from the alert's button: the upstream report as a file in the thread, in SGLang's form.
    expect(blockText(alert.blocks)).toContain('Draft issue');
    await postSigned(face.port, clickBody(fake, 'glm_draft', String(a.id), 'UOPER').body);
    const draft = await waitFor('draft file', () =>
      fake.files.find((f) => f.filename === `attempt-${a.id}-issue-draft.md`),
    );
    expect(draft.thread_ts).toBe(parent.ts);
    expect(draft.content).toMatch(/^\[Bug\] /);
    for (const h of ['### Checklist', '### Describe the bug', '### Reproduction', '### Environment'])
      expect(draft.content).toContain(h);
    expect(draft.content).toContain('backend_assertion');
    expect(draft.content).not.toContain(CANARY);
    await waitFor('draft note', () => thread(parent).find((m) => blockText(m.blocks).includes('draft issue by')));
  });

  it('admins read the audit log with /glm audit; operators may not', async () => {
    const r = await slash('audit --limit 100', 'UADMIN');
    const text = await answer(r.rid);
    expect(text).toMatch(/UVIEW.*stop.*deny/);
    const r2 = await slash('audit', 'UOPER');
    expect(await answer(r2.rid)).toMatch(/audit needs the admin role/);
  });

  it('no recorded Slack call ever carried the secret', async () => {
    // One more place it could surface: a profile shown with the host's environment.
    const r = await slash('profile small', 'UVIEW');
    expect(await answer(r.rid)).toContain('HF_TOKEN=[REDACTED]');
    expect(fake.calls.length).toBeGreaterThan(20);
    for (const c of fake.calls) {
      expect(c.raw).not.toContain(CANARY);
      expect(JSON.stringify(c.body)).not.toContain(CANARY);
    }
  });
});
