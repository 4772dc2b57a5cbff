// Scheduled jobs that share a host (issue 17, item 23), on an injected clock and a real sshd with the stand-in: jobs
// that touch the same host run one after the other, and the one that waits says so in the ledger and its channel;
// a job that only reads does not wait; runs missed during a long outage are reported (all of them, also when
// the latest is caught up), with the catch-up window shown exactly; node-cron hands every tick to the scheduler.
import { mkdirSync } from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.ts';
import type { ChatAdapter, ChatMessage } from '../../src/chat/types.ts';
import type { Clock } from '../../src/clock.ts';
import { span } from '../../src/format/table.ts';
import { startScheduler } from '../../src/schedule/scheduler.ts';
import { clockTriggers, cronTriggers } from '../../src/schedule/triggers.ts';
import { freshDirs, terminalContext, testConfig, until } from '../helpers/app.ts';
import { ledgerDb } from '../helpers/ledger.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots, stopLive } from '../helpers/sshd-bots.ts';
import { profilesWith, shutdown } from './helpers.ts';

const shared = sshdWithBots();
let profiles: string;
const dirs = freshDirs();
let t = Date.parse('2026-03-10T02:29:00Z');
const clock: Clock = { now: () => t, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };

const sent: Array<{ channel: string; text: string }> = [];
let n = 0;
const adapter: ChatAdapter = {
  async post(dest, msg: ChatMessage) {
    n += 1;
    sent.push({ channel: dest.channel, text: msg.text });
    return { channel: dest.channel, ts: `1.${n}` };
  },
  async update() {},
  async upload() {},
};
const posts = (channel: string) => sent.filter((m) => m.channel === channel).map((m) => m.text);

function bot(): App {
  const loaded = testConfig(shared.sshd, {
    ...dirs,
    env: { STANDIN_TTFT_MS: '20', STANDIN_TPOT_MS: '4' },
    extra: {
      // What is asserted here is the order of the jobs, not the server's speed: the two smokes of small-here are
      // timed on whatever else the machine runs, and a second run 20% slower than the first (the default threshold)
      // would be a REGRESSION verdict, not PASS. Comparing figures is smoke.test.ts's (with the stand-in's fixed pace).
      smoke: { regression_pct: 10_000 },
      schedule: {
        catch_up_s: 30,
        jobs: [
          // A fresh launch of small-here beside the running one (item 21), and a smoke of what runs on the same
          // host: without waiting, the second would find the first's server loading.
          {
            name: 'launch-smoke',
            cron: '30 2 * * *',
            timezone: 'UTC',
            run: 'smoke --host gpu --profile small-here --launch',
            channel: 'C0LAUNCH',
          },
          { name: 'running-smoke', cron: '30 2 * * *', timezone: 'UTC', run: 'smoke --host gpu', channel: 'C0RUN' },
          // Only reads (the ledger): never waits.
          { name: 'ledger-report', cron: '30 2 * * *', timezone: 'UTC', run: 'attempts', channel: 'C0LEDGER' },
        ],
      },
    },
  });
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  return createApp({
    loaded: { ...loaded, profilesDir: profiles },
    log: pino({ level: 'warn' }, sink),
    clock,
    chat: { adapter, channel: 'C0BOT', parentMessages: false, milestonesInThread: false, updateIntervalMs: 0 },
  });
}

beforeAll(async () => {
  mkdirSync(dirs.dataDir, { recursive: true });
  // Below the ephemeral range: the fresh launch beside the running server moves to the next free ports up.
  profiles = profilesWith({ 'small-here': `extends: small\nport: ${await freePort([25000, 29000])}\n` });
});
afterAll(async () => {
  // A bot on the tests' ledger stops what they left running.
  const app = bot();
  await stopLive({ app, ctx: terminalContext(app) });
  await shutdown(app);
});

