import type { z } from 'zod';
import { defineCommand, type Zod } from '../src/runtime/define.ts';

/**
 * ATTEMPT... may be empty. The registry treats only a bare array schema as variadic (src/runtime/parse.ts), and a
 * bare array is required, so this one is marked optional the way zod's own .optional() marks a field (an absent key
 * is allowed) while staying an array. If the parser learns to unwrap .optional(), use that instead.
 */
function optionalList<T extends z.ZodType>(z: Zod, item: T, description: string) {
  // Last: .describe() and the like return a copy without the mark.
  const list = z.array(item).describe(description);
  Object.assign(list._zod, { optin: 'optional', optout: 'optional' });
  return list;
}

const command = defineCommand({
  name: 'draft-issue',
  summary: 'draft an upstream SGLang bug report from failing attempts, with known duplicates listed first',
  usage: 'draft-issue [ATTEMPT...] [--primary N] [--no-search] [--body] [--json]',
  examples: [
    'draft-issue',
    'draft-issue 4 5 6',
    'draft-issue 1 2 3 --primary 2',
    'draft-issue --body',
    'draft-issue --json',
  ],
  positionals: ['attempts'],
  switches: ['noSearch', 'body', 'json'],
  args: (z) =>
    z.object({
      attempts: optionalList(
        z,
        z.coerce.number().int().min(1),
        'attempt numbers (default: the newest crash and the other attempts of its model on its host)',
      ),
      primary: z.coerce
        .number()
        .int()
        .min(1)
        .optional()
        .describe('the attempt whose command and log the report quotes'),
      noSearch: z.boolean().optional().describe('do not search the upstream tracker'),
      body: z.boolean().optional().describe('print the whole body and the prefilled link, not only the summary'),
      json: z.boolean().optional(),
    }),
  // Reads the ledger and the host, and writes only a draft file: a person files the issue.
  effect: 'read',
  async run(ctx, { attempts, primary, noSearch, body, json }) {
    const { draftIssue, draftText } = await import('../src/reports/issue.ts');
    const d = await draftIssue(ctx.engine, {
      ids: (attempts as number[] | undefined) ?? [],
      primary,
      ...(noSearch ? { search: null } : {}),
    });
    if (json) return { text: JSON.stringify(d, null, 2), data: d };
    return { text: draftText(d, { body }), data: d };
  },
});

export default command;
