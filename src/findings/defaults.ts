// Where findings come from when the config names none (the example knowledge base shipped in knowledge/), and the
// config shape for naming others: a local path, or a path on one of the config's hosts.
import { join } from 'node:path';
import { z } from 'zod';
import type { RemoteHost } from '../hosts/types.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { pathString as pathStringOf } from '../paths.ts';
import type { FindingsSource } from './sources.ts';

const pathString = pathStringOf(z);

/** knowledge/FINDINGS.md of this package, wherever it is installed. */
export const EXAMPLE_FINDINGS_PATH = join(PACKAGE_ROOT, 'knowledge', 'FINDINGS.md');

export function defaultFindingsSources(): FindingsSource[] {
  return [{ name: 'example', path: EXAMPLE_FINDINGS_PATH }];
}

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

/** Config entries to sources; `hostFor` throws the config's own error for an unknown host name. */
export function sourcesFromConfig(
  entries: readonly FindingsSourceConfig[] | undefined,
  hostFor: (name: string) => RemoteHost,
): FindingsSource[] {
  if (!entries || entries.length === 0) return defaultFindingsSources();
  return entries.map((e) => ({
    name: e.name,
    path: e.path,
    ...(e.url ? { url: e.url } : {}),
    ...(e.host ? { host: hostFor(e.host) } : {}),
  }));
}
