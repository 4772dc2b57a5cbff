// What leaves the team for a public tracker is scrubbed harder than what the team's own chat sees: besides secrets
// (src/redact.ts), home directories name people and private addresses map the network, so both are replaced.
import { redactText } from '../redact.ts';

// Shell-safe placeholders: the scrubbed command must still paste into a shell.
export const PRIVATE_ADDRESS = 'PRIVATE_IP';
export const PRIVATE_HOST = 'GPU_HOST';
export const PRIVATE_EMAIL = 'EMAIL';

// /home/alice/..., /Users/alice/..., /root/... -> ~/... (a user name is personal; the rest of the path is useful).
// /home/NAME is hidden wherever it appears (/data/home/alice names alice too); /root only at the start of a path.
const HOME = /(?:\/home|\/Users)\/[^/\s'"`:;,)]+|(?<![\w.~-])\/root(?=[/\s'"`:;,)]|$)/g;
// RFC 1918, shared address space (100.64/10, carrier NAT and Tailscale), link-local. Loopback stays: 127.0.0.1 in a
// command says "bound to this machine only", which a maintainer needs and which names nobody.
const IPV4_PRIVATE =
  /\b(?:10\.\d{1,3}|172\.(?:1[6-9]|2\d|3[01])|192\.168|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])|169\.254)\.\d{1,3}\.\d{1,3}\b/g;
// Unique-local (fc00::/7) and link-local (fe80::/10) IPv6.
const IPV6_PRIVATE = /\b(?:f[cd][0-9a-f]{2}|fe[89ab][0-9a-f]):[0-9a-f:]*[0-9a-f]\b/gi;
const EMAIL = /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g;

export interface ScrubOptions {
  /** Host names to hide (the GPU hosts' SSH addresses from the config); loopback names are never hidden. */
  hostNames?: readonly string[];
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '0.0.0.0']);

export function createScrubber(opts: ScrubOptions = {}): (text: string) => string {
  const names = [...new Set(opts.hostNames ?? [])]
    .filter((h) => h.length >= 3 && !LOOPBACK.has(h))
    .sort((a, b) => b.length - a.length);
  const hostRe = names.length ? new RegExp(`(?<![\\w.-])(?:${names.map(escapeRegex).join('|')})(?![\\w-])`, 'g') : null;
  return (text: string) => {
    let out = redactText(text);
    out = out.replace(HOME, '~');
    out = out.replace(IPV4_PRIVATE, PRIVATE_ADDRESS);
    out = out.replace(IPV6_PRIVATE, PRIVATE_ADDRESS);
    out = out.replace(EMAIL, PRIVATE_EMAIL);
    if (hostRe) out = out.replace(hostRe, PRIVATE_HOST);
    return out;
  };
}

export const scrub = createScrubber();
