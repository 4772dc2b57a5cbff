// Simulated model profiles, picked from --model-path. Sizes are per-model totals; the server divides weights by
// the tensor-parallel size. GLM-5's numbers reproduce the seeds' log (83 shards, context_len=202752,
// max_total_num_tokens=425664 and available_gpu_mem=6.60 GB at tp 8 with the default memory fraction).

/** @typedef {{
 *   key: string, arch: string, modelType: string, dsa: boolean, mla: boolean, moe: boolean, experts: number,
 *   shards: number, secPerShard: number, weightsGb: number, contextLen: number, layers: number,
 *   kvBytesPerToken: {fp8: number, bf16: number}, vocab: number, eosId: number, dtype: string,
 *   fp8Checkpoint: boolean, ropeWarning: string|null, moeShape: string|null, importSec: number,
 * }} ModelProfile */

/** @type {Array<[RegExp, ModelProfile]>} */
const PROFILES = [
  [
    /GLM-5|glm-5/i,
    {
      key: 'glm5',
      arch: 'GlmMoeDsaForCausalLM',
      modelType: 'glm_moe_dsa',
      dsa: true,
      mla: true,
      moe: true,
      experts: 256,
      shards: 83,
      secPerShard: 1.09,
      // 52.84 GB per GPU at tp 8.
      weightsGb: 422.72,
      contextLen: 202752,
      layers: 78,
      // Calibrated so 32.15 GB of KV pool holds 425664 tokens per GPU (MLA + indexer cache, fp8 layout).
      kvBytesPerToken: { fp8: 81098, bf16: 142413 },
      vocab: 154880,
      eosId: 154820,
      dtype: 'torch.bfloat16',
      fp8Checkpoint: true,
      // transformers 5.x config validation (modeling_rope_utils). UNVERIFIED: which keys GLM-5's config trips on.
      ropeWarning: "Unrecognized keys in `rope_parameters` for 'rope_type'='default': {'partial_rotary_factor'}",
      moeShape: 'E=257,N=256',
      importSec: 4.0,
    },
  ],
  [
    /DeepSeek-V3\.2/i,
    {
      key: 'dsv32',
      arch: 'DeepseekV32ForCausalLM',
      modelType: 'deepseek_v32',
      dsa: true,
      mla: true,
      moe: true,
      experts: 256,
      shards: 163,
      secPerShard: 0.62,
      weightsGb: 642.4,
      contextLen: 163840,
      layers: 61,
      kvBytesPerToken: { fp8: 63423, bf16: 111378 },
      vocab: 129280,
      eosId: 1,
      dtype: 'torch.bfloat16',
      fp8Checkpoint: true,
      ropeWarning: null,
      moeShape: 'E=257,N=256',
      importSec: 4.0,
    },
  ],
  [
    /Kimi-K2/i,
    {
      key: 'kimi_k2',
      arch: 'DeepseekV3ForCausalLM',
      modelType: 'kimi_k2',
      dsa: false,
      mla: true,
      moe: true,
      experts: 384,
      shards: 119,
      secPerShard: 0.71,
      weightsGb: 564.0,
      contextLen: 262144,
      layers: 61,
      kvBytesPerToken: { fp8: 40016, bf16: 70272 },
      vocab: 163840,
      eosId: 163586,
      dtype: 'torch.bfloat16',
      fp8Checkpoint: false,
      ropeWarning: null,
      moeShape: 'E=384,N=256',
      importSec: 4.0,
    },
  ],
  [
    /GLM-4\.[5-7]/i,
    {
      key: 'glm47',
      arch: 'Glm4MoeForCausalLM',
      modelType: 'glm4_moe',
      dsa: false,
      mla: false,
      moe: true,
      experts: 160,
      shards: 93,
      secPerShard: 0.82,
      weightsGb: 356.8,
      contextLen: 202752,
      layers: 92,
      kvBytesPerToken: { fp8: 47104, bf16: 94208 },
      vocab: 151552,
      eosId: 151329,
      dtype: 'torch.bfloat16',
      fp8Checkpoint: true,
      ropeWarning: null,
      moeShape: 'E=161,N=192',
      importSec: 3.5,
    },
  ],
  [
    /Qwen2\.5-0\.5B/i,
    {
      key: 'qwen25_05b',
      arch: 'Qwen2ForCausalLM',
      modelType: 'qwen2',
      dsa: false,
      mla: false,
      moe: false,
      experts: 0,
      shards: 1,
      secPerShard: 0.55,
      weightsGb: 0.99,
      contextLen: 32768,
      layers: 24,
      kvBytesPerToken: { fp8: 6144, bf16: 12288 },
      vocab: 151936,
      eosId: 151645,
      dtype: 'torch.bfloat16',
      fp8Checkpoint: false,
      ropeWarning: null,
      moeShape: null,
      importSec: 2.5,
    },
  ],
];

/** @type {ModelProfile} */
const GENERIC = {
  key: 'generic',
  arch: 'LlamaForCausalLM',
  modelType: 'llama',
  dsa: false,
  mla: false,
  moe: false,
  experts: 0,
  shards: 4,
  secPerShard: 0.9,
  weightsGb: 16.06,
  contextLen: 131072,
  layers: 32,
  kvBytesPerToken: { fp8: 65536, bf16: 131072 },
  vocab: 128256,
  eosId: 128009,
  dtype: 'torch.bfloat16',
  fp8Checkpoint: false,
  ropeWarning: null,
  moeShape: null,
  importSec: 3.0,
};

/** @param {string} modelPath @returns {ModelProfile} */
export function profileFor(modelPath) {
  for (const [re, p] of PROFILES) if (re.test(modelPath)) return p;
  return GENERIC;
}

/** The "DSA" rule of the stand-in: GLM-5 and DeepSeek-V3.2 take SGLang's DeepSeek-DSA path. */
export function isDsaModel(modelPath) {
  return /GLM-5|glm-5|DeepSeek-V3\.2/i.test(modelPath);
}
