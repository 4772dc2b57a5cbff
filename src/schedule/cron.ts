// Cron arithmetic on node-cron's own matcher (so time zones and field syntax behave exactly as the live trigger
// does): which scheduled instants fall in a span, and the next one after a time. The span is walked minute by
// minute (second by second for six-field expressions), which is cheap for the spans used here.
import { createTask, type ScheduledTask } from 'node-cron';
import type { ScheduleJob } from '../config/schedule.ts';

const matchers = new Map<string, ScheduledTask>();

function matcher(job: Pick<ScheduleJob, 'cron' | 'timezone'>): ScheduledTask {
  const key = `${job.cron}|${job.timezone ?? ''}`;
  let t = matchers.get(key);
  if (!t) {
    // Never started: used only for match(); it holds no timer.
    t = createTask(job.cron, () => undefined, job.timezone ? { timezone: job.timezone } : {});
    matchers.set(key, t);
  }
  return t;
}

const stepOf = (cron: string) => (cron.trim().split(/\s+/).length >= 6 ? 1000 : 60_000);

/** The latest scheduled instant in (after, upTo], or null. */
export function latestIn(job: Pick<ScheduleJob, 'cron' | 'timezone'>, after: number, upTo: number): number | null {
  const m = matcher(job);
  const step = stepOf(job.cron);
  for (let t = Math.floor(upTo / step) * step; t > after; t -= step) if (m.match(new Date(t))) return t;
  return null;
}

/** At most this many steps are walked to count missed runs (a year of minutes; 6 days of seconds). */
const MAX_STEPS = 525_600;

/**
 * The scheduled instants in (after, upTo]: how many, the first and the last. Over a span longer than MAX_STEPS
 * steps only the newest part is counted, and `atLeast` says the count is a lower bound.
 */
export function dueIn(
  job: Pick<ScheduleJob, 'cron' | 'timezone'>,
  after: number,
  upTo: number,
): { count: number; first: number | null; last: number | null; atLeast: boolean } {
  const m = matcher(job);
  const step = stepOf(job.cron);
  let count = 0;
  let first: number | null = null;
  let last: number | null = null;
  let t = Math.floor(upTo / step) * step;
  for (let n = 0; t > after && n < MAX_STEPS; t -= step, n++) {
    if (!m.match(new Date(t))) continue;
    count++;
    last ??= t;
    first = t;
  }
  return { count, first, last, atLeast: t > after };
}

/** The next scheduled instant after `from`, looking at most `horizonMs` ahead. */
export function nextAfter(
  job: Pick<ScheduleJob, 'cron' | 'timezone'>,
  from: number,
  horizonMs = 8 * 24 * 3600_000,
): number | null {
  const m = matcher(job);
  const step = stepOf(job.cron);
  for (let t = Math.floor(from / step) * step + step; t <= from + horizonMs; t += step)
    if (m.match(new Date(t))) return t;
  return null;
}
