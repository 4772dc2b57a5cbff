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
  /** Lines for this host with a key type the bot cannot check (skipped; the caller warns). */
  unsupported: { type: string; line: number }[];
}

/**
 * The host key types ssh2 can verify (ssh2 1.17, lib/protocol/constants.js SUPPORTED_SERVER_HOST_KEY; `ssh-rsa` pins
 * are offered as rsa-sha2-*). The security-key types OpenSSH knows (`sk-ssh-ed25519@openssh.com`,
 * `sk-ecdsa-sha2-nistp256@openssh.com`) are not among them: ssh2 refuses to even offer them.
 */
export const CHECKABLE_KEY_TYPES: ReadonlySet<string> = new Set([
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
  'ssh-dss',
]);

/** The warning for a skipped line: which file and line, which key type, and why. */
export function unsupportedWarning(
  path: string,
  host: string,
  port: number,
  u: { type: string; line: number },
): string {
  return `${path}:${u.line}: skipped the ${u.type} key for ${knownHostsName(host, port)}: the bot cannot check that key type (ssh2 has no security-key host keys); the host's other lines in that file are used`;
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
  const out: HostKeys = { keys: [], revoked: [], unsupported: [] };
  for (const [index, raw] of text.split('\n').entries()) {
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
    else if (!CHECKABLE_KEY_TYPES.has(type)) out.unsupported.push({ type, line: index + 1 });
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
    const only = [...new Set(known.unsupported.map((u) => u.type))];
    const has = only.length
      ? `pins it only with ${only.join(', ')}, a key type the bot cannot check (ssh2 has no security-key host keys)`
      : 'has no entry for it';
    return {
      ok: false,
      reason: 'unknown',
      message: `host key of ${name} is not known: it presented ${fp} (${type}); ${ctx.knownHostsPath} ${has}`,
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
