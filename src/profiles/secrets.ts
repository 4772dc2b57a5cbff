// Where a secret given to a launch goes: the host keeps it (its secrets file, mode 0600, written through the exec
// chokepoint on stdin), the server gets it in its environment, and everything the bot stores or shows (the ledger,
// variant files, the command line) keeps the marker SECRET in its place. A launch that finds the marker (a variant
// saved earlier, an attempt re-launched from the ledger) takes the value from the host again.
import { UserError } from '../errors.ts';
import { isSecretFlag, isSecretName, looksSecret, SECRET } from '../redact.ts';

/** Secret values by the name the host keeps them under: env names as they are, arguments as GLM_ARG_<FLAG>. */
export type Secrets = Record<string, string>;

export interface Split {
  env: Record<string, string>;
  extraArgs: string[];
  /** Values given now, to be written to the host. */
  secrets: Secrets;
  /** Every name the launch needs from the host (given now or earlier). */
  needs: string[];
}

/** The host-side name of the secret at extra_args[i] (the marker or the value), from the flag before it. */
export function argSecretName(args: readonly string[], i: number): string {
  const prev = args[i - 1];
  const flag = prev?.startsWith('--') ? prev.slice(2) : `${i}`;
  return `GLM_ARG_${flag.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase()}`;
}

function oneLine(what: string, v: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters in a secret are the error
  if (/[\x00-\x1f\x7f]/.test(v)) {
    throw new UserError(`${what}: a secret value has a control character (a newline?)`, 'give the value on one line');
  }
}

/** Takes the secrets out of a profile's env and extra_args, leaving markers. Idempotent on marked input. */
export function splitSecrets(env: Record<string, string>, extraArgs: readonly string[]): Split {
  const secrets: Secrets = {};
  const needs = new Set<string>();
  const outEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === SECRET) {
      outEnv[k] = SECRET;
      needs.add(k);
    } else if (isSecretName(k) || looksSecret(v)) {
      oneLine(`env.${k}`, v);
      outEnv[k] = SECRET;
      secrets[k] = v;
      needs.add(k);
    } else outEnv[k] = v;
  }
  // `--api-key=X` is `--api-key X`: one form to mark and to name.
  const args: string[] = [];
  for (const a of extraArgs) {
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 2 && (isSecretFlag(a.slice(0, eq)) || looksSecret(a.slice(eq + 1)))) {
      args.push(a.slice(0, eq), a.slice(eq + 1));
    } else args.push(a);
  }
  const outArgs = args.map((a, i) => {
    const prev = args[i - 1];
    const secret = a === SECRET || looksSecret(a) || (prev !== undefined && isSecretFlag(prev) && !a.startsWith('--'));
    if (!secret) return a;
    const name = argSecretName(args, i);
    if (a !== SECRET) {
      oneLine(`extra_args ${prev ?? ''}`.trim(), a);
      secrets[name] = a;
    }
    needs.add(name);
    return SECRET;
  });
  return { env: outEnv, extraArgs: outArgs, secrets, needs: [...needs].sort() };
}

/** Marks the secrets of a profile-shaped object (a variant's overrides, a profile to store). */
export function markSecrets<T extends { env?: Record<string, string>; extra_args?: string[] }>(p: T): T {
  if (!p.env && !p.extra_args) return p;
  const s = splitSecrets(p.env ?? {}, p.extra_args ?? []);
  return { ...p, ...(p.env ? { env: s.env } : {}), ...(p.extra_args ? { extra_args: s.extraArgs } : {}) };
}

// Real Python runs this for `python -c BOOT MODULE ARGS...`: each `@glm-env:NAME` argument becomes the value of the
// environment variable NAME (removed from the environment, so the server's own children do not inherit it), then
// MODULE runs as `python -m MODULE` would. The value reaches the server's sys.argv in memory, never its command
// line in /proc, where every user of the host can read it.
export const ARG_REF = '@glm-env:';
export const BOOT = [
  'import os, runpy, sys',
  `r = lambda a: os.environ.pop(a[${ARG_REF.length}:], "") if a.startswith("${ARG_REF}") else a`,
  'sys.argv = [sys.argv[1]] + [r(a) for a in sys.argv[2:]]',
  'runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)',
].join('\n');

/**
 * The server's argv as it runs on the host: `python -m MOD ARGS` unchanged without secrets, else
 * `python -c BOOT MOD ARGS` with each marker a reference to its variable.
 */
export function serverArgv(argv: readonly string[], extraStart: number): string[] {
  if (!argv.includes(SECRET)) return [...argv];
  const [python, dashM, mod, ...rest] = argv;
  if (dashM !== '-m' || !mod) throw new Error('serverArgv: expected python -m MODULE');
  const extra = argv.slice(extraStart);
  const refs = rest.map((a, j) => {
    const i = j + 3 - extraStart;
    return a === SECRET && i >= 0 ? `${ARG_REF}${argSecretName(extra, i)}` : a;
  });
  return [python!, '-c', BOOT, mod, ...refs];
}