describe('jobs on one host', () => {
  it('run one after the other; the one that waits says so in the ledger and its channel', async () => {
    const app = bot();
    const ctx = terminalContext(app);
    expect((await app.dispatch.run('launch small-here', ctx)).text).toMatch(/^ready: attempt #1/);
    const triggers = clockTriggers(clock);
    const s = startScheduler(app, { triggers: triggers.factory });
    await s.ready;
    t = Date.parse('2026-03-10T02:30:01Z');
    await triggers.tick();
    await app.delivery!.flush(5000);

    // The smoke of the running server waited for the launch job (posted as soon as it had to wait), then passed.
    const run = posts('C0RUN');
    expect(run).toHaveLength(2);
    expect(run[0]).toBe(
      'scheduled running-smoke (due 2026-03-10 02:30 UTC) waits for launch-smoke (due 2026-03-10 02:30 UTC, on gpu): jobs that touch the same host run one after the other; it runs when they are done: smoke --host gpu',
    );
    expect(run[1]).toMatch(/^PASS scheduled running-smoke \(due 2026-03-10 02:30 UTC\): smoke --host gpu\n/);
    expect(run[1]).toMatch(/ · waited \d+s for launch-smoke first\n/);
    expect(run[1]).toMatch(/smoke PASS: attempt #1 \(small-here\) on gpu/);
    expect(posts('C0LAUNCH')).toEqual([
      expect.stringMatching(/^PASS scheduled launch-smoke [\s\S]*attempt #2 \(small-here\)/),
    ]);
    // Not at the same time: the launch job's smoke finished before the other's started.
    const rows = ledgerDb(app.engine)
      .prepare('SELECT id, actor, attempt_id AS attempt FROM smoke_runs ORDER BY id')
      .all();
    expect(rows).toEqual([
      { id: 1, actor: 'scheduler', attempt: 2 },
      { id: 2, actor: 'scheduler', attempt: 1 },
    ]);
    // A job that only reads did not wait.
    expect(posts('C0LEDGER')).toEqual([expect.stringMatching(/^OK scheduled ledger-report/)]);
    expect(app.engine.ledger.schedule.events()).toEqual([
      expect.objectContaining({
        job: 'running-smoke',
        kind: 'waited',
        dueAt: Date.parse('2026-03-10T02:30:00Z'),
        detail: expect.stringMatching(/^waits for launch-smoke/),
      }),
    ]);
    const list = await app.dispatch.run('schedule', ctx);
    expect(list.text).toMatch(
      /not as scheduled \(newest first\):\n {2}2026-03-10 02:30 UTC running-smoke waited: waits for launch-smoke/,
    );
    await shutdown(app, s);
  }, 60_000);
});

describe('runs missed during a long outage', () => {
  it('reports every run not run, with the catch-up window shown exactly', async () => {
    sent.length = 0;
    // Down for three nights; back ten minutes after the third 02:30, far beyond the 30 s window.
    t = Date.parse('2026-03-13T02:40:00Z');
    const app = bot();
    const s = startScheduler(app, { triggers: clockTriggers(clock).factory });
    await s.ready;
    await app.delivery!.flush(5000);
    expect(posts('C0RUN')).toEqual([
      'scheduled running-smoke: 3 runs due 2026-03-11 02:30 UTC to 2026-03-13 02:30 UTC were missed while the bot was down: not run (all are older than the catch-up window (30 s)): smoke --host gpu',
    ]);
    expect(posts('C0LAUNCH')).toHaveLength(1);
    const events = app.engine.ledger.schedule.events();
    expect(events.filter((e) => e.kind === 'missed').map((e) => e.job)).toEqual([
      'ledger-report',
      'running-smoke',
      'launch-smoke',
    ]);
    await shutdown(app, s);
  });

  it('when the latest missed run is within the window it runs, and the earlier ones are reported', async () => {
    sent.length = 0;
    t = Date.parse('2026-03-16T02:30:10Z');
    const app = bot();
    const s = startScheduler(app, { triggers: clockTriggers(clock).factory });
    await s.ready;
    await app.delivery!.flush(5000);
    const ledger = posts('C0LEDGER');
    expect(ledger).toHaveLength(2);
    expect(ledger[0]).toBe(
      'scheduled ledger-report: 2 runs due 2026-03-14 02:30 UTC to 2026-03-15 02:30 UTC were missed while the bot was down: not run (only the latest missed run (due 2026-03-16 02:30 UTC) is caught up): attempts',
    );
    expect(ledger[1]).toMatch(
      /^OK scheduled ledger-report: catch-up of the run due 2026-03-16 02:30 UTC, missed while the bot was down/,
    );
    await shutdown(app, s);
  }, 60_000);

  it('shows a configured span exactly', () => {
    expect([30_000, 7_200_000, 5_400_000, 90_500, 0, 3_601_000].map(span)).toEqual([
      '30 s',
      '2 h',
      '1 h 30 min',
      '1 min 30.5 s',
      '0 s',
      '1 h 1 s',
    ]);
  });
});

describe('the node-cron trigger', () => {
  it('hands the scheduler a tick while the previous run is still going (the scheduler skips it and says so)', async () => {
    const job = { name: 'every-second', cron: '* * * * * *', run: 'attempts' };
    const fired: number[] = [];
    const tr = cronTriggers(job, (d) => {
      fired.push(d);
      return new Promise(() => {}); // never finishes
    });
    tr.start();
    try {
      await until(() => fired.length >= 2, 5000);
    } finally {
      await tr.stop();
    }
    expect(fired[1]! - fired[0]!).toBeGreaterThanOrEqual(1000);
  });
});
