// Delivery through a misbehaving Slack: the stand-in answers 429 with Retry-After, then 500s, then is down (connection
// refused), and the bot is restarted in the middle. Every message arrives once, in order, in the right thread.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LaunchEvent } from '../../src/lifecycle/launch/types.ts';
import { ledgerDb } from '../helpers/ledger.ts';
import { type FakeSlack, startFakeSlack } from './fake-slack.ts';
import { blockText, type Face, localConfig, OPS, startFace, waitFor } from './helpers.ts';

const faces: Face[] = [];
let fake: FakeSlack | undefined;

afterAll(async () => {
  for (const f of faces) await f.stop().catch(() => {});
  await fake?.close();
});

/** One attempt's life as the lifecycle tells it to the notifier: started, progress, then a crash with `key`. */
async function crashOne(face: Face, n: number, key: string): Promise<void> {
  const e = face.glm.engine;
  const now = e.clock.now();
  const a = e.attempts.open({
    host: 'gpu',
    profile: `p${n}`,
    profileJson: '{}',
    flags: { tp: String(n) },
    argv: [],
    env: {},
    commandLine: '',
    port: 30000 + n,
    actor: 'UOPER',
    origin: 'slack',
    startedAt: now,
  });
  await e.notifier!.onEvent({ kind: 'started', attempt: a });
  e.notifier!.progress(a, `loading weights ${n}/83 shards`, 'weights');
  e.attempts.finish(a.id, { status: 'crashed', outcome: 'oom', detail: 'x', exitCode: 1, at: now });
  const failed: LaunchEvent = {
    kind: 'failed',
    attempt: e.attempts.get(a.id)!,
    outcome: 'oom',
    exitCode: 1,
    diagnosis: {
      category: 'oom',
      phase: 'weight_loading',
      summary: `alert ${n}`,
      evidence: [{ line: 10 + n, text: `torch.OutOfMemoryError: CUDA out of memory (alert ${n})` }],
      rank: 0,
      dedupKey: key,
      confidence: 0.9,
    },
  };
  await e.notifier!.onEvent(failed);
}

const alertsIn = (f: FakeSlack) =>
  f.messages.filter((m) => blockText(m.blocks).includes(':rotating_light: *crash:')).map((m) => m);

