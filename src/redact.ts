// Secrets never reach Slack, the terminal transcript or a log: values under secret-looking names are replaced, and
// token-shaped strings are scrubbed from free text (gitleaks-style patterns: Hugging Face, Slack, GitHub, OpenAI).
const SECRET_NAME = /(TOKEN|SECRET|PASSW(OR)?D|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL|AUTH)/i;

const SECRET_TEXT = [
  /\bhf_[A-Za-z0-9]{30,}\b/g,
  /\bapi_org_[A-Za-z0-9]{30,}\b/g,
  /\bxox[abposre]-[A-Za-z0-9-]{10,}/g,
  /\bxapp-[A-Za-z0-9-]{10,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g,
  /\bgithub_pat_\w{40,}\b/g,
  /\bsk-[A-Za-z0-9_-]{20,}\b/g,
];
// NAME=value and --api-key value forms in command lines and logs.
const ASSIGNMENT = /\b([A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|API_KEY)[A-Za-z0-9_]*)=(\S+)/gi;
const FLAG_VALUE = /(--(?:admin-)?api-key(?:=|\s+))(\S+)/g;

export const REDACTED = '[REDACTED]';

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

export function redactText(s: string): string {
  let out = s;
  for (const re of SECRET_TEXT) out = out.replace(re, REDACTED);
  out = out.replace(ASSIGNMENT, (_m, k: string) => `${k}=${REDACTED}`);
  out = out.replace(FLAG_VALUE, (_m, k: string) => `${k}${REDACTED}`);
  return out;
}

export function redactEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, isSecretName(k) ? REDACTED : redactText(v)]));
}

/** argv with the values of secret flags (and secret-looking NAME=value env assignments) replaced. */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const prev = argv[i - 1];
    if (prev === '--api-key' || prev === '--admin-api-key') out.push(REDACTED);
    else out.push(redactText(a));
  }
  return out;
}
