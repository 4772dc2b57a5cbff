// A server started with `--api-key` answers everything but /health and /metrics with 401 unless the request carries
// `Authorization: Bearer KEY` (add_api_key_middleware in SGLang's srt utils; standin/README.md). The bot's own requests
// (the first request, probe, smoke, bench) carry the key of the profile the attempt was launched with.

import type { Attempt } from '../ledger/attempts.ts';
import type { ResolvedProfile } from '../profiles/index.ts';
import type { ProfilePlaces } from '../profiles/saved.ts';
import { resolveProfileName } from '../profiles/saved.ts';
import { argSecretName } from '../profiles/secrets.ts';
import { SECRET } from '../redact.ts';
import { type HostContext, hostOf } from './engine.ts';
import { SECRET_VALUE, script } from './scripts.ts';

/** The `--api-key` a profile passes to the server (`--api-key K` or `--api-key=K` in extra_args), if any. */
export function apiKeyOf(profile: Pick<ResolvedProfile, 'extra_args'>): string | undefined {
  // argparse keeps the last value given, and so does the server.
  const args = profile.extra_args ?? [];
  let key: string | undefined;
  for (const [i, a] of args.entries()) {
    if (a === '--api-key') key = args[i + 1];
    else if (a.startsWith('--api-key=')) key = a.slice('--api-key='.length);
  }
  return key;
}

/** What finding a server's key touches: the profiles (and their files) and the host's secrets file. */
export type ApiKeyContext = HostContext & ProfilePlaces;

// Keys of attempts launched by this process, per engine; the ledger keeps only a redacted command line.
const known = new WeakMap<object, Map<number, string>>();

/** Remembers the key of a launch (the profile as resolved for it, --set changes included). */
export function rememberApiKey(engine: object, attemptId: number, profile: ResolvedProfile): void {
  const key = apiKeyOf(profile);
  if (!key) return;
  const m = known.get(engine) ?? new Map<number, string>();
  m.set(attemptId, key);
  known.set(engine, m);
}

/**
 * The headers that authenticate the bot's requests to this attempt's server: its key from this process's launch, else
 * from its profile (a file, or a saved variant: the same name means the same profile); a key the ledger and variant
 * keep only as the secret marker is read from the host's secrets file, where the launch put it. None without a key.
 */
export async function serverAuth(
  engine: ApiKeyContext,
  attempt: Pick<Attempt, 'id' | 'profile' | 'host'> | null,
): Promise<Record<string, string>> {
  if (!attempt) return {};
  const m = known.get(engine) ?? new Map<number, string>();
  known.set(engine, m);
  let key = m.get(attempt.id);
  if (!key) {
    let args: string[] = [];
    try {
      args = resolveProfileName(engine, attempt.profile).extra_args ?? [];
    } catch {
      args = []; // a profile since removed: ask without a key, and the answer says 401
    }
    key = apiKeyOf({ extra_args: args });
    if (key === SECRET) {
      const i = args.lastIndexOf(SECRET);
      key = await hostSecret(engine, attempt.host, argSecretName(args, i)).catch(() => undefined);
    }
    if (key) m.set(attempt.id, key);
  }
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** One value of the host's secrets file (never logged; only sent back to that host's server). */
async function hostSecret(engine: HostContext, hostName: string, name: string): Promise<string | undefined> {
  const { host, cfg } = hostOf(engine, hostName);
  const r = await host.exec(script(SECRET_VALUE, 'glm-secret', [cfg.workdir, name]));
  return r.code === 0 && r.stdout ? r.stdout : undefined;
}

/** `401 {"error":"Unauthorized"}`: an HTTP error status with its body's first line, for a person. */
export function statusText(status: number, body: string): string {
  const first = body.trim().split('\n')[0]?.slice(0, 200) ?? '';
  return first ? `${status}: ${first}` : String(status);
}