describe('delivery when Slack misbehaves', () => {
  it('429, 500s and an outage with a restart in the middle: every message once, in order, threads intact', async () => {
    fake = await startFakeSlack();
    const dataDir = mkdtempSync(join(tmpdir(), 'glm-data-'));
    const loaded = localConfig(dataDir);
    const first = await startFace(fake, loaded);
    faces.push(first);

    // Rate limited first (Retry-After: 1 s), then two server errors.
    fake.failNext('429', '500', '500');
    await crashOne(first, 1, 'k1');
    await crashOne(first, 2, 'k2');
    await waitFor('the first alert through', () => alertsIn(fake!).length >= 1, 10_000);
    expect(fake.faults.map((f) => f.fault)).toEqual(['429', '500', '500']);
    // /metrics says so: the three refused tries are retries by method, and the alert delivered has its latency
    // (from the attempt's end: this crash was told without a log line read).
    let m = '';
    // (the alert's row is marked delivered just after Slack answered)
    for (let i = 0; i < 100 && !/^glm_alert_latency_seconds_count/m.test(m); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 25));
      m = await (await fetch(`http://127.0.0.1:${first.port}/metrics`)).text();
    }
    const retried = [...m.matchAll(/^glm_slack_api_calls_total\{method="[^"]+",result="retry"\} (\d+)$/gm)];
    expect(retried.reduce((n, r) => n + Number(r[1]), 0)).toBe(3);
    expect(m).toMatch(/^glm_slack_api_calls_total\{method="chat\.postMessage",result="ok"\} [1-9]\d*$/m);
    expect(m).toMatch(/^glm_alert_latency_seconds_count\{from="exit"\} [1-9]\d*$/m);

    // Slack goes away; more crashes happen meanwhile, including the same crash as #1 again.
    await fake.down();
    await crashOne(first, 3, 'k3');
    await crashOne(first, 4, 'k1');
    // Each bot tries while Slack is down and is refused (waited for, not slept for: on a loaded machine a try can
    // take longer than any fixed pause, and then no bot would have tried while Slack was away).
    const refused = (f: Face) =>
      f.logLines.some(
        (l) => l.includes('chat delivery will retry') && (l.includes('fetch failed') || l.includes('ECONNREFUSED')),
      );
    await waitFor('the first bot refused', () => refused(first), 10_000);
    // The bot dies without flushing (its loop stops; nothing is drained on the way out) and a new one starts on the
    // same ledger while Slack is still down.
    await first.glm.delivery!.stop();
    const second = await startFace(fake, loaded);
    faces.push(second);
    await waitFor('the second bot refused', () => refused(second), 10_000);
    await fake.up();

    await waitFor('everything delivered', () => second.glm.outbox.counts().pending === undefined, 20_000);
    const counts = second.glm.outbox.counts();
    expect(counts.failed).toBeUndefined();

    // Each attempt's parent once, each alert once and in order, each in its attempt's thread.
    const parents = fake.messages.filter((m) => !m.thread_ts);
    expect(parents.map((p) => blockText(p.blocks).match(/attempt #(\d+)/)?.[1])).toEqual(['1', '2', '3', '4']);
    const alerts = alertsIn(fake);
    // (identified by what each alert said when first posted: an update re-renders it with the latest crash)
    expect(alerts.map((a) => blockText(a.versions[0]!.blocks).match(/alert (\d+)/)?.[1])).toEqual(['1', '2', '3']);
    alerts.forEach((a, i) => {
      expect(a.thread_ts).toBe(parents[i]!.ts);
      expect(a.reply_broadcast).toBe(true);
      expect(blockText(a.blocks)).toContain('<@UOPER>');
    });
    // The repeat of crash k1 bumped the first alert's count instead of posting a new alert.
    expect(blockText(alerts[0]!.blocks)).toContain('seen 2 times');
    expect(fake.messages.some((m) => m.thread_ts === parents[3]!.ts && /same crash as attempt #1/.test(m.text))).toBe(
      true,
    );
    // Nothing twice: every posted message is distinct (thread + text).
    const keys = fake.messages.map((m) => `${m.thread_ts ?? '-'} ${m.text}`);
    expect(new Set(keys).size).toBe(keys.length);
    // Milestones stayed in their threads, in order with their alert.
    for (const [i, p] of parents.entries()) {
      const inThread = fake.messages.filter((m) => m.thread_ts === p.ts).map((m) => m.text);
      expect(inThread[0]).toBe(`loading weights ${i + 1}/83 shards`);
    }
    // While Slack was down, both bots tried and were refused, and said they would retry.
    expect([refused(first), refused(second)]).toEqual([true, true]);
    // The outbox did the retrying (one client call per try), and waited out Retry-After before trying again.
    const posts = fake.calls.filter((c) => c.method === 'chat.postMessage');
    expect(posts.length).toBe(fake.messages.length);
    const limited = fake.faults.find((f) => f.fault === '429')!;
    const nextTry = fake.faults.find((f) => f.at > limited.at)?.at ?? posts[0]!.at;
    expect(nextTry - limited.at).toBeGreaterThanOrEqual(950);
  }, 45_000);

  it('an alert too big for a message: the message and a file with everything, once each, though the upload failed first', async () => {
    fake ??= await startFakeSlack();
    const face = await startFace(fake, localConfig(mkdtempSync(join(tmpdir(), 'glm-data-'))));
    faces.push(face);
    const before = fake.messages.length;
    const e = face.glm.engine;
    const a = e.attempts.open({
      host: 'gpu',
      profile: 'big',
      profileJson: '{}',
      flags: {},
      argv: [],
      env: {},
      commandLine: '',
      port: 30100,
      actor: 'UOPER',
      origin: 'slack',
      startedAt: e.clock.now(),
    });
    await e.notifier!.onEvent({ kind: 'started', attempt: a });
    e.attempts.finish(a.id, { status: 'crashed', outcome: 'oom', exitCode: 1, at: e.clock.now() });
    fake.failMethod('files.getUploadURLExternal', '500');
    const evidence = Array.from({ length: 300 }, (_, i) => ({ line: i, text: `frame ${i} ${'y'.repeat(120)}` }));
    await e.notifier!.onEvent({
      kind: 'failed',
      attempt: e.attempts.get(a.id)!,
      outcome: 'oom',
      exitCode: 1,
      diagnosis: {
        category: 'oom',
        phase: 'serving',
        summary: 'big',
        evidence,
        rank: 0,
        dedupKey: 'big',
        confidence: 1,
      },
    });
    const file = await waitFor('file', () => fake!.files.find((f) => f.filename === `attempt-${a.id}-crash.txt`));
    const mine = fake.messages.slice(before);
    const parent = mine.find((m) => !m.thread_ts)!;
    const alerts = mine.filter((m) => blockText(m.blocks).includes('*crash:'));
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.thread_ts).toBe(parent.ts);
    expect(file.thread_ts).toBe(parent.ts);
    expect(file.content).toContain('frame 299');
    expect(fake.files.filter((f) => f.filename === file.filename)).toHaveLength(1);
    expect(fake.faults.some((f) => f.method === 'files.getUploadURLExternal')).toBe(true);
  });
});

describe('a post whose answer was lost (issue 17, item 15)', () => {
  /** A face whose Slack client gives up after 0.5 s, so an answer held back longer counts as a timeout. */
  const quickConfig = (dataDir: string) => localConfig(dataDir, { slack: { channel: OPS, port: 0, timeout_s: 0.5 } });

  function postOne(face: Face, key: string, text: string, channel = OPS): void {
    face.glm.outbox.enqueue({ key, kind: 'post', channel, payload: { text }, at: face.glm.engine.clock.now() });
    face.glm.delivery!.poke();
  }

  it('tags every post with its outbox id, and after a reset or a timeout finds it instead of posting again, across a restart', async () => {
    const slack = await startFakeSlack();
    try {
      const loaded = quickConfig(mkdtempSync(join(tmpdir(), 'glm-data-')));
      const first = await startFace(slack, loaded);
      faces.push(first);
      // Slack carries the post out and the connection drops before the answer.
      slack.failMethod('chat.postMessage', 'accept-reset');
      postOne(first, 'm1', 'first message');
      await waitFor('the reset', () => slack.faults.length === 1 && first.glm.outbox.counts().pending === 1);
      // The bot dies before its retry; the next one starts on the same ledger.
      await first.glm.delivery!.stop();
      const second = await startFace(slack, loaded);
      faces.push(second);
      await waitFor('m1 settled', () => second.glm.outbox.counts().pending === undefined, 10_000);
      expect(slack.messages.filter((m) => m.text === 'first message')).toHaveLength(1);
      const m1 = slack.messages.find((m) => m.text === 'first message')!;
      expect(m1.metadata?.event_type).toBe('glm_outbox');
      const row = ledgerDb(second.glm.engine)
        .prepare("SELECT id, created_at FROM outbox WHERE key = 'slack|m1'")
        .get() as {
        id: number;
        created_at: number;
      };
      expect(m1.metadata?.event_payload).toEqual({ id: row.id, created: row.created_at });
      const history = slack.named('conversations.history');
      expect(history.length).toBeGreaterThanOrEqual(1);
      expect(String(history[0]!.body.include_all_metadata)).toBe('true');

      // A timeout (the answer comes after the client gave up), this time in a thread: looked up in the thread.
      second.glm.outbox.enqueue({
        key: 'parent',
        kind: 'post',
        channel: OPS,
        refKey: 'parent',
        payload: { text: 'parent' },
        at: second.glm.engine.clock.now(),
      });
      second.glm.delivery!.poke();
      await waitFor('parent', () => second.glm.outbox.ref('parent'));
      slack.failMethod('chat.postMessage', 'accept-timeout');
      second.glm.outbox.enqueue({
        key: 'reply',
        kind: 'post',
        channel: OPS,
        parentKey: 'parent',
        payload: { text: 'in the thread' },
        at: second.glm.engine.clock.now(),
      });
      second.glm.delivery!.poke();
      await waitFor('reply settled', () => second.glm.outbox.counts().pending === undefined, 10_000);
      const replies = slack.messages.filter((m) => m.text === 'in the thread');
      expect(replies).toHaveLength(1);
      expect(replies[0]!.thread_ts).toBe(second.glm.outbox.ref('parent')!.ts);
      expect(slack.named('conversations.replies').some((c) => c.body.ts === replies[0]!.thread_ts)).toBe(true);
      expect(second.logLines.some((l) => l.includes('message had gone through before'))).toBe(true);

      // A 500 that really lost the post: looked up, not found, posted once.
      slack.failMethod('chat.postMessage', '500');
      postOne(second, 'm3', 'after a 500');
      await waitFor('m3', () => second.glm.outbox.counts().pending === undefined, 10_000);
      expect(slack.messages.filter((m) => m.text === 'after a 500')).toHaveLength(1);
    } finally {
      await slack.close();
    }
  }, 30_000);

  it('an upload whose share timed out after Slack made it is not uploaded again after a restart; a lost one is', async () => {
    const slack = await startFakeSlack();
    try {
      const loaded = quickConfig(mkdtempSync(join(tmpdir(), 'glm-data-')));
      const first = await startFace(slack, loaded);
      faces.push(first);
      const uploadOne = (face: Face, key: string, filename: string, parentKey?: string) => {
        face.glm.outbox.enqueue({
          key,
          kind: 'upload',
          channel: OPS,
          ...(parentKey ? { parentKey } : {}),
          payload: { filename, content: `contents of ${filename}\n`, title: filename },
          at: face.glm.engine.clock.now(),
        });
        face.glm.delivery!.poke();
      };
      // A thread to upload into (a smoke chart goes into its report's thread).
      first.glm.outbox.enqueue({
        key: 'report',
        kind: 'post',
        channel: OPS,
        refKey: 'report',
        payload: { text: 'nightly report' },
        at: first.glm.engine.clock.now(),
      });
      first.glm.delivery!.poke();
      await waitFor('report', () => first.glm.outbox.ref('report'));
      // Slack shares the file, and its answer comes after the client gave up.
      slack.failMethod('files.completeUploadExternal', 'accept-timeout');
      uploadOne(first, 'chart', 'smoke-chart.png', 'report');
      await waitFor('the timeout', () => slack.faults.length === 1 && first.glm.outbox.counts().pending === 1, 10_000);
      expect(slack.files.filter((f) => f.filename === 'smoke-chart.png')).toHaveLength(1);
      // The bot dies before its retry; the next one starts on the same ledger.
      await first.glm.delivery!.stop();
      const second = await startFace(slack, loaded);
      faces.push(second);
      await waitFor('chart settled', () => second.glm.outbox.counts().pending === undefined, 10_000);
      const charts = slack.files.filter((f) => f.filename === 'smoke-chart.png');
      expect(charts).toHaveLength(1);
      expect(charts[0]!.thread_ts).toBe(second.glm.outbox.ref('report')!.ts);
      expect(slack.named('files.info').map((c) => c.body.file)).toEqual([charts[0]!.id]);
      expect(second.logLines.some((l) => l.includes('file had gone through before'))).toBe(true);

      // A 500 that really lost the share: looked up, unknown to Slack, uploaded once.
      slack.failMethod('files.completeUploadExternal', '500');
      uploadOne(second, 'draft', 'issue-draft.md');
      await waitFor('draft settled', () => second.glm.outbox.counts().pending === undefined, 10_000);
      const drafts = slack.files.filter((f) => f.filename === 'issue-draft.md');
      expect(drafts).toHaveLength(1);
      expect(drafts[0]).toMatchObject({ channel: OPS, content: 'contents of issue-draft.md\n' });
      expect(drafts[0]!.thread_ts).toBeUndefined();
    } finally {
      await slack.close();
    }
  }, 30_000);

  it("one channel's failures do not hold the others", async () => {
    const slack = await startFakeSlack();
    try {
      const face = await startFace(slack, localConfig(mkdtempSync(join(tmpdir(), 'glm-data-'))), {
        maxBackoffMs: 60_000,
      });
      faces.push(face);
      slack.retryAfterS = 30;
      slack.failMethod('chat.postMessage', '429');
      postOne(face, 'a1', 'to CDEV first', 'CDEV');
      postOne(face, 'a2', 'to CDEV second', 'CDEV');
      postOne(face, 'b1', 'to OPS', OPS);
      await waitFor('OPS delivered', () => slack.messages.find((m) => m.text === 'to OPS'), 5000);
      // Slack has the message before the bot marks its row sent (it does once Slack's answer is back): wait for
      // that, not for a moment that is usually long enough.
      await waitFor('OPS marked sent', () => !face.glm.outbox.pending().some((i) => i.key === 'b1'), 5000);
      // CDEV waits out its Retry-After, its order kept.
      expect(slack.messages.filter((m) => m.channel === 'CDEV')).toEqual([]);
      expect(face.glm.outbox.pending().map((i) => i.key)).toEqual(['a1', 'a2']);
    } finally {
      await slack.close();
    }
  });
});

describe('outbox retention', () => {
  it('prunes delivered rows older than the retention period, keeps recent ones', async () => {
    const { openDb } = await import('../../src/ledger/db.ts');
    const { createOutbox } = await import('../../src/ledger/outbox.ts');
    const { createDelivery } = await import('../../src/chat/delivery.ts');
    const pino = (await import('pino')).default;
    const db = openDb(join(mkdtempSync(join(tmpdir(), 'glm-outbox-')), 'ledger.sqlite'));
    let t = 1_000_000_000;
    const clock = { now: () => t, sleep: async () => {} };
    const outbox = createOutbox(db, 'slack');
    let n = 0;
    const adapter = {
      post: async (dest: { channel: string }) => ({ channel: dest.channel, ts: `1.${++n}` }),
      update: async () => {},
      upload: async () => {},
    };
    const day = 86_400_000;
    const d = createDelivery({ outbox, adapter, clock, log: pino({ level: 'silent' }), retentionMs: 7 * day });
    outbox.enqueue({ key: 'old', kind: 'post', channel: 'C1', payload: { text: 'old' }, at: t });
    await d.drain();
    t += 6 * day;
    outbox.enqueue({ key: 'recent', kind: 'post', channel: 'C1', payload: { text: 'recent' }, at: t });
    await d.drain();
    t += 2 * day;
    outbox.enqueue({ key: 'new', kind: 'post', channel: 'C1', payload: { text: 'new' }, at: t });
    await d.drain();
    expect(outbox.has('old')).toBe(false);
    expect(outbox.has('recent')).toBe(true);
    expect(outbox.counts()).toEqual({ sent: 2 });
    db.close();
  });
});

describe('a stuck load (issue 17, item 16)', () => {
  it("keeps the parent's elapsed time moving and says how long there was no progress; the thread stays quiet", async () => {
    const slack = await startFakeSlack();
    try {
      let t = Date.now();
      const clock = { now: () => t, sleep: async () => {} };
      const face = await startFace(slack, localConfig(mkdtempSync(join(tmpdir(), 'glm-data-'))), {
        clock,
        updateIntervalMs: 0,
      });
      faces.push(face);
      const e = face.glm.engine;
      const a = e.attempts.open({
        host: 'gpu',
        profile: 'stuck',
        profileJson: '{}',
        flags: {},
        argv: [],
        env: {},
        commandLine: '',
        port: 30200,
        actor: 'UOPER',
        origin: 'slack',
        startedAt: t,
      });
      e.attempts.update(a.id, { status: 'loading' });
      await e.notifier!.onEvent({ kind: 'started', attempt: a });
      for (let i = 1; i <= 20; i++) {
        t += 500;
        e.notifier!.progress(a, `loading weights ${i}/83 shards`, 'weights');
      }
      const parent = await waitFor('parent', () => slack.messages.find((m) => !m.thread_ts));
      await waitFor('20/83 shown', () => blockText(parent.blocks).includes('20/83'));
      // Nothing more from the log for 7 minutes; the bot's timer ticks.
      t += 7 * 60_000;
      e.notifier!.tick();
      await waitFor('the quiet is told', () => blockText(parent.blocks).includes('no progress for 7 min'));
      expect(blockText(parent.blocks)).toContain('7m10s'); // 10 s of loading, then 7 min of nothing
      // 20 steps, one phase: one thread reply.
      expect(slack.messages.filter((m) => m.thread_ts === parent.ts).map((m) => m.text)).toEqual([
        'loading weights 1/83 shards',
      ]);
      // Once it has ended, ticks leave its message alone.
      e.attempts.finish(a.id, { status: 'stopped', outcome: 'stopped', at: t });
      const versions = parent.versions.length;
      t += 60_000;
      e.notifier!.tick();
      await new Promise((r) => setTimeout(r, 300));
      expect(parent.versions.length).toBe(versions);
    } finally {
      await slack.close();
    }
  });
});
