// A resolved profile becomes the argv and environment of `python -m sglang.launch_server`. Argv stays an array all
// the way to RemoteHost.exec; commandLine is the one display form, quoted token by token, so what a person reads is
// exactly what a shell would run.
import { UserError } from '../errors.ts';
import { shArgv, shq } from '../hosts/quote.ts';
import { FLAGS, type LaunchFields } from './fields.ts';
import { ENV_NAME } from './schema.ts';

/** Which spelling of the DSA flags to render: `nsa` for SGLang <= 0.5.12, `dsa` from the rename on. */
export type Dialect = 'nsa' | 'dsa';

export interface LaunchCommand {
  argv: string[];
  env: Record<string, string>;
}

export interface RenderOptions {
  /** The Python interpreter on the host (one executable path, e.g. /opt/sglang/.venv/bin/python). */
  python: string;
  dialect?: Dialect;
  portOverride?: number;
}

// The attention backend value was renamed along with the flags ([J]: `dsa`, with `nsa` a deprecated alias); an
// older SGLang rejects `dsa`, so the value follows the dialect too.
const ATTENTION_FIELDS = new Set(['attention_backend', 'prefill_attention_backend', 'decode_attention_backend']);

function dialectValue(field: string, value: string, dialect: Dialect): string {
  if (!ATTENTION_FIELDS.has(field)) return value;
  if (dialect === 'dsa' && value === 'nsa') return 'dsa';
  if (dialect === 'nsa' && value === 'dsa') return 'nsa';
  return value;
}

/**
 * argv order: python -m sglang.launch_server, then the typed flags in the order of FLAGS (src/profiles/fields.ts):
 * --model-path --tp-size --host --port --served-model-name --trust-remote-code --quantization --kv-cache-dtype
 * --attention-backend --prefill-attention-backend --decode-attention-backend --nsa|dsa-prefill-backend
 * --nsa|dsa-decode-backend --fp8-gemm-backend --fp4-gemm-backend --moe-runner-backend --disable-shared-experts-fusion
 * --disable-cuda-graph --cuda-graph-max-bs --mem-fraction-static --chunked-prefill-size --context-length
 * --tool-call-parser --reasoning-parser, each only when set; then extra_args as written.
 * env: CUDA_VISIBLE_DEVICES (from gpus) first, then the profile's env sorted by name.
 */
export function renderLaunch(profile: LaunchFields, opts: RenderOptions): LaunchCommand {
  const dialect = opts.dialect ?? 'nsa';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  if (!opts.python || opts.python.startsWith('-') || /[\x00-\x1f\x7f]/.test(opts.python)) {
    throw new UserError(`invalid python '${opts.python}'`, 'give the path of one Python executable on the host');
  }
  const fields: LaunchFields = { ...profile };
  if (opts.portOverride !== undefined) {
    if (!Number.isInteger(opts.portOverride) || opts.portOverride < 1 || opts.portOverride > 65535) {
      throw new UserError(`invalid port ${opts.portOverride}`, 'a port is a whole number from 1 to 65535');
    }
    fields.port = opts.portOverride;
  }

  const argv = [opts.python, '-m', 'sglang.launch_server'];
  for (const spec of FLAGS) {
    const value = fields[spec.field];
    if (value === undefined) continue;
    const flag = dialect === 'dsa' && spec.dsaFlag ? spec.dsaFlag : spec.flag;
    if (spec.kind === 'switch') {
      if (value === true) argv.push(flag);
    } else if (spec.kind === 'negated') {
      if (value === false) argv.push(flag);
    } else {
      argv.push(flag, dialectValue(spec.field, String(value), dialect));
    }
  }
  argv.push(...fields.extra_args);

  const env: Record<string, string> = {};
  if (fields.gpus?.length) env.CUDA_VISIBLE_DEVICES = fields.gpus.join(',');
  for (const name of Object.keys(fields.env).sort()) env[name] = fields.env[name]!;
  return { argv, env };
}

/** `NAME=value ... python -m sglang.launch_server ...`, every token POSIX-quoted: paste it into sh and it runs. */
export function commandLine(r: LaunchCommand): string {
  // `NAME='v'` is an assignment; `'NAME=v'` would be a command name, so only the value is quoted.
  const assignments = Object.entries(r.env).map(([name, value]) => {
    if (!ENV_NAME.test(name)) throw new UserError(`invalid environment variable name '${name}'`);
    return `${name}=${shq(value)}`;
  });
  return [...assignments, shArgv(r.argv)].join(' ');
}

/**
 * The flag spelling for an installed SGLang version. The NSA -> DSA rename is PR #25821 (main, 2026-05-20); 0.5.13 as
 * the first release carrying it is an estimate from release dates, not a checked tag. Unknown, unparsable and
 * 0.5.13 pre-release versions get `nsa`: releases after the rename still accept the --nsa-* names as deprecated
 * aliases, while releases before it reject --dsa-*, so `nsa` is the safe guess.
 */
export function dialectForVersion(sglangVersion: string | undefined): Dialect {
  const m = sglangVersion?.trim().match(/^v?(\d+)\.(\d+)(?:\.(\d+))?(.*)$/);
  if (!m) return 'nsa';
  const v = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] as const;
  const rest = m[4] ?? '';
  const boundary = [0, 5, 13] as const;
  for (let i = 0; i < 3; i++) {
    if (v[i]! > boundary[i]!) return 'dsa';
    if (v[i]! < boundary[i]!) return 'nsa';
  }
  // Exactly 0.5.13: a pre-release (0.5.13rc1, 0.5.13.dev4) may predate the rename; post-releases and local builds don't.
  return /^\.?(rc|a|b|alpha|beta|dev|pre)/i.test(rest) ? 'nsa' : 'dsa';
}
