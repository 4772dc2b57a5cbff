// zod schema of one catalog entry, shared by the built-in catalog file and user signatures from the bot config.

import { z } from 'zod';
import { CATEGORIES, PHASES, ROLES } from './types.ts';

const pattern = z.union([
  z.string().min(1),
  z.strictObject({ regex: z.string().min(1), ignore_case: z.boolean().default(false) }),
]);

export const signatureSchema = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/, 'must be lowercase letters, digits, "-", "_" or "."'),
    category: z.enum(CATEGORIES).optional(),
    role: z.enum(ROLES),
    priority: z.number().int().min(0).max(100).default(50),
    phase: z.enum(PHASES).optional(),
    title: z.string().min(1).optional(),
    patterns: z.array(pattern).min(1),
    keywords: z.array(z.string().min(1)).min(1).optional(),
    meaning: z.string().min(1),
    next_steps: z.array(z.string().min(1)).default([]),
    upstream: z
      .array(z.strictObject({ url: z.url(), title: z.string().min(1), arch: z.string().min(1).optional() }))
      .default([]),
    source: z.url().optional(),
  })
  .superRefine((s, ctx) => {
    if (s.role === 'root' && (s.category === undefined || s.category === 'none')) {
      ctx.addIssue({ code: 'custom', path: ['category'], message: 'a root signature needs a crash category' });
    }
  });

export type RawSignature = z.infer<typeof signatureSchema>;

export const catalogFileSchema = z.strictObject({
  version: z.literal(1),
  signatures: z.array(z.unknown()),
});
