// One table of the typed launch settings: which SGLang flag each becomes, in which order, how it shows in the
// attempts table when unset. Rendering, diffing and the extra_args duplicate check all read it, so a new field is
// added in one place.

/** A profile's settings after `extends` is resolved and defaults applied. */
export interface LaunchFields {
  model_path: string;
  served_model_name?: string;
  tp?: number;
  port: number;
  host_bind: string;
  trust_remote_code?: boolean;
  enable_metrics?: boolean;
  quantization?: string;
  kv_cache_dtype?: string;
  attention_backend?: string;
  prefill_attention_backend?: string;
  decode_attention_backend?: string;
  nsa_prefill_backend?: string;
  nsa_decode_backend?: string;
  fp8_gemm_backend?: string;
  fp4_gemm_backend?: string;
  moe_runner_backend?: string;
  disable_shared_experts_fusion?: boolean;
  cuda_graph: boolean;
  cuda_graph_max_bs?: number;
  mem_fraction_static?: number;
  chunked_prefill_size?: number;
  max_running_requests?: number;
  schedule_policy?: string;
  schedule_conservativeness?: number;
  context_length?: number;
  tool_call_parser?: string;
  reasoning_parser?: string;
  gpus?: number[];
  env: Record<string, string>;
  extra_args: string[];
}

export type FlagField = Exclude<keyof LaunchFields, 'gpus' | 'env' | 'extra_args'>;

export interface FlagSpec {
  field: FlagField;
  /** The flag as SGLang <= 0.5.12 spells it (the `nsa` dialect). */
  flag: string;
  /** The flag from the NSA -> DSA rename on (PR #25821), when it differs. */
  dsaFlag?: string;
  /** `value`: `--flag v`; `switch`: bare `--flag` when true; `negated`: bare `--flag` when false. */
  kind: 'value' | 'switch' | 'negated';
  /** Key in flagView, and the column name in the attempts table. */
  view: string;
  /** Shown when the profile leaves the field unset and SGLang picks (`auto`), or the switch's default state. */
  unset?: string;
  /** Other spellings SGLang accepts for the same setting, so extra_args cannot set it behind the field's back. */
  aliases?: string[];
}

// Render order: what identifies the server (model, parallelism, address), then numerics and kernels from the
// checkpoint outwards (quantization, KV cache, attention, DSA, GEMMs, MoE), then CUDA graphs and memory, then the
// API-facing parsers. extra_args follow all of these.
export const FLAGS: readonly FlagSpec[] = [
  { field: 'model_path', flag: '--model-path', kind: 'value', view: 'model-path', aliases: ['--model'] },
  {
    field: 'tp',
    flag: '--tp-size',
    kind: 'value',
    view: 'tp-size',
    unset: '1',
    aliases: ['--tensor-parallel-size'],
  },
  { field: 'host_bind', flag: '--host', kind: 'value', view: 'host' },
  { field: 'port', flag: '--port', kind: 'value', view: 'port' },
  { field: 'served_model_name', flag: '--served-model-name', kind: 'value', view: 'served-model-name' },
  { field: 'trust_remote_code', flag: '--trust-remote-code', kind: 'switch', view: 'trust-remote-code', unset: 'off' },
  // SGLang's Prometheus /metrics on the server's port (probe, smoke and bench read it).
  { field: 'enable_metrics', flag: '--enable-metrics', kind: 'switch', view: 'enable-metrics', unset: 'off' },
  // SGLang's default (None) reads the method from the checkpoint's quant config.
  { field: 'quantization', flag: '--quantization', kind: 'value', view: 'quantization', unset: 'auto' },
  { field: 'kv_cache_dtype', flag: '--kv-cache-dtype', kind: 'value', view: 'kv-cache-dtype', unset: 'auto' },
  { field: 'attention_backend', flag: '--attention-backend', kind: 'value', view: 'attention-backend', unset: 'auto' },
  {
    field: 'prefill_attention_backend',
    flag: '--prefill-attention-backend',
    kind: 'value',
    view: 'prefill-attention-backend',
    unset: 'auto',
  },
  {
    field: 'decode_attention_backend',
    flag: '--decode-attention-backend',
    kind: 'value',
    view: 'decode-attention-backend',
    unset: 'auto',
  },
  {
    field: 'nsa_prefill_backend',
    flag: '--nsa-prefill-backend',
    dsaFlag: '--dsa-prefill-backend',
    kind: 'value',
    view: 'nsa-prefill-backend',
    unset: 'auto',
  },
  {
    field: 'nsa_decode_backend',
    flag: '--nsa-decode-backend',
    dsaFlag: '--dsa-decode-backend',
    kind: 'value',
    view: 'nsa-decode-backend',
    unset: 'auto',
  },
  { field: 'fp8_gemm_backend', flag: '--fp8-gemm-backend', kind: 'value', view: 'fp8-gemm-backend', unset: 'auto' },
  { field: 'fp4_gemm_backend', flag: '--fp4-gemm-backend', kind: 'value', view: 'fp4-gemm-backend', unset: 'auto' },
  {
    field: 'moe_runner_backend',
    flag: '--moe-runner-backend',
    kind: 'value',
    view: 'moe-runner-backend',
    unset: 'auto',
  },
  {
    field: 'disable_shared_experts_fusion',
    flag: '--disable-shared-experts-fusion',
    kind: 'switch',
    view: 'disable-shared-experts-fusion',
    unset: 'off',
  },
  // [J] keeps --disable-cuda-graph and --cuda-graph-max-bs as deprecated aliases, so both dialects use them.
  { field: 'cuda_graph', flag: '--disable-cuda-graph', kind: 'negated', view: 'cuda-graph', unset: 'on' },
  {
    field: 'cuda_graph_max_bs',
    flag: '--cuda-graph-max-bs',
    kind: 'value',
    view: 'cuda-graph-max-bs',
    unset: 'auto',
    aliases: ['--cuda-graph-max-bs-decode'],
  },
  {
    field: 'mem_fraction_static',
    flag: '--mem-fraction-static',
    kind: 'value',
    view: 'mem-fraction-static',
    unset: 'auto',
  },
  {
    field: 'chunked_prefill_size',
    flag: '--chunked-prefill-size',
    kind: 'value',
    view: 'chunked-prefill-size',
    unset: 'auto',
  },
  {
    field: 'max_running_requests',
    flag: '--max-running-requests',
    kind: 'value',
    view: 'max-running-requests',
    unset: 'auto',
  },
  { field: 'schedule_policy', flag: '--schedule-policy', kind: 'value', view: 'schedule-policy', unset: 'fcfs' },
  {
    field: 'schedule_conservativeness',
    flag: '--schedule-conservativeness',
    kind: 'value',
    view: 'schedule-conservativeness',
    unset: '1.0',
  },
  // Unset means the model's own config.json value.
  { field: 'context_length', flag: '--context-length', kind: 'value', view: 'context-length', unset: 'auto' },
  { field: 'tool_call_parser', flag: '--tool-call-parser', kind: 'value', view: 'tool-call-parser' },
  { field: 'reasoning_parser', flag: '--reasoning-parser', kind: 'value', view: 'reasoning-parser' },
];

/** Every spelling of every typed flag, mapped to its field. */
export function typedFlagNames(): Map<string, FlagField> {
  const names = new Map<string, FlagField>();
  for (const f of FLAGS) {
    for (const n of [f.flag, f.dsaFlag, ...(f.aliases ?? [])]) if (n) names.set(n, f.field);
  }
  return names;
}
