// The values SGLang's argparse accepts for each choice-valued flag, from docs/sglang.md §1.
// `f` is main at db34c1cbf (2026-02-19, about v0.5.8-0.5.9, what the team ran); `newer` lists values that only later
// releases accept ([J], main at 8905cbd42, about v0.5.15, unless noted). Both are accepted so a profile can target
// either install; `newer` is kept apart so a caller can warn that an older SGLang will reject the value.
// When SGLang adds a value, add it here: extra_args cannot carry a typed flag (one place per setting).
// A launch is checked against the host's own SGLang (its --help, src/lifecycle/host-flags.ts, docs/sglang.md §11);
// this table stands in only when the host cannot be asked. A profile naming a value it lacks still loads (a release
// newer than the table may take it), with a note (shippedTableNotes in issues.ts).

/** The SGLang releases the table was read from, for notes: [F] and [J] above. */
export const SHIPPED_SGLANG = '0.5.8 to 0.5.15';

export interface Choices {
  f: readonly string[];
  newer: readonly string[];
}

export const CHOICES = {
  quantization: {
    // `qoq` is in [F] but [J] dropped it; kept so the team's older install still validates.
    f: [
      'awq',
      'fp8',
      'mxfp8',
      'gptq',
      'marlin',
      'gptq_marlin',
      'awq_marlin',
      'bitsandbytes',
      'gguf',
      'modelopt',
      'modelopt_fp8',
      'modelopt_fp4',
      'petit_nvfp4',
      'w8a8_int8',
      'w8a8_fp8',
      'moe_wna16',
      'qoq',
      'w4afp8',
      'mxfp4',
      'auto-round',
      'compressed-tensors',
      'modelslim',
      'quark_int4fp8_moe',
    ],
    newer: [
      'nvfp4_online',
      'modelopt_mixed',
      'auto-round-int8',
      'mxfp_w4a8',
      'quark',
      'quark_mxfp4',
      'mlx_q4',
      'mlx_q8',
      'unquant',
      'humming',
    ],
  },
  kv_cache_dtype: {
    f: ['auto', 'fp8_e5m2', 'fp8_e4m3', 'bf16', 'bfloat16', 'fp4_e2m1'],
    newer: ['mxfp8', 'nvfp4', 'fp4_mx_block16'],
  },
  attention_backend: {
    f: [
      'triton',
      'torch_native',
      'flex_attention',
      'nsa',
      'cutlass_mla',
      'fa3',
      'fa4',
      'flashinfer',
      'flashmla',
      'trtllm_mla',
      'trtllm_mha',
      'dual_chunk_flash_attn',
      'aiter',
      'wave',
      'intel_amx',
      'ascend',
      'intel_xpu',
    ],
    // [J] renames `nsa` to `dsa` (nsa stays as a deprecated alias); renderLaunch translates between the two.
    newer: ['dsa', 'dsv4', 'cutedsl_mla', 'tokenspeed_mla'],
  },
  // --nsa-prefill-backend / --nsa-decode-backend ([J]: --dsa-*). `flashinfer_sparse_mla` is newer than [J] (the newest
  // stored version; PR #26928).
  nsa_backend: {
    f: ['flashmla_sparse', 'flashmla_kv', 'flashmla_auto', 'fa3', 'tilelang', 'aiter', 'trtllm'],
    newer: ['flashmla_sparse_q8', 'flashinfer_sparse_mla'],
  },
  fp8_gemm_backend: {
    f: ['auto', 'deep_gemm', 'flashinfer_trtllm', 'flashinfer_deepgemm', 'cutlass', 'triton', 'aiter'],
    newer: ['flashinfer_cutlass'],
  },
  fp4_gemm_backend: {
    f: ['auto', 'flashinfer_cudnn', 'flashinfer_cutlass', 'flashinfer_trtllm'],
    newer: ['flashinfer_cutedsl', 'marlin'],
  },
  moe_runner_backend: {
    f: [
      'auto',
      'deep_gemm',
      'triton',
      'triton_kernel',
      'flashinfer_trtllm',
      'flashinfer_cutlass',
      'flashinfer_mxfp4',
      'flashinfer_cutedsl',
      'cutlass',
    ],
    newer: [
      'experimental_sgl_trtllm',
      'flashinfer_trtllm_routed',
      'aiter',
      'marlin',
      'humming',
      'experimental_sgl_marlin',
    ],
  },
  // server_args.py SCHEDULE_POLICY choices ([F]; `priority` needs --enable-priority-scheduling upstream).
  schedule_policy: {
    f: ['lpm', 'random', 'fcfs', 'dfs-weight', 'lof', 'priority'],
    newer: [],
  },
  // Parsers: only the [F] lists were read; no [J] additions are recorded in the reference.
  tool_call_parser: {
    f: [
      'deepseekv3',
      'deepseekv31',
      'deepseekv32',
      'glm',
      'glm45',
      'glm47',
      'gpt-oss',
      'kimi_k2',
      'lfm2',
      'llama3',
      'mimo',
      'mistral',
      'pythonic',
      'qwen',
      'qwen25',
      'qwen3_coder',
      'step3',
      'step3p5',
      'minimax-m2',
      'trinity',
      'interns1',
      'hermes',
      'gigachat3',
    ],
    newer: [],
  },
  reasoning_parser: {
    f: [
      'deepseek-r1',
      'deepseek-v3',
      'glm45',
      'gpt-oss',
      'kimi',
      'kimi_k2',
      'qwen3',
      'qwen3-thinking',
      'minimax',
      'minimax-append-think',
      'step3',
      'step3p5',
      'nano_v3',
      'interns1',
      'stream_reasoning',
    ],
    newer: [],
  },
} as const satisfies Record<string, Choices>;

export type ChoiceSet = keyof typeof CHOICES;

export function allChoices(set: ChoiceSet): [string, ...string[]] {
  const c: Choices = CHOICES[set];
  return [...c.f, ...c.newer] as [string, ...string[]];
}

/** True when only SGLang releases newer than the team's install accept this value. */
export function isNewerOnly(set: ChoiceSet, value: string): boolean {
  const c: Choices = CHOICES[set];
  return c.newer.includes(value);
}
