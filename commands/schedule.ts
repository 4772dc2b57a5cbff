import { table } from '../src/format/table.ts';
import { defineCommand } from '../src/runtime/define.ts';

const when = (t: number | null, tz?: string) =>
  t === null
    ? '-'
    : `${new Intl.DateTimeFormat('sv-SE', { timeZone: tz, dateStyle: 'short', timeStyle: 'short' }).format(new Date(t))}${tz ? ` ${tz}` : ''}`;

const command = defineCommand({
  name: 'schedule',
  summary: 'the scheduled jobs (nightly smoke, benchmarks): when each runs next, when it last ran and how it went',
  usage: 'schedule [--json]',
  examples: ['schedule', 'schedule --json'],
  positionals: [],
  switches: ['json'],
  args: (z) => z.object({ json: z.boolean().optional() }),
  effect: 'read',
  async run(ctx, { json }) {
    const { nextAfter } = await import('../src/schedule/cron.ts');
    const { catchUpMs } = await import('../src/schedule/scheduler.ts');
    const cfg = ctx.engine.loaded.config;
    const jobs = cfg.schedule?.jobs ?? [];
    const state = ctx.engine.ledger.schedule;
    const now = ctx.engine.clock.now();
    const rows = jobs.map((j) => {
      const st = state.get(j.name);
      return {
        name: j.name,
        cron: j.cron,
        timezone: j.timezone ?? null,
        run: j.run,
        channel: j.channel ?? cfg.slack?.channel ?? null,
        nextRun: nextAfter(j, now),
        catchUpS: catchUpMs(ctx.engine, j) / 1000,
        lastDueAt: st?.lastDueAt ?? null,
        lastResult: st?.lastResult ?? null,
        lastCatchUp: st?.lastCatchUp ?? false,
      };
    });
    // What did not run as scheduled: waits for another job on the host, skips, runs missed while the bot was down.
    const events = state.events({ limit: 5 });
    if (json) {
      const withEvents = rows.map((r) => ({ ...r, events: state.events({ job: r.name, limit: 5 }) }));
      return { text: JSON.stringify(withEvents, null, 2), data: withEvents };
    }
    if (rows.length === 0)
      return { text: 'no scheduled jobs: add them under schedule.jobs in the config (cron, timezone, run, channel)' };
    const tzOf = (job: string) => jobs.find((j) => j.name === job)?.timezone;
    const recent = events.length
      ? `\n\nnot as scheduled (newest first):\n${events.map((e) => `  ${when(e.at, tzOf(e.job))} ${e.job} ${e.kind}: ${e.detail}`).join('\n')}`
      : '';
    return {
      text: `${table(
        ['job', 'cron', 'runs', 'next run', 'last run (due)', 'result', 'report to'],
        rows.map((r) => [
          r.name,
          r.cron,
          r.run,
          r.nextRun === null ? 'more than 8 days away' : when(r.nextRun, r.timezone ?? undefined),
          `${when(r.lastDueAt, r.timezone ?? undefined)}${r.lastCatchUp ? ' (catch-up)' : ''}`,
          r.lastResult ?? '-',
          r.channel ?? 'terminal',
        ]),
      )}${recent}`,
      data: rows,
    };
  },
});

export default command;
