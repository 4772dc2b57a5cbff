// zod schema of one catalog entry, shared by the built-in catalog file and user signatures from the bot config.

import { z } from 'zod';
import { exceptionRuleSchema } from './exceptions.ts';
import { CATEGORIES, PHASES, ROLES } from './types.ts';

const pattern = z.union([
  z.string().min(1),
  z.strictObject({ regex: z.string().min(1), ignore_case: z.boolean().default(false) }),
]);

/**
 * Next-step advice beside a signature (src/advice): a change to the launch profile, in profile field names, with the
 * reason. `set` fixes values; `lower`/`raise` name candidate values tried in order, the first one below (above) the
 * profile's current value that has not been tried yet being suggested. `when` narrows the rule to a GPU architecture,
 * DSA models, crash phases, or current flag values (flagView keys; a value starting with ! means "not").
 */
export const adviceRuleSchema = z
  .strictObject({
    set: z.record(z.string(), z.unknown()).optional(),
    lower: z.record(z.string(), z.array(z.number()).min(1)).optional(),
    raise: z.record(z.string(), z.array(z.number()).min(1)).optional(),
    reason: z.string().min(1),
    ref: z.url().optional(),
    when: z
      .strictObject({
        arch: z.array(z.string().min(1)).min(1).optional(),
        dsa: z.boolean().optional(),
        phase: z.array(z.enum(PHASES)).min(1).optional(),
        flags: z.record(z.string(), z.union([z.string(), z.array(z.string()).min(1)])).optional(),
      })
      .optional(),
  })
  .refine((r) => r.set !== undefined || r.lower !== undefined || r.raise !== undefined, {
    message: 'an advice rule needs set, lower or raise',
  });

export type AdviceRule = z.infer<typeof adviceRuleSchema>;

export const signatureSchema = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/, 'must be lowercase letters, digits, "-", "_" or "."'),
    category: z.enum(CATEGORIES).optional(),
    role: z.enum(ROLES),
    priority: z.number().int().min(0).max(100).default(50),
    phase: z.enum(PHASES).optional(),
    title: z.string().min(1).optional(),
    /**
     * The message wraps its cause (`Capture cuda graph failed: <cause>`): a generic signature. The text after its match
     * is read as an exception message, and a class the catalog's `overlaps` rank above this one names the crash; when
     * nothing follows, the exception printed just before it in the same failure is the root.
     */
    wraps: z.boolean().default(false),
    /**
     * The message says how the process ended, not why (`Segmentation fault`, `Fatal Python error: Aborted`): the
     * exception or failure record printed just before it in the same failure is the root.
     */
    generic: z.boolean().default(false),
    /**
     * The server can serve past it (a health probe that got no answer once): a batch the scheduler runs after it (its
     * prefill or decode line) says it was survived, and it names no crash then.
     */
    transient: z.boolean().default(false),
    /**
     * A benign notice that goes on with a stack its own code prints (`Traceback (most recent call last):` and frames,
     * then at most the exception line the same code prints): the next traceback that starts within a few lines after
     * it is that notice, no crash. What the process does next (its own exception, an exit) still tells.
     */
    stack_follows: z.boolean().default(false),
    /** Regex (case-sensitive) where the wrapper's own text resumes after the cause (SGLang's `Possible solutions:`). */
    wraps_until: z.string().min(1).optional(),
    patterns: z.array(pattern).min(1),
    keywords: z.array(z.string().min(1)).min(1).optional(),
    meaning: z.string().min(1),
    next_steps: z.array(z.string().min(1)).default([]),
    upstream: z
      .array(z.strictObject({ url: z.url(), title: z.string().min(1), arch: z.string().min(1).optional() }))
      .default([]),
    source: z.url().optional(),
    advice: z.array(adviceRuleSchema).default([]),
  })
  .superRefine((s, ctx) => {
    if (s.role === 'root' && (s.category === undefined || s.category === 'none')) {
      ctx.addIssue({ code: 'custom', path: ['category'], message: 'a root signature needs a crash category' });
    }
    if (s.stack_follows && s.role !== 'benign') {
      ctx.addIssue({
        code: 'custom',
        path: ['stack_follows'],
        message: 'only a benign notice prints a stack of its own',
      });
    }
  });

export type RawSignature = z.infer<typeof signatureSchema>;

export const overlapSchema = z.strictObject({
  wins: z.enum(CATEGORIES),
  over: z.enum(CATEGORIES),
  why: z.string().min(1),
});

export const catalogFileSchema = z.strictObject({
  version: z.literal(1),
  signatures: z.array(z.unknown()),
  exceptions: z.array(exceptionRuleSchema).default([]),
  overlaps: z.array(overlapSchema).default([]),
  default_phases: z.partialRecord(z.enum(CATEGORIES), z.enum(PHASES)).default({}),
});
