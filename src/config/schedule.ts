// The config's `schedule:` section: jobs that run a registry command line on a cron expression, and how far back a
// run missed while the bot was down is still worth running at start-up.
import { validate as validCron } from 'node-cron';
import { z } from 'zod';

const validZone = (tz: string) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
};

const OnCallSchema = z
  .array(z.string().regex(/^[UWS][A-Z0-9]{2,}$/, 'not a Slack user (U0123ABCD) or user group (S0123ABCD) ID'))
  .describe('mentioned when a run fails or regresses: Slack user IDs (U...) and user group IDs (S...)');

export const ScheduleJobSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/i, 'job names: letters, digits, . _ -'),
    cron: z
      .string()
      .refine(
        (s) => validCron(s),
        'is not a valid cron expression (minute hour day month weekday, optional seconds first)',
      )
      .describe("when, as a cron expression: '30 2 * * *' is 02:30 every day"),
    timezone: z
      .string()
      .refine(validZone, 'is not an IANA time zone (like Europe/Berlin)')
      .optional()
      .describe('IANA time zone of the cron expression; default: the machine time zone'),
    run: z
      .string()
      .min(1)
      .refine((s) => !/[\0\n\r]/.test(s), 'must be one line')
      .describe("a command line of the bot, as a person would type it: 'smoke --host gpu1'"),
    channel: z
      .string()
      .regex(/^[A-Z][A-Z0-9]{2,}$/, 'not a Slack channel ID (like C0123ABCD)')
      .optional()
      .describe('where the report goes; default: slack.channel'),
    catch_up_s: z
      .number()
      .nonnegative()
      .optional()
      .describe("this job's catch-up window; default: schedule.catch_up_s"),
    on_call: OnCallSchema.optional().describe("this job's on-call; default: schedule.on_call"),
  })
  .strict();

export const ScheduleSchema = z
  .object({
    catch_up_s: z
      .number()
      .nonnegative()
      .default(6 * 3600)
      .describe('a run missed while the bot was down is run at start-up if it was due at most this long ago'),
    on_call: OnCallSchema.default([]),
    jobs: z.array(ScheduleJobSchema).default([]),
  })
  .strict();

export type ScheduleJob = z.infer<typeof ScheduleJobSchema>;
export type ScheduleConfig = z.infer<typeof ScheduleSchema>;
