import { table } from '../src/format/table.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'diff',
  summary: 'show the settings that differ between two profiles',
  usage: 'diff PROFILE_A PROFILE_B [--json]',
  examples: ['diff glm5-attempt4 glm5-attempt5'],
  positionals: ['a', 'b'],
  switches: ['json'],
  args: (z) => z.object({ a: z.string(), b: z.string(), json: z.boolean().optional() }),
  effect: 'read',
  async run(ctx, { a, b, json }) {
    const { diffProfiles } = await import('../src/profiles/index.ts');
    const d = diffProfiles(ctx.engine.profiles.get(a), ctx.engine.profiles.get(b));
    if (json) return { text: JSON.stringify(d, null, 2), data: d };
    if (d.length === 0) return { text: `${a} and ${b} launch the same server`, data: d };
    return {
      text: table(
        ['setting', 'flag', a, b],
        d.map((x) => [x.field, x.flag, x.a ?? '-', x.b ?? '-']),
      ),
      data: d,
    };
  },
});

export default command;
