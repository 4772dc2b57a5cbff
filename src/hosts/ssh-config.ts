// Just enough of ~/.ssh/config to resolve a Host alias the way `ssh ALIAS` would: first value wins, patterns with
// * and ? and !negation.
import { readFileSync } from 'node:fs';

export interface SshAlias {
  hostName?: string;
  port?: number;
  user?: string;
  identityFile?: string;
  proxyJump?: string;
  userKnownHostsFile?: string;
}

function matches(patterns: string[], alias: string): boolean {
  let ok = false;
  for (const p of patterns) {
    const neg = p.startsWith('!');
    const re = new RegExp(
      `^${(neg ? p.slice(1) : p)
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
      'i',
    );
    if (re.test(alias)) {
      if (neg) return false;
      ok = true;
    }
  }
  return ok;
}

export function parseSshConfig(text: string, alias: string): SshAlias {
  const out: SshAlias = {};
  let active = true;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = line.match(/^(\S+?)\s*(?:=\s*|\s+)(.+)$/);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    const value = m[2]!.trim().replace(/^"(.*)"$/, '$1');
    if (key === 'host') {
      active = matches(value.split(/\s+/), alias);
      continue;
    }
    if (key === 'match') {
      active = false; // Match blocks need evaluation we do not do; skip them rather than guess.
      continue;
    }
    if (!active) continue;
    if (key === 'hostname') out.hostName ??= value;
    else if (key === 'port') out.port ??= Number(value);
    else if (key === 'user') out.user ??= value;
    else if (key === 'identityfile') out.identityFile ??= value;
    else if (key === 'proxyjump') out.proxyJump ??= value;
    else if (key === 'userknownhostsfile') out.userKnownHostsFile ??= value.split(/\s+/)[0];
  }
  return out;
}

export function readSshAlias(path: string, alias: string): SshAlias {
  try {
    return parseSshConfig(readFileSync(path, 'utf8'), alias);
  } catch {
    return {};
  }
}
