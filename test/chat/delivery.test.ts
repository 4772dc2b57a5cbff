// The outbox over a real SQLite file: a chat that rate-limits, fails and goes down loses and repeats nothing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createDelivery } from '../../src/chat/delivery.ts';
import { type ChatAdapter, type ChatMessage, TransientChatError } from '../../src/chat/types.ts';
import type { Clock } from '../../src/clock.ts';
import { openDb } from '../../src/ledger/db.ts';
import { createOutbox } from '../../src/ledger/outbox.ts';

function fakeClock(): Clock & { advance(ms: number): void } {
  let t = 1_000_000;
  const advance = (ms: number) => {
    t += ms;
  };
  return { now: () => t, sleep: async (ms) => advance(ms), advance };
}

/** A chat that records what it accepted and fails on a script: 'ok' | '429' | '500' | 'down'. */
function scriptedChat(script: string[]) {
  const accepted: Array<{ op: string; channel: string; thread?: string; text: string; ts?: string }> = [];
  let n = 0;
  const next = () => script.shift() ?? 'ok';
  const fail = (s: string) => {
    if (s === '429') throw new TransientChatError('ratelimited', 1000);
    if (s === '500') throw new TransientChatError('http 500');
    if (s === 'down') throw new TransientChatError('ECONNREFUSED');
  };
  const adapter: ChatAdapter = {
    async post(dest, msg: ChatMessage) {
      fail(next());
      n += 1;
      const ts = `1700000000.${String(n).padStart(6, '0')}`;
      accepted.push({ op: 'post', channel: dest.channel, thread: dest.threadTs, text: msg.text, ts });
      return { channel: dest.channel, ts };
    },
    async update(ref, msg) {
      fail(next());
      accepted.push({ op: 'update', channel: ref.channel, thread: ref.ts, text: msg.text });
    },
    async upload(dest, file) {
      fail(next());
      accepted.push({ op: 'upload', channel: dest.channel, thread: dest.threadTs, text: file.filename });
    },
  };
  return { adapter, accepted };
}

const log = pino({ level: 'silent' });

describe('outbox delivery', () => {
  it('survives 429, 500s and an outage: every message once, in order, threads intact', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'glm-outbox-')), 'ledger.sqlite');
    const db = openDb(file);
    const outbox = createOutbox(db);
    const clock = fakeClock();
    const chat = scriptedChat(['429', '500', '500', 'down', 'down', 'down']);
    const delivery = createDelivery({ outbox, adapter: chat.adapter, clock, log, updateIntervalMs: 0 });
    outbox.enqueue({
      key: 'p1',
      kind: 'post',
      channel: 'C1',
      refKey: 'a1',
      payload: { text: 'parent' },
      at: clock.now(),
    });
    for (let i = 1; i <= 5; i++) {
      outbox.enqueue({
        key: `r${i}`,
        kind: 'post',
        channel: 'C1',
        parentKey: 'a1',
        payload: { text: `reply ${i}` },
        at: clock.now(),
      });
    }
    outbox.enqueue({
      key: 'p1',
      kind: 'post',
      channel: 'C1',
      refKey: 'a1',
      payload: { text: 'parent again' },
      at: clock.now(),
    });
    for (let i = 0; i < 50 && outbox.pending(1).length > 0; i++) {
      await delivery.drain();
      clock.advance(70_000);
    }
    expect(chat.accepted.map((a) => a.text)).toEqual(['parent', 'reply 1', 'reply 2', 'reply 3', 'reply 4', 'reply 5']);
    const parentTs = chat.accepted[0]!.ts;
    expect(chat.accepted.slice(1).every((a) => a.thread === parentTs)).toBe(true);
    db.close();
  });

  it('a restart in the middle resumes from the file: nothing lost, nothing twice', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'glm-outbox-')), 'ledger.sqlite');
    const clock = fakeClock();
    const chat = scriptedChat([]);
    {
      const db = openDb(file);
      const outbox = createOutbox(db);
      for (let i = 1; i <= 4; i++)
        outbox.enqueue({ key: `m${i}`, kind: 'post', channel: 'C1', payload: { text: `m${i}` }, at: clock.now() });
      const d = createDelivery({
        outbox,
        adapter: {
          ...chat.adapter,
          post: async (dest, msg) => {
            if (msg.text === 'm3') throw new TransientChatError('down');
            return chat.adapter.post(dest, msg);
          },
        },
        clock,
        log,
      });
      await d.drain();
      db.close();
    }
    const db = openDb(file);
    const outbox = createOutbox(db);
    const d = createDelivery({ outbox, adapter: chat.adapter, clock, log });
    clock.advance(120_000);
    await d.drain();
    expect(chat.accepted.map((a) => a.text)).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(outbox.counts()).toEqual({ sent: 4 });
    db.close();
  });

  it('coalesces a burst of updates into the latest state, spaced by the update interval', async () => {
    const db = openDb(':memory:');
    const outbox = createOutbox(db);
    const clock = fakeClock();
    const chat = scriptedChat([]);
    const d = createDelivery({ outbox, adapter: chat.adapter, clock, log, updateIntervalMs: 3000 });
    outbox.enqueue({ key: 'p', kind: 'post', channel: 'C1', refKey: 'msg', payload: { text: 'v0' }, at: clock.now() });
    await d.drain();
    for (let i = 1; i <= 20; i++)
      outbox.enqueue({
        key: `u${i}`,
        kind: 'update',
        channel: 'C1',
        refKey: 'msg',
        payload: { text: `v${i}` },
        at: clock.now(),
      });
    await d.drain();
    clock.advance(3000);
    await d.drain();
    expect(chat.accepted.filter((a) => a.op === 'update').map((a) => a.text)).toEqual(['v20']);
  });

  it('a permanent failure is recorded and does not block the rest', async () => {
    const db = openDb(':memory:');
    const outbox = createOutbox(db);
    const clock = fakeClock();
    const chat = scriptedChat([]);
    const adapter: ChatAdapter = {
      ...chat.adapter,
      post: async (dest, msg) => {
        if (dest.channel === 'gone') throw new Error('channel_not_found');
        return chat.adapter.post(dest, msg);
      },
    };
    const d = createDelivery({ outbox, adapter, clock, log });
    outbox.enqueue({ key: 'a', kind: 'post', channel: 'gone', payload: { text: 'lost cause' }, at: clock.now() });
    outbox.enqueue({ key: 'b', kind: 'post', channel: 'C1', payload: { text: 'fine' }, at: clock.now() });
    await d.drain();
    expect(chat.accepted.map((a) => a.text)).toEqual(['fine']);
    expect(outbox.counts()).toEqual({ failed: 1, sent: 1 });
  });
});

