import { z } from 'zod';
import { defineCommand } from '../src/commands/define.ts';
import { duration, table } from '../src/format/table.ts';
import { reconcile } from '../src/server/reconcile.ts';

export default defineCommand({
  name: 'status',
  summary: 'every host at a glance: what runs where, since when, launched by whom',
  usage: 'status [--json]',
  examples: ['status'],
  positionals: [],
  switches: ['json'],
  args: z.object({ json: z.boolean().optional() }),
  effect: 'read',
  async run(ctx, { json }) {
    const checked = await reconcile(ctx.engine);
    const now = ctx.engine.clock.now();
    const rows = Object.keys(ctx.engine.loaded.config.hosts).map((host) => {
      const a = ctx.engine.attempts.activeOn(host);
      const c = checked.find((x) => x.attempt.host === host && x.state !== 'closed');
      return {
        host,
        state: a ? a.status : 'idle',
        attempt: a?.id ?? null,
        profile: a?.profile ?? null,
        by: a?.actor ?? null,
        since: a ? now - a.startedAt : null,
        milestone: a?.lastMilestone ?? null,
        gpus: a?.gpus ?? null,
        note: c?.note ?? null,
      };
    });
    const closed = checked.filter((c) => c.state === 'closed');
    if (json)
      return {
        text: JSON.stringify({ hosts: rows, closedSinceLastLook: closed.map((c) => c.attempt.id) }, null, 2),
        data: rows,
      };
    const text = table(
      ['host', 'state', 'attempt', 'profile', 'GPUs held', 'launched by', 'for', 'last milestone'],
      rows.map((r) => [
        r.host,
        r.state + (r.note ? ` (${r.note})` : ''),
        r.attempt ? `#${r.attempt}` : '-',
        r.profile ?? '-',
        r.gpus ?? '-',
        r.by ?? '-',
        duration(r.since),
        r.milestone ?? '-',
      ]),
    );
    const notes = closed.map(
      (c) =>
        `attempt #${c.attempt.id} on ${c.attempt.host} ended while nobody watched: ${c.attempt.outcome}${c.attempt.exitCode !== null ? ` (exit ${c.attempt.exitCode})` : ''}`,
    );
    return { text: [text, ...notes].join('\n'), data: rows };
  },
});
