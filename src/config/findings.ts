// The config's `findings:` entries: which knowledge bases (FINDINGS.md files) crash alerts quote, on the bot
// machine or on one of the config's hosts. src/findings/defaults.ts turns them into sources.
import { z } from 'zod';
import { pathString as pathStringOf } from '../paths.ts';

const pathString = pathStringOf(z);

const text = z
  .string()
  .min(1)
  .refine((s) => !/[\0\n\r]/.test(s), 'must not contain NUL or line breaks');

export const FindingsSourceSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]*$/i, 'letters, digits, . _ -')
      .describe('shown with each excerpt'),
    path: pathString.describe(
      'the Markdown file; on `host` relative paths start at the login directory and ~/ is allowed',
    ),
    host: text.optional().describe('name of a host in this config; omit for a file on the bot machine'),
    url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('web address of the same file (GitHub blob URL), for line links in excerpts'),
  })
  .strict();

export type FindingsSourceConfig = z.infer<typeof FindingsSourceSchema>;
