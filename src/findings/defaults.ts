// Where findings come from when the config names none (the example knowledge base shipped in knowledge/), and the
// config's entries (src/config/findings.ts) turned into sources: a local path, or a path on one of the config's hosts.
import { join } from 'node:path';
import type { FindingsSourceConfig } from '../config/findings.ts';
import type { RemoteHost } from '../hosts/types.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import type { FindingsSource } from './sources.ts';

/** knowledge/FINDINGS.md of this package, wherever it is installed. */
export const EXAMPLE_FINDINGS_PATH = join(PACKAGE_ROOT, 'knowledge', 'FINDINGS.md');

export function defaultFindingsSources(): FindingsSource[] {
  return [{ name: 'example', path: EXAMPLE_FINDINGS_PATH }];
}

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
