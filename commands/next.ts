import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'next',
  summary: 'suggest the next configurations to try after a crash, never one already in the ledger',
  usage: 'next [PROFILE] [--limit N] [--json]',
  examples: ['next', 'next glm5-attempt5', 'next --limit 3 --json'],
  positionals: ['profile'],
  switches: ['json'],
  args: (z) =>
    z.object({
      profile: z.string().optional().describe('the profile to vary (default: the one of the newest crash)'),
      limit: z.coerce.number().int().min(1).max(20).default(5),
      json: z.boolean().optional(),
    }),
  // Reads the ledger; writes only the numbered suggestions and their variant files, which launch next:N reads.
  effect: 'read',
  async run(ctx, { profile, limit, json }) {
    const { advise } = await import('../src/advice/advise.ts');
    const { saveVariant } = await import('../src/profiles/saved.ts');
    const { adviceText } = await import('../src/advice/text.ts');
    const a = advise(ctx.engine, { profile, limit });
    // A suggestion that is an existing profile needs no generated file.
    for (const s of a.suggestions.filter((x) => !x.existing)) {
      saveVariant(
        ctx.engine,
        s.base,
        s.overrides,
        `suggested after attempt #${a.crash.attemptId} (${a.crash.category}): ${s.reason}`,
      );
    }
    ctx.engine.ledger.suggestions.save(
      a.suggestions.map((s) => ({
        profile: s.profile.name,
        base: s.base,
        overrides: s.overrides,
        reason: s.reason,
        ...(s.ref ? { ref: s.ref } : {}),
      })),
      ctx.engine.clock.now(),
      ctx.actor,
    );
    const data = {
      crash: a.crash,
      arch: a.arch ?? null,
      base: a.base.name,
      suggestions: a.suggestions.map((s, i) => ({
        id: `next:${i + 1}`,
        profile: s.profile.name,
        base: s.base,
        overrides: s.overrides,
        reason: s.reason,
        ref: s.ref ?? null,
        existing: s.existing ?? null,
      })),
      skipped: a.skipped,
    };
    if (json) return { text: JSON.stringify(data, null, 2), data };
    return { text: adviceText(a), data };
  },
});

export default command;
