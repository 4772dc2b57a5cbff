import { table } from '../src/format/table.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'attempts',
  summary: 'the table of configurations tried: flags that differ, who, when, how long, outcome',
  usage: 'attempts [--profile P] [--host H] [--limit N] [--json]',
  examples: ['attempts', 'attempts --profile glm5-attempt5', 'attempts --json'],
  positionals: [],
  switches: ['json'],
  args: (z) =>
    z.object({
      profile: z.string().optional(),
      host: z.string().optional(),
      limit: z.coerce.number().int().min(1).max(1000).default(50),
      json: z.boolean().optional(),
    }),
  effect: 'read',
  async run(ctx, { profile, host, limit, json }) {
    const { attemptRows, differingFlags } = await import('../src/lifecycle/attempts-table.ts');
    const list = ctx.engine.attempts.list({ profile, host, limit });
    // Errors a server logged and served on past (early-alert.ts): counted per attempt, recorded at most one per 10 min.
    const survived = ctx.engine.attempts.survived(list.map((a) => a.id));
    const rows = attemptRows(list, ctx.engine.clock.now()).map((r) => ({
      ...r,
      survived: survived.get(r.id)?.count ?? 0,
    }));
    if (json) return { text: JSON.stringify(rows, null, 2), data: rows };
    if (rows.length === 0) return { text: 'no attempts yet: start one with launch PROFILE' };
    const keys = differingFlags(list);
    // Like the flags, a column only when it says something: most tables have no survived error at all.
    const survivedCol = survived.size > 0;
    return {
      text: table(
        [
          '#',
          'profile',
          ...keys,
          'host',
          'who',
          'started (UTC)',
          'took',
          'outcome',
          ...(survivedCol ? ['survived'] : []),
        ],
        rows.map((r) => [
          String(r.id),
          r.profile,
          ...keys.map((k) => r.differing[k] ?? '-'),
          r.host,
          r.actor,
          r.startedAt,
          r.duration,
          r.outcome,
          ...(survivedCol ? [r.survived > 0 ? String(r.survived) : '-'] : []),
        ]),
        ctx.width,
      ),
      data: rows,
    };
  },
});

export default command;
