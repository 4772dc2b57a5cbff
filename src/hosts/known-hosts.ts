// Host-key pinning from OpenSSH known_hosts files (plain and hashed `|1|salt|hmac` entries), with
// StrictHostKeyChecking=yes semantics: unknown and changed keys are refused, never learned.
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { matchesPatternList } from '../glob.ts';

export interface KnownKey {
  type: string;
  key: Buffer;
}

export interface HostKeys {
  keys: KnownKey[];
  revoked: Buffer[];
}

/** The name OpenSSH looks up: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

export function fingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named inside an SSH wire-format public key blob. */
export function keyType(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const len = key.readUInt32BE(0);
  return key.subarray(4, 4 + len).toString('latin1');
}

function patternMatches(patterns: string, name: string): boolean {
  if (patterns.startsWith('|1|')) {
    const [, , salt, hash] = patterns.split('|');
    if (!salt || !hash) return false;
    const mac = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
    return mac === hash;
  }
  return matchesPatternList(patterns.split(','), name, { ignoreCase: true });
}

export function parseKnownHosts(text: string, host: string, port: number): HostKeys {
  const name = knownHostsName(host, port);
  const out: HostKeys = { keys: [], revoked: [] };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const fields = line.split(/\s+/);
    let marker: string | undefined;
    if (fields[0]?.startsWith('@')) marker = fields.shift();
    const [patterns, type, b64] = fields;
    if (!patterns || !type || !b64) continue;
    // Certificate authorities are not supported: a CA line never pins a host key by itself.
    if (marker === '@cert-authority') continue;
    if (!patternMatches(patterns, name)) continue;
    const key = Buffer.from(b64, 'base64');
    if (marker === '@revoked') out.revoked.push(key);
    else out.keys.push({ type, key });
  }
  return out;
}

export function readKnownHosts(path: string, host: string, port: number): HostKeys {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // a missing file is the same as an empty one: every host is unknown
  }
  return parseKnownHosts(text, host, port);
}

export type Verdict =
  | { ok: true }
  | { ok: false; reason: 'unknown' | 'changed' | 'revoked'; message: string; hint: string };

export function verifyHostKey(
  presented: Buffer,
  known: HostKeys,
  ctx: { host: string; port: number; knownHostsPath: string },
): Verdict {
  const name = knownHostsName(ctx.host, ctx.port);
  const fp = fingerprint(presented);
  const type = keyType(presented);
  if (known.revoked.some((k) => k.equals(presented))) {
    return {
      ok: false,
      reason: 'revoked',
      message: `host key ${fp} (${type}) of ${name} is marked @revoked in ${ctx.knownHostsPath}`,
      hint: 'the host presents a revoked key: treat it as compromised and re-key it',
    };
  }
  if (known.keys.some((k) => k.key.equals(presented))) return { ok: true };
  const line = `${name} ${type} ${presented.toString('base64')}`;
  if (known.keys.length === 0) {
    return {
      ok: false,
      reason: 'unknown',
      message: `host key of ${name} is not known: it presented ${fp} (${type}); ${ctx.knownHostsPath} has no entry for it`,
      hint: `check the fingerprint out of band (on the host: ssh-keygen -lf /etc/ssh/ssh_host_${type.replace('ssh-', '')}_key.pub), then trust it by adding this line to ${ctx.knownHostsPath}: ${line}`,
    };
  }
  const expected = known.keys.map((k) => `${fingerprint(k.key)} (${k.type})`).join(', ');
  return {
    ok: false,
    reason: 'changed',
    message: `HOST KEY CHANGED for ${name}: it presented ${fp} (${type}) but ${ctx.knownHostsPath} pins ${expected}. Someone may be intercepting the connection, or the host was re-installed`,
    hint: `if the change is expected, remove the old entry with: ssh-keygen -R '${name}' -f ${ctx.knownHostsPath}, then add: ${line}`,
  };
}
