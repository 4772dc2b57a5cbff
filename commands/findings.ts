import { UserError } from '../src/errors.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'findings',
  summary: "search the team's knowledge bases (FINDINGS.md) by hand",
  usage: 'findings QUERY... [--limit N] [--json]',
  examples: ['findings NaN decode flashmla', 'findings "DeepGemm scale_fmt"', 'findings cuda_oom --limit 5'],
  positionals: ['words'],
  switches: ['json'],
  args: (z) =>
    z.object({
      words: z.array(z.string()).min(1),
      limit: z.coerce.number().int().min(1).max(20).default(3),
      json: z.boolean().optional(),
    }),
  effect: 'read',
  async run(ctx, { words, limit, json }) {
    const { formatExcerpts } = await import('../src/findings/index.ts');
    const index = ctx.engine.findings;
    if (!index) throw new UserError('no knowledge base is configured', 'add a findings: entry to the config');
    // Quoted phrases stay phrases: re-quote words that contain spaces.
    const query = words.map((w) => (/\s/.test(w) ? `"${w}"` : w)).join(' ');
    const found = await index.search(query, limit);
    if (json) return { text: JSON.stringify(found, null, 2), data: found };
    const problems = index
      .status()
      .filter((s) => s.error)
      .map((s) => `  ${s.name} (${s.path}): ${s.error}`);
    return {
      text: [formatExcerpts(found), ...(problems.length ? ['could not read:', ...problems] : [])].join('\n'),
      data: found,
    };
  },
});

export default command;
