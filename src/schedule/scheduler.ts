// Part src/schedule: owns scheduled jobs: cron, catch-up, queueing per host, reports to the channel.
// May import: alerts, chat, clock.ts, config, format, hosts, ledger, lifecycle, logs, runtime.
//
// Scheduled jobs: a command line of the registry run on a cron expression, through the same dispatch (parsing,
// authorisation, audit) as a person's command, as actor `scheduler`. Its output goes to the job's channel through
// the outbox (files the command made, like a benchmark chart, as uploads in the report's thread). A run missed
// while the bot was down is run at start-up if it is still within the catch-up window, and says so; runs missed
// and not run are reported too. Jobs that touch the same host run one after the other (one job's smoke never hits
// another's launch while it loads), and a run that waits, or a tick skipped because the job's previous run is still
// going, is recorded in the ledger (schedule_events) and posted to the job's channel.

import { readFileSync } from 'node:fs';
import { parentKey } from '../alerts/notifier.ts';
import { viewText } from '../chat/text.ts';
import type { ChatMessage, View } from '../chat/types.ts';
import { resolveLaunchHosts } from '../config/hosts.ts';
import type { ScheduleJob } from '../config/schedule.ts';
import { duration, span } from '../format/table.ts';
import type { Outbox } from '../ledger/outbox.ts';
import type { ScheduleState } from '../ledger/schedule.ts';
import type { Engine } from '../lifecycle/engine.ts';
import type { DiagnoserFactory } from '../logs/diagnosis.ts';
import { argsOf, parseArgs } from '../runtime/args.ts';
import type { CommandContext, CommandOutput } from '../runtime/define.ts';
import { tokenize } from '../runtime/parse.ts';
import type { Dispatch } from '../runtime/registry.ts';
import { dueIn, latestIn, nextAfter } from './cron.ts';
import { cronTriggers, type Trigger, type TriggerFactory } from './triggers.ts';

export interface SchedulerApp {
  engine: Engine;
  dispatch: Dispatch;
  diagnoser: DiagnoserFactory;
  outbox: Outbox;
  delivery?: { poke(): void };
}

export interface SchedulerOptions {
  /** Default: node-cron. Tests pass clockTriggers(clock).factory. */
  triggers?: TriggerFactory;
  /** Where a report goes when its job has no channel and the bot has no Slack channel (the terminal). */
  say?: (text: string) => void;
}

export interface Scheduler {
  /** Settles once the start-up catch-up has run. */
  ready: Promise<void>;
  jobs(): Array<{ job: ScheduleJob; nextRun: number | null }>;
  /** Runs a job now for the run due at `dueAt` (what a trigger calls). */
  fire(name: string, dueAt: number): Promise<void>;
  stop(): Promise<void>;
}

export const SCHEDULER_ACTOR = 'scheduler';

/** A run that holds (or waits for) hosts; `done` settles when it has finished. */
interface Hold {
  job: string;
  dueAt: number;
  hosts: string[];
  done: Promise<void>;
}

/** Whom a run waited for, and how long. */
interface Waited {
  for: string;
  ms: number;
}

const fmt = (t: number, tz?: string) =>
  `${new Intl.DateTimeFormat('sv-SE', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).format(new Date(t))}${tz ? ` ${tz}` : ''}`;

export function catchUpMs(engine: Pick<Engine, 'loaded'>, job: ScheduleJob): number {
  return (job.catch_up_s ?? engine.loaded.config.schedule?.catch_up_s ?? 6 * 3600) * 1000;
}

