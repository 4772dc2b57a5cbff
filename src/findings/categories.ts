// What a note about each crash class tends to say. A crash's own evidence is often one terse line; these words are
// how the team writes about the same class in prose, so they carry the match when the evidence alone would not.
// Multi-word terms are phrases (matched in order); identifiers are split into their parts by the tokenizer.

export const CATEGORY_TERMS: Readonly<Record<string, readonly string[]>> = {
  nan_in_sampling: [
    'nan',
    'inf',
    'device-side assert',
    'probability tensor',
    'sampling',
    'decode',
    'numerical',
    'element < 0',
  ],
  cuda_oom: [
    'oom',
    'out of memory',
    'OutOfMemoryError',
    'mem-fraction-static',
    'cuda graph max bs',
    'memory',
    'free',
    'GB per GPU',
    'not enough memory',
  ],
  cuda_graph_capture_failed: [
    'cuda graph',
    'capture',
    'graph capture',
    'cuda-graph-max-bs',
    'disable-cuda-graph',
    'piecewise',
    'max_bs',
    'mem-fraction-static',
  ],
  shared_memory_exceeded: [
    'shared memory',
    'smem',
    '101 KB',
    '228 KB',
    'block size',
    'SM120',
    'out of resource',
    'extend attention',
    'triton',
  ],
  unsupported_arch: [
    'SM120',
    'FlashMLA',
    'DeepGEMM',
    'TRT-LLM',
    'TllmGenFmhaRunner',
    'Unsupported architecture',
    'no kernel image',
    'sm_90a',
    'sm_100a',
    'indexer',
  ],
  illegal_memory_access: [
    'illegal memory access',
    'illegal address',
    'CUDA_LAUNCH_BLOCKING',
    'memory access',
    'kernel',
    'misaligned address',
  ],
  backend_assertion: [
    'AssertionError',
    'nsa_kv_cache_store_fp8',
    'triton',
    'fp8 KV',
    'set_kv_buffer',
    'attention backend',
    'assert',
    'kv-cache-dtype',
  ],
  nccl_error: ['NCCL', 'NVLink', 'PCIe', 'NUMA', 'all-reduce', 'P2P', 'topology', 'timeout'],
  model_load_error: [
    'load',
    'weight',
    'safetensors',
    'checkpoint',
    'shard',
    'size of tensor',
    'shared experts fusion',
    'quantization',
    'hf_quant_config',
  ],
  import_error: [
    'ImportError',
    'ModuleNotFoundError',
    'import',
    'transformers',
    'version',
    'install',
    'built from source',
  ],
  port_in_use: ['port', 'address already in use', 'bind', 'uvicorn', 'Errno 98'],
  watchdog_timeout: ['watchdog', 'watchdog timeout', 'hang', 'no progress', 'stuck', 'py-spy'],
  other: ['crash', 'exception', 'traceback', 'Scheduler hit an exception'],
};

/** The words a note uses for the phase a crash happened in. */
export const PHASE_TERMS: Readonly<Record<string, readonly string[]>> = {
  startup: ['startup', 'launch', 'server args'],
  weight_load: ['weight', 'load', 'shard', 'checkpoint'],
  kv_alloc: ['kv cache', 'memory pool', 'mem-fraction-static'],
  cuda_graph_capture: ['cuda graph', 'capture'],
  warmup: ['warm-up', 'warmup'],
  prefill: ['prefill'],
  decode: ['decode'],
  runtime: ['request'],
  shutdown: ['shutdown', 'stop'],
  unknown: [],
};

/**
 * Extra words for flag settings whose value alone says little: a switched-off CUDA graph is written about as
 * `--disable-cuda-graph`, `cuda graph off` or `without CUDA graph`.
 */
export function flagTerms(key: string, value: string): string[] {
  const v = value.trim().toLowerCase();
  if (v === '' || v === 'auto' || v === 'on' || v === 'true') return [];
  if (v === 'off' || v === 'false') return [`disable ${key}`];
  // Numbers (ports, tp size, memory fractions) identify nothing across notes; cuda-graph-max-bs is the exception
  // worth keeping (a cap of 256 vs 512 is a finding).
  if (/^[0-9.,]+$/.test(v)) return key.includes('max-bs') ? [`${key} ${v}`] : [];
  // A model path: its last segment names the model (`lukealonso/GLM-5-NVFP4` -> GLM-5-NVFP4).
  const last = v.split('/').filter(Boolean).pop() ?? v;
  return [last];
}