describe('faces sharing a ledger', () => {
  it('each face sends only its own messages, even with the same keys', async () => {
    const db = openDb(':memory:');
    const clock = fakeClock();
    const slack = createOutbox(db, 'slack');
    const terminal = createOutbox(db, 'terminal');
    slack.enqueue({
      key: 'alert:1',
      kind: 'post',
      channel: 'C1',
      refKey: 'alert:1',
      payload: { text: 'to slack' },
      at: clock.now(),
    });
    terminal.enqueue({
      key: 'alert:1',
      kind: 'post',
      channel: 'terminal',
      refKey: 'alert:1',
      payload: { text: 'to terminal' },
      at: clock.now(),
    });
    const chat = scriptedChat([]);
    await createDelivery({ outbox: terminal, adapter: chat.adapter, clock, log }).drain();
    expect(chat.accepted.map((a) => a.text)).toEqual(['to terminal']);
    expect(slack.pending()).toHaveLength(1);
    expect(slack.ref('alert:1')).toBeUndefined();
    expect(terminal.ref('alert:1')).toBeDefined();
  });
});

describe('spacing of updates', () => {
  it('an update waiting for its spacing does not hold back an alert queued after it', async () => {
    const db = openDb(':memory:');
    const outbox = createOutbox(db);
    const clock = fakeClock();
    const chat = scriptedChat([]);
    const d = createDelivery({ outbox, adapter: chat.adapter, clock, log, updateIntervalMs: 3000 });
    outbox.enqueue({
      key: 'p',
      kind: 'post',
      channel: 'C1',
      refKey: 'msg',
      payload: { text: 'parent' },
      at: clock.now(),
    });
    outbox.enqueue({
      key: 'u1',
      kind: 'update',
      channel: 'C1',
      refKey: 'msg',
      payload: { text: 'v1' },
      at: clock.now(),
    });
    await d.drain();
    outbox.enqueue({
      key: 'u2',
      kind: 'update',
      channel: 'C1',
      refKey: 'msg',
      payload: { text: 'v2' },
      at: clock.now(),
    });
    outbox.enqueue({
      key: 'alert',
      kind: 'post',
      channel: 'C1',
      parentKey: 'msg',
      payload: { text: 'CRASH' },
      at: clock.now(),
    });
    await d.drain();
    expect(chat.accepted.map((a) => a.text)).toEqual(['parent', 'v1', 'CRASH']);
    clock.advance(3000);
    await d.drain();
    expect(chat.accepted.map((a) => a.text)).toEqual(['parent', 'v1', 'CRASH', 'v2']);
  });
});

describe('outbox delivery stop', () => {
  it('leaves no timer behind: a stopped delivery does not keep a one-shot command alive', async () => {
    const db = openDb(join(mkdtempSync(join(tmpdir(), 'glm-outbox-')), 'ledger.sqlite'));
    const delivery = createDelivery({
      outbox: createOutbox(db),
      adapter: scriptedChat([]).adapter,
      clock: fakeClock(),
      log,
    });
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    delivery.start();
    await new Promise((r) => setImmediate(r));
    await delivery.stop();
    expect(timers()).toBe(before);
    db.close();
  });
});
