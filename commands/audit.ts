import { table, when } from '../src/format/table.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'audit',
  summary: 'who ran which command or clicked which button, where, allowed or denied, with what result (admins)',
  usage: 'audit [--user U] [--command C] [--denied] [--limit N] [--json]',
  examples: ['audit', 'audit --denied', 'audit --user U0123ABCD --limit 200'],
  positionals: [],
  switches: ['denied', 'json'],
  args: (z) =>
    z.object({
      user: z.string().optional().describe('only this actor (a Slack user ID, or a terminal user@host)'),
      command: z.string().optional(),
      denied: z.boolean().optional().describe('only refusals'),
      limit: z.coerce.number().int().min(1).max(5000).default(50),
      json: z.boolean().optional(),
    }),
  effect: 'read',
  // The log names people and what they tried: admins only from chat (the terminal's local user is trusted).
  role: 'admin',
  async run(ctx, { user, command, denied, limit, json }) {
    // Filters apply over a larger window so "the last N matching" stays true for common filters.
    const all = ctx.engine.audit.list(user || command || denied ? Math.max(limit * 20, 1000) : limit);
    const rows = all
      .filter((e) => (!user || e.actor === user) && (!command || e.command === command))
      .filter((e) => !denied || e.decision === 'deny')
      .slice(0, limit);
    if (json) return { text: JSON.stringify(rows, null, 2), data: rows };
    if (rows.length === 0) return { text: 'no audit entries match' };
    return {
      text: table(
        ['when (UTC)', 'who', 'where', 'command', 'args', 'decision', 'result'],
        rows.map((e) => [
          when(e.at),
          e.actor,
          e.place ?? e.origin,
          e.command,
          JSON.stringify(e.args ?? {}).slice(0, 80),
          e.decision,
          e.result.slice(0, 100),
        ]),
      ),
      data: rows,
    };
  },
});

export default command;
