// The shape of one profile file. No defaults here: a default filled in per file would override the value a child
// inherits; defaults are applied once, after `extends` is resolved (resolve.ts). No transforms either, so the same
// schema becomes the JSON Schema editors validate against (scripts/write-profile-schema.ts).
import { z } from 'zod';
import { SlurmJobSchema } from '../config/slurm.ts';
import { allChoices, type ChoiceSet } from './choices.ts';

/** Profile names are file names and chat arguments: keep them plain. */
export const PROFILE_NAME = /^[a-z0-9][a-z0-9.-]*$/;
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// A newline or NUL would end or corrupt the command line the value is rendered into.
const ONE_LINE = /^[^\n\r\0]*$/;
// Control characters in a path or model name are never intended, and confuse the logs they are echoed into.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const NO_CONTROL = /^[^\x00-\x1f\x7f]*$/;
// A leading `-` would make SGLang's argparse read the value as a flag.
const NO_DASH = /^[^-]/;

/** Which list of SGLang values each choice-valued field is checked against. */
export const CHOICE_FIELDS: Readonly<Record<string, ChoiceSet>> = {
  quantization: 'quantization',
  kv_cache_dtype: 'kv_cache_dtype',
  attention_backend: 'attention_backend',
  prefill_attention_backend: 'attention_backend',
  decode_attention_backend: 'attention_backend',
  nsa_prefill_backend: 'nsa_backend',
  nsa_decode_backend: 'nsa_backend',
  dsa_prefill_backend: 'nsa_backend',
  dsa_decode_backend: 'nsa_backend',
  fp8_gemm_backend: 'fp8_gemm_backend',
  fp4_gemm_backend: 'fp4_gemm_backend',
  moe_runner_backend: 'moe_runner_backend',
  schedule_policy: 'schedule_policy',
  tool_call_parser: 'tool_call_parser',
  reasoning_parser: 'reasoning_parser',
};

const plainText = (what: string) =>
  z
    .string()
    .min(1, 'must not be empty')
    .regex(NO_CONTROL, 'must not contain control characters (newline, tab, NUL)')
    .regex(NO_DASH, "must not start with '-' (SGLang would read it as a flag)")
    .describe(what);

