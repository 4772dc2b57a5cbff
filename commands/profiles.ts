import { table } from '../src/format/table.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'profiles',
  summary: 'list the launch profiles',
  usage: 'profiles [--json]',
  examples: ['profiles'],
  positionals: [],
  switches: ['json'],
  args: (z) => z.object({ json: z.boolean().optional() }),
  effect: 'read',
  async run(ctx, { json }) {
    const { shippedTableNotes } = await import('../src/profiles/index.ts');
    const set = ctx.engine.profiles;
    const rows = set.names().map((n) => {
      const p = set.get(n);
      return {
        name: n,
        extends: p.chain[1] ?? '',
        model: p.model_path,
        tp: p.tp ?? 1,
        description: p.description ?? '',
        // Values the shipped table lacks load (the host's --help decides at launch); said here so a typo is seen.
        notes: shippedTableNotes(n, p),
      };
    });
    if (json) return { text: JSON.stringify(rows, null, 2), data: rows };
    const notes = rows.flatMap((r) => r.notes.map((i) => `note: ${i.path}: ${i.message}\n  fix: ${i.fix}`));
    return {
      text: [
        table(
          ['profile', 'extends', 'model', 'tp', 'description'],
          rows.map((r) => [r.name, r.extends, r.model, String(r.tp), r.description]),
        ),
        ...notes,
      ].join('\n'),
      data: rows,
    };
  },
});

export default command;
