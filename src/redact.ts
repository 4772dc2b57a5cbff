// Secrets never reach Slack, the terminal transcript, a log, the ledger or a process's argv. This is the one
// redaction every rendering uses: values under secret-looking names (environment variables, JSON keys, command-line
// flags) are replaced, and token-shaped strings are scrubbed from free text (gitleaks-style patterns: Hugging Face,
// Slack, GitHub, OpenAI). Structured values are redacted before they are serialised, never by a regex over JSON.

// A name is secret when one of its parts says so: *_TOKEN, *_KEY, *SECRET*, passwords, credentials. Parts, not
// substrings: TOKENIZER_PATH and MAX_TOTAL_TOKENS are not secrets, HF_TOKEN and OPENAI_API_KEY are.
const SECRET_PART = /(?:^|_)(?:TOKEN|KEY|APIKEY|PASSWORD|PASSWD|PASSPHRASE|CREDENTIALS?|AUTH)(?:_|$)/i;
const SECRET_ANYWHERE = /SECRET|PRIVATE_?KEY|ACCESS_?KEY|API_?KEY/i;

const SECRET_TEXT = [
  /\bhf_[A-Za-z0-9]{20,}\b/g,
  /\bapi_org_[A-Za-z0-9]{20,}\b/g,
  /\bxox[abposre]-[A-Za-z0-9-]{10,}/g,
  /\bxapp-[A-Za-z0-9-]{10,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g,
  /\bgithub_pat_\w{40,}\b/g,
  /\bsk-[A-Za-z0-9_-]{20,}\b/g,
  // NVIDIA's API keys (NGC, build.nvidia.com), also when no NAME= says so.
  /\bnvapi-[A-Za-z0-9_-]{20,}/g,
];
// A password in a URL (`https://user:pass@host`, RFC 3986 userinfo): the user stays, the password goes.
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s/@]+@/gi;
// An HTTP credential (`Authorization: Bearer <jwt>`, `Bearer <token>` alone): the scheme stays, the token goes.
const AUTH_HEADER = /\b(Authorization:\s*(?:(?:Bearer|Basic|Token)\s+)?)[^\s'"]+/gi;
const BEARER = /\b(Bearer\s+)(?!\[)[A-Za-z0-9._~+/=-]{8,}/g;
// NAME=value and --api-key value forms in command lines and logs.
const ASSIGNMENT =
  /\b([A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|API_KEY|_KEY)(?![A-Za-z])[A-Za-z0-9_]*)=(?!\[)([^\s'"]+|'[^']*'|"[^"]*")/gi;
const FLAG_VALUE = /(--[a-z0-9-]*(?:api-key|token|secret|password)(?:=|\s+))(?!\[)('[^']*'|"[^"]*"|[^\s'"]+)/gi;

export const REDACTED = '[REDACTED]';
/**
 * What the ledger, variant files and every rendering keep in place of a secret the host keeps: the value lives in the
 * host's secrets file (mode 0600, under the host's workdir), and a launch that finds this marker takes it from there.
 */
export const SECRET = '[secret]';

export function isSecretName(name: string): boolean {
  const n = name.replace(/^-+/, '').replace(/-/g, '_');
  // A bare `key` is an identifier (an outbox item's, a cache's), not a credential.
  if (/^key$/i.test(n)) return false;
  return SECRET_PART.test(n) || SECRET_ANYWHERE.test(n);
}

/** A command-line flag whose value is a secret (`--api-key`, `--admin-api-key`, `--hf-token`). */
export function isSecretFlag(flag: string): boolean {
  return flag.startsWith('--') && isSecretName(flag);
}

/** The value has the shape of a known token (hf_..., xoxb-..., ghp_..., sk-...). */
export function looksSecret(value: string): boolean {
  return SECRET_TEXT.some((re) => {
    re.lastIndex = 0;
    const hit = re.test(value);
    re.lastIndex = 0;
    return hit;
  });
}

/** The closing punctuation at the end of an unquoted value (kept in the text, not taken as the secret). */
function closers(_m: string, v: string): string {
  if (v.startsWith("'") || v.startsWith('"')) return '';
  return /[),;\]}]+$/.exec(v)?.[0] ?? '';
}

export function redactText(s: string): string {
  let out = s;
  for (const re of SECRET_TEXT) out = out.replace(re, REDACTED);
  out = out.replace(URL_PASSWORD, (_m, k: string) => `${k}${REDACTED}@`);
  out = out.replace(AUTH_HEADER, (m, k: string) => (m.slice(k.length).startsWith('[') ? m : `${k}${REDACTED}`));
  out = out.replace(BEARER, (_m, k: string) => `${k}${REDACTED}`);
  // An unquoted value ends before the `)` `,` `]` `}` `;` that close the text around it (a Python repr's
  // `admin_api_key=None)`): those stay; the value goes.
  out = out.replace(ASSIGNMENT, (m, k: string, v: string) => `${k}=${REDACTED}${closers(m, v)}`);
  out = out.replace(FLAG_VALUE, (_m, k: string) => `${k}${REDACTED}`);
  return out;
}

const shown = (v: string) => (v === SECRET ? SECRET : REDACTED);

export function redactEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, isSecretName(k) || looksSecret(v) ? shown(v) : redactText(v)]),
  );
}

/** argv with the values of secret flags (`--api-key X`, `--api-key=X`) and token-shaped values replaced. */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const prev = argv[i - 1];
    const eq = a.indexOf('=');
    if (prev !== undefined && isSecretFlag(prev) && !a.startsWith('--')) out.push(shown(a));
    else if (a.startsWith('--') && eq > 0 && isSecretFlag(a.slice(0, eq)))
      out.push(`${a.slice(0, eq + 1)}${shown(a.slice(eq + 1))}`);
    else out.push(redactText(a));
  }
  return out;
}

/**
 * A structured value with every secret removed, ready to serialise: strings scrubbed, values under secret-looking
 * keys replaced, argv-like string arrays redacted as argv. The shape stays (the JSON still parses).
 */
export function redactValue<T>(value: T): T {
  return redactAt(value, 0) as T;
}

function redactAt(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactText(value);
  if (depth > 20) return '[too deep]';
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'string')) return redactArgv(value as string[]);
    return value.map((v) => redactAt(v, depth + 1));
  }
  if (value instanceof Error) return redactText(value.message);
  if (value && typeof value === 'object') {
    // Binary content (a chart as base64) is not text: nothing in it to scrub, and scrubbing could corrupt it.
    const binary = (value as { encoding?: unknown }).encoding === 'base64';
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        binary && k === 'content' ? v : typeof v === 'string' && isSecretName(k) ? shown(v) : redactAt(v, depth + 1),
      ]),
    );
  }
  return value;
}

/** One serialised log line (pino's JSON) with its secrets removed; a line that is not JSON is scrubbed as text. */
export function redactLogLine(line: string): string {
  try {
    return `${JSON.stringify(redactValue(JSON.parse(line)))}\n`;
  } catch {
    return redactText(line);
  }
}
