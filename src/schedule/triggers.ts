// What makes a job fire. In the bot: node-cron tasks (created stopped, started by the scheduler). In tests: a
// trigger driven by an injected clock, advanced by the test and ticked, so no test waits for real time. Every tick
// reaches the scheduler, also while the job's previous run is still going: the scheduler skips it and says so in the
// ledger and the job's channel (node-cron's own noOverlap would drop it with only a line on stderr).
import { createTask } from 'node-cron';
import type { Clock } from '../clock.ts';
import type { ScheduleJob } from '../config/schedule.ts';
import { latestIn, nextAfter } from './cron.ts';

export interface Trigger {
  start(): void;
  stop(): void | Promise<void>;
  /** When it fires next (ms), or null when stopped or not within reach. */
  nextRun(): number | null;
}

/** `fire(dueAt)` runs the job for the run due at `dueAt`. */
export type TriggerFactory = (job: ScheduleJob, fire: (dueAt: number) => Promise<void>) => Trigger;

export const cronTriggers: TriggerFactory = (job, fire) => {
  const task = createTask(
    job.cron,
    async (ctx) => {
      // ctx.date is the scheduled instant; whole seconds, so the ledger's due time matches the catch-up arithmetic.
      await fire(Math.floor(ctx.date.getTime() / 1000) * 1000);
    },
    { name: `glm-schedule:${job.name}`, ...(job.timezone ? { timezone: job.timezone } : {}) },
  );
  return {
    start: () => void task.start(),
    stop: () => task.destroy(),
    nextRun: () => task.getNextRun()?.getTime() ?? null,
  };
};

export interface ClockTriggers {
  factory: TriggerFactory;
  /** Fires every started job whose scheduled instant passed since the last tick (the latest one, once). */
  tick(): Promise<void>;
}

export function clockTriggers(clock: Clock): ClockTriggers {
  const entries: Array<{ job: ScheduleJob; fire: (dueAt: number) => Promise<void>; last: number; on: boolean }> = [];
  return {
    factory(job, fire) {
      const e = { job, fire, last: clock.now(), on: false };
      entries.push(e);
      return {
        start() {
          e.on = true;
          e.last = clock.now();
        },
        stop() {
          e.on = false;
        },
        nextRun: () => (e.on ? nextAfter(job, clock.now()) : null),
      };
    },
    async tick() {
      const now = clock.now();
      await Promise.all(
        entries
          .filter((e) => e.on)
          .map((e) => {
            const due = latestIn(e.job, e.last, now);
            e.last = now;
            return due === null ? undefined : e.fire(due);
          }),
      );
    },
  };
}