// A choice is only shaped here: which values SGLang takes is the host's own --help's to say at launch (a release newer
// than the shipped table adds values), so a value the shipped table lacks is a note at load (shippedTableNotes in
// issues.ts), not a refusal.
const choice = (field: string, what: string) =>
  z
    .string()
    .min(1, 'must not be empty')
    .regex(NO_CONTROL, 'must not contain control characters (newline, tab, NUL)')
    .regex(NO_DASH, "must not start with '-' (SGLang would read it as a flag)")
    .regex(
      /^[^\s'"\\]+$/,
      `must be one word, as --${field.replace(/_/g, '-')} takes it (no spaces, quotes or control characters)`,
    )
    // The shipped values reach editors as completions (JSON Schema `examples`), not as a closed list.
    .meta({
      description: `${what} Checked against the host's SGLang (its --help) at launch.`,
      examples: allChoices(CHOICE_FIELDS[field]!),
    });

export const profileSchema = z
  .object({
    description: z.string().describe('One line on what this profile is for and where its choices come from.'),
    extends: z
      .string()
      .regex(PROFILE_NAME, 'must be a profile name (lowercase letters, digits, - and .)')
      .describe('Another profile this one starts from; name only what changes.'),
    model_path: plainText('--model-path: Hugging Face repo id or a directory on the GPU host. Required once resolved.')
      // The command is quoted, so the remote shell never expands `~`.
      .regex(/^[^~]/, "must not start with '~' (the command is quoted, so ~ is not expanded; use an absolute path)"),
    served_model_name: plainText('--served-model-name: the model id clients see (default: model_path).'),
    tp: z.int().min(1).describe('--tp-size: tensor-parallel size across all GPUs.'),
    port: z.int().min(1).max(65535).describe('--port (default 30000).'),
    host_bind: z
      .string()
      .regex(/^[A-Za-z0-9.:][A-Za-z0-9.:-]*$/, 'must be an IP address or host name, e.g. 127.0.0.1 or 0.0.0.0')
      .describe('--host: address the server binds (default 127.0.0.1).'),
    trust_remote_code: z.boolean().describe('--trust-remote-code'),
    enable_metrics: z
      .boolean()
      .describe('--enable-metrics: SGLang serves Prometheus /metrics on its port (probe, smoke and bench report them)'),
    quantization: choice('quantization', '--quantization (unset: read from the checkpoint).'),
    kv_cache_dtype: choice('kv_cache_dtype', '--kv-cache-dtype (SGLang default auto).'),
    attention_backend: choice('attention_backend', '--attention-backend (unset: SGLang picks).'),
    prefill_attention_backend: choice('prefill_attention_backend', '--prefill-attention-backend'),
    decode_attention_backend: choice('decode_attention_backend', '--decode-attention-backend'),
    nsa_prefill_backend: choice(
      'nsa_prefill_backend',
      '--nsa-prefill-backend (--dsa-prefill-backend from SGLang 0.5.13).',
    ),
    nsa_decode_backend: choice('nsa_decode_backend', '--nsa-decode-backend (--dsa-decode-backend from SGLang 0.5.13).'),
    dsa_prefill_backend: choice(
      'dsa_prefill_backend',
      'Same as nsa_prefill_backend, under its newer name; set only one.',
    ),
    dsa_decode_backend: choice('dsa_decode_backend', 'Same as nsa_decode_backend, under its newer name; set only one.'),
    fp8_gemm_backend: choice('fp8_gemm_backend', '--fp8-gemm-backend (SGLang default auto).'),
    fp4_gemm_backend: choice('fp4_gemm_backend', '--fp4-gemm-backend'),
    moe_runner_backend: choice('moe_runner_backend', '--moe-runner-backend (SGLang default auto).'),
    cuda_graph: z.boolean().describe('CUDA graphs (default true); false renders --disable-cuda-graph.'),
    cuda_graph_max_bs: z.int().min(1).describe('--cuda-graph-max-bs (unset: SGLang sizes it by GPU memory).'),
    mem_fraction_static: z
      .number()
      .gt(0, 'must be between 0 and 1')
      .lt(1, 'must be between 0 and 1')
      .describe('--mem-fraction-static: share of GPU memory for weights and KV cache.'),
    chunked_prefill_size: z
      .int()
      .min(-1, 'must be -1 (no chunking) or a positive number of tokens')
      .refine((v) => v !== 0, 'must be -1 (no chunking) or a positive number of tokens')
      .describe('--chunked-prefill-size; -1 disables chunked prefill.'),
    context_length: z.int().min(1).describe('--context-length (unset: the model config value).'),
    max_running_requests: z
      .int()
      .min(1)
      .describe('--max-running-requests: most requests decoded at once (unset: SGLang sizes it from the KV pool).'),
    schedule_policy: choice('schedule_policy', '--schedule-policy (SGLang default fcfs).'),
    schedule_conservativeness: z
      .number()
      .gt(0, 'must be above 0')
      .max(10, 'must be at most 10')
      .describe('--schedule-conservativeness: how much KV room a new request must leave (SGLang default 1.0).'),
    tool_call_parser: choice('tool_call_parser', '--tool-call-parser'),
    reasoning_parser: choice('reasoning_parser', '--reasoning-parser'),
    disable_shared_experts_fusion: z.boolean().describe('--disable-shared-experts-fusion'),
    gpus: z
      .array(z.int().min(0))
      .min(1, 'must list at least one GPU index')
      .describe('GPU indices, rendered as CUDA_VISIBLE_DEVICES; as many as tp.'),
    env: z
      .record(
        z
          .string()
          .regex(ENV_NAME, 'must be an environment variable name (letters, digits, _; not starting with a digit)'),
        z.string().regex(ONE_LINE, 'must not contain a newline or NUL'),
      )
      .describe('Environment variables for the server process.'),
    extra_args: z
      .array(z.string().regex(ONE_LINE, 'must not contain a newline or NUL'))
      .describe('Raw SGLang arguments after the typed flags: --flag, --flag=value, or a value after a flag.'),
    smoke: z.unknown().describe('Smoke-test settings (validated by the smoke part).'),
    slurm: SlurmJobSchema.describe(
      "On a Slurm cluster: this profile's partition, account, qos, time_limit, constraint, nodes, extra sbatch lines.",
    ),
    host: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]*$/i, 'must be a host or host group name from the config')
      .describe(
        'Where `launch` runs this profile when --host is not given: a host, or a host group (host_groups in the config) for one server across several hosts.',
      ),
  })
  .partial()
  .strict()
  .describe('A SGLang launch profile: one file in profiles/, named after the file.');

export type RawProfile = z.infer<typeof profileSchema>;

/** Every key a profile file may use, for "did you mean". */
export const PROFILE_KEYS: readonly string[] = Object.keys(profileSchema.shape);