export function startScheduler(app: SchedulerApp, opts: SchedulerOptions = {}): Scheduler {
  const { engine, dispatch } = app;
  const log = engine.log.child({ part: 'scheduler' });
  const jobs = engine.loaded.config.schedule?.jobs ?? [];
  const state: ScheduleState = engine.ledger.schedule;
  /** Each job's run under way (waiting for its hosts, or running). */
  const busy = new Map<string, { dueAt: number; since: number; waiting: boolean }>();
  /** Per host, the newest run that holds or waits for it: the next run touching the host waits for this one. */
  const holds = new Map<string, Hold>();
  const inFlight = new Set<Promise<void>>();
  const triggers = new Map<string, Trigger>();
  const factory = opts.triggers ?? cronTriggers;
  const known = new Set(dispatch.commands.map((c) => c.name));

  /**
   * The hosts a job's command works on: its --host (a host, a group, or a node list), else its profile's host, else
   * the default host. Only commands that start or stop servers (launch, smoke, bench, bisect, stop: effect write)
   * collide; one that only looks (status, probe, attempts) never waits. A run line that does not parse touches none
   * here: running it reports the error.
   */
  function hostsOf(job: ScheduleJob): string[] {
    try {
      const tokens = tokenize(job.run.trim());
      const def = dispatch.commands.find((c) => c.name === tokens[0]);
      if (def?.effect !== 'write' || !('host' in argsOf(def).shape)) return [];
      const args = parseArgs(def, tokens.slice(1));
      let named = typeof args.host === 'string' ? args.host : undefined;
      if (!named && typeof args.profile === 'string') {
        try {
          named = engine.profiles.get(args.profile).host;
        } catch {
          // not a profile file (next:N, a typo): the default host, and the run says what is wrong
        }
      }
      return resolveLaunchHosts(engine.loaded, named).hosts;
    } catch {
      return [];
    }
  }

  function channelOf(job: ScheduleJob): string | undefined {
    return job.channel ?? engine.loaded.config.slack?.channel;
  }

  interface Upload {
    filename: string;
    title?: string;
    /** A file the command made (a chart), read now; or text made here (a smoke's answers). */
    path?: string;
    text?: string;
  }

  function report(job: ScheduleJob, key: string, msg: ChatMessage, uploads: Upload[]) {
    const channel = channelOf(job);
    if (!channel) {
      if (opts.say) opts.say(msg.text);
      else log.info({ job: job.name, text: msg.text }, 'scheduled job report (no channel configured)');
      return;
    }
    const now = engine.clock.now();
    app.outbox.enqueue({ key, kind: 'post', channel, refKey: key, payload: msg, at: now });
    for (const f of uploads) {
      let content: string;
      try {
        content = f.path ? readFileSync(f.path).toString('base64') : Buffer.from(f.text ?? '').toString('base64');
      } catch (e) {
        log.warn({ job: job.name, file: f.path, err: (e as Error).message }, 'scheduled job: file to upload is gone');
        continue;
      }
      app.outbox.enqueue({
        key: `${key}:file:${f.filename}`,
        kind: 'upload',
        channel,
        parentKey: key,
        payload: { filename: f.filename, title: f.title ?? f.filename, content, encoding: 'base64' },
        at: now,
      });
    }
    app.delivery?.poke();
  }

  /**
   * A run's report: the verdict first (PASS, FAIL, REGRESSION, OK), so a notification and a search show it; the
   * on-call mentioned when it did not pass; for a smoke, its profile, SGLang version and duration, links to its
   * attempt's thread and log, and the model's full answers as a file.
   */
  function reportOf(
    job: ScheduleJob,
    head: string,
    out: CommandOutput,
    waited?: Waited,
  ): { msg: ChatMessage; uploads: Upload[] } {
    const data = out.data as
      | {
          verdict?: string;
          profile?: string;
          attemptId?: number | null;
          durationMs?: number;
          id?: number;
          prompts?: Array<{ name: string; endpoint: string; ok: boolean; problems: string[]; answer: string }>;
          files?: Array<{ filename: string; path: string; title?: string }>;
          /** A launch's outcome (commands/launch.ts), a smoke's flag: the bot closed under the job. */
          outcome?: string;
          interrupted?: boolean;
        }
      | undefined;
    // A job the bot's own shutdown interrupted says so and pages nobody: nothing is known to be wrong.
    const interrupted = data?.interrupted === true || data?.outcome === 'interrupted';
    const verdict = interrupted ? 'INTERRUPTED' : (data?.verdict ?? (out.exitCode ? 'fail' : 'ok')).toUpperCase();
    const passed = verdict === 'PASS' || verdict === 'OK';
    const onCall = job.on_call ?? engine.loaded.config.schedule?.on_call ?? [];
    const attempt = data?.attemptId ? engine.attempts.get(data.attemptId) : undefined;
    const facts: string[] = [];
    if (data?.profile) facts.push(`profile ${data.profile}`);
    if (attempt) facts.push(`SGLang ${attempt.sglangVersion ?? 'version unknown'}`);
    if (data?.durationMs !== undefined) facts.push(`took ${duration(data.durationMs)}`);
    if (waited) facts.push(`waited ${duration(waited.ms)} for ${waited.for} first`);
    const links: Extract<View, { type: 'report' }>['links'] = [];
    if (attempt) {
      links.push({ label: `attempt #${attempt.id}'s thread`, refKey: parentKey(attempt.id) });
      if (attempt.logPath) links.push({ label: 'log', text: `${attempt.host}:${attempt.logPath}` });
    }
    const view: View = {
      type: 'report',
      verdict,
      title: head,
      facts,
      body: out.text,
      mention: passed || interrupted ? [] : onCall,
      links,
    };
    const uploads: Upload[] = (data?.files ?? []).map((f) => ({ filename: f.filename, path: f.path, title: f.title }));
    if (data?.prompts?.length) {
      const text = data.prompts
        .map(
          (p) =>
            `## ${p.name} (${p.endpoint}): ${p.ok ? 'ok' : `FAIL: ${p.problems.join('; ')}`}\n${p.answer || '(no answer)'}\n`,
        )
        .join('\n');
      uploads.push({ filename: `smoke-${data.id ?? 'run'}-answers.txt`, title: "the model's full answers", text });
    }
    return { msg: { text: viewText(view) ?? head, view }, uploads };
  }

  async function run(job: ScheduleJob, dueAt: number, catchUp: boolean): Promise<void> {
    // No overlap: a tick while the job's previous run is still going (waiting or running) is skipped, and says so.
    const prev = busy.get(job.name);
    if (prev) {
      skipped(job, dueAt, prev);
      return;
    }
    if (!state.claim(job.name, dueAt, engine.clock.now(), catchUp)) return; // already run for this due time
    // Take the place behind whatever holds this job's hosts, synchronously, so runs fired together queue in order.
    const hosts = hostsOf(job);
    const ahead = [...new Set(hosts.map((h) => holds.get(h)).filter((x): x is Hold => x !== undefined))];
    let release = () => {};
    const hold: Hold = { job: job.name, dueAt, hosts, done: new Promise<void>((r) => (release = r)) };
    for (const h of hosts) holds.set(h, hold);
    const mine = { dueAt, since: engine.clock.now(), waiting: ahead.length > 0 };
    busy.set(job.name, mine);
    const running = (async () => {
      let waited: Waited | undefined;
      if (ahead.length) {
        waited = announceWait(job, dueAt, hosts, ahead);
        const from = engine.clock.now();
        await Promise.all(ahead.map((a) => a.done));
        waited.ms = engine.clock.now() - from;
        mine.waiting = false;
      }
      await runClaimed(job, dueAt, catchUp, waited);
    })().finally(() => {
      for (const h of hosts) if (holds.get(h) === hold) holds.delete(h);
      release();
      busy.delete(job.name);
      inFlight.delete(running);
    });
    inFlight.add(running);
    await running;
  }

  /** A run that must wait for other jobs on its hosts: in the ledger and the job's channel, now (not after). */
  function announceWait(job: ScheduleJob, dueAt: number, hosts: string[], ahead: Hold[]): Waited {
    const names = ahead
      .map(
        (a) =>
          `${a.job} (due ${fmt(a.dueAt, job.timezone)}, on ${a.hosts.filter((h) => hosts.includes(h)).join(', ')})`,
      )
      .join(', ');
    const detail = `waits for ${names}: jobs that touch the same host run one after the other`;
    state.event({ job: job.name, dueAt, at: engine.clock.now(), kind: 'waited', detail });
    log.info({ job: job.name, dueAt, ahead: ahead.map((a) => a.job) }, 'scheduled job waits for another on its host');
    report(
      job,
      `schedule:${job.name}:${dueAt}:wait`,
      {
        text: `scheduled ${job.name} (due ${fmt(dueAt, job.timezone)}) ${detail}; it runs when they are done: ${job.run}`,
      },
      [],
    );
    return { for: ahead.map((a) => a.job).join(', '), ms: 0 };
  }

  /** A tick while the job's previous run is still going: skipped, in the ledger and the job's channel. */
  function skipped(job: ScheduleJob, dueAt: number, prev: { dueAt: number; since: number; waiting: boolean }) {
    const detail = `the run due ${fmt(prev.dueAt, job.timezone)} is still ${prev.waiting ? 'waiting for its host' : 'running'} (since ${fmt(prev.since, job.timezone)})`;
    state.event({ job: job.name, dueAt, at: engine.clock.now(), kind: 'skipped', detail });
    log.warn({ job: job.name, dueAt, running: prev.dueAt }, 'scheduled job still running: this run is skipped');
    report(
      job,
      `schedule:${job.name}:${dueAt}:skipped`,
      { text: `scheduled ${job.name}: the run due ${fmt(dueAt, job.timezone)} is skipped: ${detail}: ${job.run}` },
      [],
    );
  }

  async function runClaimed(job: ScheduleJob, dueAt: number, catchUp: boolean, waited?: Waited): Promise<void> {
    const channel = channelOf(job);
    const said: string[] = [];
    const ctx: CommandContext = {
      engine,
      actor: SCHEDULER_ACTOR,
      origin: 'scheduler',
      log: log.child({ job: job.name }),
      say: (t) => said.push(t),
      diagnoser: app.diagnoser,
      longLived: true,
      commands: dispatch.commands,
      identity: channel ? { user: SCHEDULER_ACTOR, channel, via: 'command' } : undefined,
    };
    let out: CommandOutput;
    try {
      out = await dispatch.run(job.run, ctx);
    } catch (e) {
      out = { text: `failed: ${(e as Error).message}`, exitCode: 1 };
    }
    const head = catchUp
      ? `scheduled ${job.name}: catch-up of the run due ${fmt(dueAt, job.timezone)}, missed while the bot was down: ${job.run}`
      : `scheduled ${job.name} (due ${fmt(dueAt, job.timezone)}): ${job.run}`;
    const r = reportOf(job, head, out, waited);
    report(job, `schedule:${job.name}:${dueAt}`, r.msg, r.uploads);
    state.finished(job.name, engine.clock.now(), out.exitCode ? `failed (exit ${out.exitCode})` : 'ok');
  }

  async function catchUp(job: ScheduleJob): Promise<void> {
    const now = engine.clock.now();
    const st = state.seen(job.name, now);
    const since = st.lastDueAt ?? st.firstSeenAt;
    const window = catchUpMs(engine, job);
    const missed = dueIn(job, since, now);
    if (missed.count === 0 || missed.last === null) return;
    // The latest missed run is caught up when it is within the window; the others are never run, but reported.
    const runLatest = missed.last > now - window;
    const notRun = runLatest ? missed.count - 1 : missed.count;
    if (notRun > 0) {
      const lastNotRun = runLatest ? latestIn(job, since, missed.last - 1)! : missed.last;
      const n = `${missed.atLeast ? 'at least ' : ''}${notRun}`;
      const due =
        notRun === 1
          ? `the run due ${fmt(lastNotRun, job.timezone)} was`
          : `${n} runs due ${fmt(missed.first!, job.timezone)} to ${fmt(lastNotRun, job.timezone)} were`;
      const why = runLatest
        ? `only the latest missed run (due ${fmt(missed.last, job.timezone)}) is caught up`
        : `${notRun === 1 ? 'it is' : 'all are'} older than the catch-up window (${span(window)})`;
      const text =
        notRun === 1 && !runLatest
          ? `scheduled ${job.name}: the run due ${fmt(lastNotRun, job.timezone)} was missed while the bot was down and is older than the catch-up window (${span(window)}): not run. Next: ${job.run}`
          : `scheduled ${job.name}: ${due} missed while the bot was down: not run (${why}): ${job.run}`;
      if (!runLatest) {
        // Claiming the newest one not run records them as handled: said once, not again at the next start.
        if (!state.claim(job.name, lastNotRun, now, false)) return;
        state.finished(job.name, now, 'missed');
      }
      state.event({ job: job.name, dueAt: lastNotRun, at: now, kind: 'missed', detail: text });
      log.warn({ job: job.name, missed: notRun, first: missed.first, last: lastNotRun }, 'scheduled runs missed');
      report(job, `schedule:${job.name}:${lastNotRun}:missed`, { text }, []);
    }
    if (runLatest) {
      log.info({ job: job.name, dueAt: missed.last }, 'catching up a run missed while the bot was down');
      await run(job, missed.last, true);
    }
  }

  for (const job of jobs) {
    const name = job.run.trim().split(/\s+/)[0] ?? '';
    if (!known.has(name)) log.error({ job: job.name, run: job.run }, `scheduled job names unknown command '${name}'`);
    triggers.set(
      job.name,
      factory(job, (dueAt) =>
        run(job, dueAt, false).catch((e: Error) =>
          log.error({ job: job.name, err: e.message }, 'scheduled job failed'),
        ),
      ),
    );
  }
  // Catch up first, then arm the triggers: a run found missed here is not also fired by its trigger.
  const ready = (async () => {
    for (const job of jobs)
      await catchUp(job).catch((e: Error) => log.error({ job: job.name, err: e.message }, 'catch-up failed'));
    for (const t of triggers.values()) t.start();
  })();

  return {
    ready,
    jobs: () =>
      jobs.map((job) => ({ job, nextRun: triggers.get(job.name)?.nextRun() ?? nextAfter(job, engine.clock.now()) })),
    async fire(name, dueAt) {
      const job = jobs.find((j) => j.name === name);
      if (job) await run(job, dueAt, false);
    },
    async stop() {
      await ready;
      for (const t of triggers.values()) await t.stop();
      triggers.clear();
      // A job under way finishes (and reports) before the bot goes.
      await Promise.allSettled([...inFlight]);
    },
  };
}
