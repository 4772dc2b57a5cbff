// The smoke test's settings as the config's `smoke:` section and a profile's `smoke:` field spell them: prompts with
// their expected answers and the report's thresholds. How they merge is src/smoke/settings.ts.
import { z } from 'zod';

const compiles = (s: string) => {
  try {
    new RegExp(s, 'i');
    return true;
  } catch {
    return false;
  }
};

export const ExpectSchema = z
  .object({
    contains: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .optional()
      .describe('the answer must contain this text (each of these texts), case-insensitive'),
    regex: z
      .string()
      .min(1)
      .refine(compiles, 'is not a valid regular expression')
      .optional()
      .describe('the answer must match this regular expression (JavaScript syntax, case-insensitive)'),
  })
  .strict()
  .refine((e) => e.contains !== undefined || e.regex !== undefined, 'needs contains or regex');

export const SmokePromptSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]*$/i, 'names: letters, digits, . _ -')
      .describe('short name shown in the report'),
    prompt: z.string().min(1).describe('the user message sent to /v1/chat/completions'),
    generate_prompt: z
      .string()
      .min(1)
      .optional()
      .describe('completion-style text for the native /generate (no chat template there); default: prompt'),
    endpoints: z
      .array(z.enum(['chat', 'generate']))
      .min(1)
      .default(['chat', 'generate'])
      .describe('which endpoints to ask'),
    expect: ExpectSchema,
    max_tokens: z.number().int().min(1).max(4096).optional().describe('default: the smoke max_tokens'),
  })
  .strict();

/** The profile's `smoke:` field, and the config's `smoke:` section (which also has the report settings). */
export const SmokeProfileSchema = z
  .object({
    prompts: z.array(SmokePromptSchema).optional().describe('prompts added to the default set (same name replaces)'),
    defaults: z.boolean().default(true).describe('include the built-in default prompts'),
    max_tokens: z.number().int().min(1).max(4096).optional(),
    budget_s: z.number().positive().optional().describe('launch, smoke and stop must fit in this many seconds'),
    regression_pct: z.number().positive().optional().describe('TTFT or tokens/s worse than the last pass by more'),
  })
  .strict();

export const SmokeConfigSchema = SmokeProfileSchema.extend({
  regression_pct: z
    .number()
    .positive()
    .default(20)
    .describe('flag a regression when TTFT or tokens/s is worse than the last passing run by more than this'),
  budget_s: z
    .number()
    .positive()
    .default(1800)
    .describe('launch mode: launch, smoke and stop within this many seconds'),
  max_tokens: z.number().int().min(1).max(4096).default(64).describe('default answer length per prompt'),
}).strict();

export type SmokePrompt = z.infer<typeof SmokePromptSchema>;
export type SmokeConfig = z.infer<typeof SmokeConfigSchema>;
