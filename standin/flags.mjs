// The launch_server flag table. Two flavours:
//   'f' (default): sgl-project/sglang main at db34c1cbf (2026-02-19, ~v0.5.8), hand-written add_cli_args: the long
//       alias comes first (`--tensor-parallel-size`, `--tp-size`), `--nsa-*` backend names.
//   'j' (STANDIN_SGLANG_FLAVOR=new): main at 8905cbd42 (2026-07-20, ~v0.5.15), dataclass-derived flags: `--tp-size`
//       first with `--tensor-parallel-size` as alias, `--dsa-*` backend names with `--nsa-*` as deprecated aliases.
// Choice lists are copied from docs/sglang.md §1 (server_args.py of each commit). Flags SGLang has
// that are not listed here are rejected as "unrecognized arguments"; the table covers the reference table, the
// flags the bot uses, and the common ones around them so prefix abbreviations resolve as they do upstream.

import { ArgumentParser } from './argparse.mjs';

const QUANT_F = [
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
];
const QUANT_J = [
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
  'nvfp4_online',
  'modelopt_mixed',
  'petit_nvfp4',
  'w8a8_int8',
  'w8a8_fp8',
  'moe_wna16',
  'w4afp8',
  'mxfp4',
  'auto-round',
  'auto-round-int8',
  'compressed-tensors',
  'modelslim',
  'mxfp_w4a8',
  'quark',
  'quark_int4fp8_moe',
  'quark_mxfp4',
  'mlx_q4',
  'mlx_q8',
  'unquant',
  'humming',
];
const KV_F = ['auto', 'fp8_e5m2', 'fp8_e4m3', 'bf16', 'bfloat16', 'fp4_e2m1'];
const KV_J = [...KV_F, 'mxfp8', 'nvfp4', 'fp4_mx_block16'];
const ATTN_F = [
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
];
const ATTN_J = [
  'triton',
  'torch_native',
  'flex_attention',
  'dsa',
  'nsa',
  'dsv4',
  'cutlass_mla',
  'fa3',
  'fa4',
  'flashinfer',
  'flashmla',
  'trtllm_mla',
  'cutedsl_mla',
  'tokenspeed_mla',
  'trtllm_mha',
  'dual_chunk_flash_attn',
  'aiter',
  'wave',
  'intel_amx',
  'ascend',
  'intel_xpu',
];
const NSA_F = ['flashmla_sparse', 'flashmla_kv', 'flashmla_auto', 'fa3', 'tilelang', 'aiter', 'trtllm'];
const DSA_J = [
  'flashmla_sparse',
  'flashmla_sparse_q8',
  'flashmla_kv',
  'flashmla_auto',
  'fa3',
  'tilelang',
  'aiter',
  'trtllm',
];
const FP8_GEMM_F = ['auto', 'deep_gemm', 'flashinfer_trtllm', 'flashinfer_deepgemm', 'cutlass', 'triton', 'aiter'];
const FP8_GEMM_J = [
  'auto',
  'deep_gemm',
  'flashinfer_trtllm',
  'flashinfer_cutlass',
  'flashinfer_deepgemm',
  'cutlass',
  'triton',
  'aiter',
];
const FP4_GEMM_F = ['auto', 'flashinfer_cudnn', 'flashinfer_cutlass', 'flashinfer_trtllm'];
const FP4_GEMM_J = [
  'auto',
  'flashinfer_cudnn',
  'flashinfer_cutedsl',
  'flashinfer_cutlass',
  'flashinfer_trtllm',
  'marlin',
];
const MOE_F = [
  'auto',
  'deep_gemm',
  'triton',
  'triton_kernel',
  'flashinfer_trtllm',
  'flashinfer_cutlass',
  'flashinfer_mxfp4',
  'flashinfer_cutedsl',
  'cutlass',
];
const MOE_J = [
  'auto',
  'deep_gemm',
  'triton',
  'triton_kernel',
  'flashinfer_trtllm',
  'experimental_sgl_trtllm',
  'flashinfer_trtllm_routed',
  'flashinfer_cutlass',
  'flashinfer_mxfp4',
  'flashinfer_cutedsl',
  'cutlass',
  'aiter',
  'marlin',
  'humming',
  'experimental_sgl_marlin',
];
const TOOL_F = [
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
];
const REASON_F = [
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
];
const LOAD_FORMAT = [
  'auto',
  'pt',
  'safetensors',
  'npcache',
  'dummy',
  'sharded_state',
  'gguf',
  'bitsandbytes',
  'layered',
  'remote',
  'remote_instance',
  'fastsafetensors',
  'private',
];

// The help text SGLang gives each flag (`help=` in server_args.py, docs/sglang.md §11 for the sources), so `--help`
// reads as upstream's does. Keyed by any of the flag's option strings; a flag missing here prints without help, as
// argparse prints an action whose help is None.
const pyList = (xs) => `[${xs.map((x) => `'${x}'`).join(', ')}]`;
const HELP = {
  '--model-path': 'The path of the model weights. This can be a local folder or a Hugging Face repo ID.',
  '--tokenizer-path': 'The path of the tokenizer.',
  '--tokenizer-worker-num': 'The worker num of the tokenizer manager.',
  '--tokenizer-mode':
    "Tokenizer mode. 'auto' will use the fast tokenizer if available, and 'slow' will always use the slow tokenizer.",
  '--skip-tokenizer-init': 'If set, skip init tokenizer and pass input_ids in generate request.',
  '--load-format':
    'The format of the model weights to load. "auto" will try to load the weights in the safetensors format and fall ' +
    'back to the pytorch bin format if safetensors format is not available. "pt" will load the weights in the pytorch ' +
    'bin format. "safetensors" will load the weights in the safetensors format. "npcache" will load the weights in ' +
    'pytorch format and store a numpy cache to speed up the loading. "dummy" will initialize the weights with random ' +
    'values, which is mainly for profiling."gguf" will load the weights in the gguf format. "bitsandbytes" will load ' +
    'the weights using bitsandbytes quantization."layered" loads weights layer by layer so that one can quantize a ' +
    'layer before loading another to make the peak memory envelope smaller.',
  '--model-loader-extra-config':
    'Extra config for model loader. This will be passed to the model loader corresponding to the chosen load_format.',
  '--trust-remote-code': 'Whether or not to allow for custom models defined on the Hub in their own modeling files.',
  '--context-length':
    "The model's maximum context length. Defaults to None (will use the value from the model's config.json instead).",
  '--is-embedding': 'Whether to use a CausalLM as an embedding model.',
  '--enable-multimodal':
    'Enable the multimodal functionality for the served model. If the model being served is not multimodal, nothing will happen',
  '--revision':
    'The specific model version to use. It can be a branch name, a tag name, or a commit id. If unspecified, will use the default version.',
  '--host': 'The host of the HTTP server.',
  '--port': 'The port of the HTTP server.',
  '--skip-server-warmup': 'If set, skip warmup.',
  '--nccl-port': 'The port for NCCL distributed environment setup. Defaults to a random port.',
  '--dtype':
    'Data type for model weights and activations.\n\n* "auto" will use FP16 precision for FP32 and FP16 models, and ' +
    'BF16 precision for BF16 models.\n* "half" for FP16. Recommended for AWQ quantization.\n* "float16" is the same ' +
    'as "half".\n* "bfloat16" for a balance between precision and range.\n* "float" is shorthand for FP32 precision.\n' +
    '* "float32" for FP32 precision.',
  '--quantization': 'The quantization method.',
  '--quantization-param-path':
    'Path to the JSON file containing the KV cache scaling factors. This should generally be supplied, when KV cache ' +
    'dtype is FP8. Otherwise, KV cache scaling factors default to 1.0, which may cause accuracy issues. ',
  '--enable-fp32-lm-head': 'If set, the LM head outputs (logits) are in FP32.',
  '--mem-fraction-static':
    'The fraction of the memory used for static allocation (model weights and KV cache memory pool). Use a smaller value if you see out-of-memory errors.',
  '--max-running-requests': 'The maximum number of running requests.',
  '--max-queued-requests':
    'The maximum number of queued requests. This option is ignored when using disaggregation-mode.',
  '--max-total-tokens':
    'The maximum number of tokens in the memory pool. If not specified, it will be automatically calculated based on ' +
    'the memory usage fraction. This option is typically used for development and debugging purposes.',
  '--chunked-prefill-size':
    'The maximum number of tokens in a chunk for the chunked prefill. Setting this to -1 means disabling chunked prefill.',
  '--max-prefill-tokens':
    "The maximum number of tokens in a prefill batch. The real bound will be the maximum of this value and the model's maximum context length.",
  '--schedule-policy': 'The scheduling policy of the requests.',
  '--schedule-conservativeness':
    'How conservative the schedule policy is. A larger value means more conservative scheduling. Use a larger value if you see requests being retracted frequently.',
  '--page-size': 'The number of tokens in a page.',
  '--disable-hybrid-swa-memory': 'Disable the hybrid SWA memory.',
  '--device': "The device to use ('cuda', 'xpu', 'hpu', 'npu', 'cpu'). Defaults to auto-detection if not specified.",
  '--tp-size': 'The tensor parallelism size.',
  '--pp-size': 'The pipeline parallelism size.',
  '--dp-size': 'The data parallelism size.',
  '--ep-size': 'The expert parallelism size.',
  '--stream-interval':
    'The interval (or buffer size) for streaming in terms of the token length. A smaller value makes streaming smoother, while a larger value makes the throughput higher',
  '--stream-output': 'Whether to output as a sequence of disjoint segments.',
  '--random-seed': 'The random seed.',
  '--watchdog-timeout':
    'Set watchdog timeout in seconds. If a forward batch takes longer than this, the server will crash to prevent hanging.',
  '--dist-timeout': 'Set timeout for torch.distributed initialization.',
  '--download-dir': 'Model download directory for huggingface.',
  '--base-gpu-id':
    'The base GPU ID to start allocating GPUs from. Useful when running multiple instances on the same machine.',
  '--gpu-id-step':
    'The delta between consecutive GPU IDs that are used. For example, setting it to 2 will use GPU 0,2,4,...',
  '--sleep-on-idle': 'Reduce CPU usage when sglang is idle.',
  '--log-level': 'The logging level of all loggers.',
  '--log-level-http': 'The logging level of HTTP server. If not set, reuse --log-level by default.',
  '--log-requests': 'Log metadata, inputs, outputs of all requests. The verbosity is decided by --log-requests-level',
  '--log-requests-level':
    '0: Log metadata (no sampling parameters). 1: Log metadata and sampling parameters. 2: Log metadata, sampling ' +
    'parameters and partial input/output. 3: Log every input/output.',
  '--crash-dump-folder':
    'Folder path to dump requests from the last 5 min before a crash (if any). If not specified, crash dumping is disabled.',
  '--show-time-cost': 'Show time cost of custom marks.',
  '--enable-metrics': 'Enable log prometheus metrics.',
  '--decode-log-interval': 'The log interval of decode batch.',
  '--enable-request-time-stats-logging': 'Enable per request time stats logging',
  '--api-key': 'Set API key of the server. It is also used in the OpenAI API compatible server.',
  '--served-model-name': 'Override the model name returned by the v1/models endpoint in OpenAI API server.',
  '--weight-version': "Version identifier for the model weights. Defaults to 'default' if not specified.",
  '--chat-template':
    'The buliltin chat template name or the path of the chat template file. This is only used for OpenAI-compatible API server.',
  '--file-storage-path': 'The path of the file storage in backend.',
  '--enable-cache-report': 'Return number of cached tokens in usage.prompt_tokens_details for each openai request.',
  '--load-balance-method': 'The load balancing strategy for data parallelism.',
  '--dist-init-addr': 'The host address for initializing distributed backend (e.g., `192.168.0.2:25000`).',
  '--nnodes': 'The number of nodes.',
  '--node-rank': 'The node rank.',
  '--json-model-override-args': 'A dictionary in JSON string format used to override default model configurations.',
  '--attention-backend': 'Choose the kernels for attention layers.',
  '--prefill-attention-backend':
    'Choose the kernels for prefill attention layers (have priority over --attention-backend).',
  '--decode-attention-backend':
    'Choose the kernels for decode attention layers (have priority over --attention-backend).',
  '--sampling-backend': 'Choose the kernels for sampling layers.',
  '--grammar-backend': 'Choose the backend for grammar-guided decoding.',
  '--nsa-prefill-backend': 'NSA prefill backend. If not specified, auto-detects based on hardware and kv_cache_dtype.',
  '--nsa-decode-backend': 'NSA decode backend. If not specified, auto-detects based on hardware and kv_cache_dtype.',
  '--dsa-prefill-backend':
    'DSA (DeepSeek Sparse Attention) prefill backend. If not specified, auto-detects based on hardware and kv_cache_dtype.',
  '--dsa-decode-backend':
    'DSA (DeepSeek Sparse Attention) decode backend. If not specified, auto-detects based on hardware and kv_cache_dtype.',
  '--moe-runner-backend': 'Choose the runner backend for MoE.',
  '--disable-radix-cache': 'Disable RadixAttention for prefix caching.',
  '--cuda-graph-max-bs':
    'Set the maximum batch size for cuda graph. It will extend the cuda graph capture batch size to this value.',
  '--cuda-graph-bs': 'Set the list of batch sizes for cuda graph.',
  '--disable-cuda-graph': 'Disable cuda graph.',
  '--disable-overlap-schedule':
    'Disable the overlap scheduler, which overlaps the CPU scheduler with GPU model worker.',
  '--enable-dp-attention':
    'Enabling data parallelism for attention and tensor parallelism for FFN. The dp size should be equal to the tp size. Currently DeepSeek-V2 and Qwen 2/3 MoE models are supported.',
  '--enable-p2p-check': 'Enable P2P check for GPU access, otherwise the p2p access is allowed by default.',
  '--disable-shared-experts-fusion': 'Disable shared experts fusion optimization for deepseek v3/r1.',
  '--disable-chunked-prefix-cache':
    'Disable chunked prefix cache feature for deepseek, which should save overhead for short sequences.',
};

/** The help text of a row: the table's own, else HELP under any of its option strings. */
function helpOf(opts, spec, flavor) {
  if (spec.help) return spec.help;
  // Both the parser lists and their help sentence come from the same registry upstream (an f-string).
  if (opts[0] === '--reasoning-parser')
    return `Specify the parser for reasoning models, supported parsers are: ${pyList(spec.choices)}.`;
  if (opts[0] === '--tool-call-parser')
    return `Specify the parser for handling tool-call interactions. Options include: ${pyList(spec.choices)}.`;
  if (opts[0] === '--kv-cache-dtype') {
    return flavor === 'j'
      ? 'Data type for kv cache storage. "auto" will use model data type. "bf16" or "bfloat16" for BF16 KV cache. ' +
          '"fp8_e5m2" and "fp8_e4m3" are supported for CUDA 11.8+. "mxfp8" is supported by the FA4 backend. "nvfp4" ' +
          'selects the NVFP4 FP4 E2M1 KV cache recipe; "fp4_mx_block16" selects the MX-style block-size-16 FP4 E2M1 KV ' +
          'cache recipe. Both require CUDA 12.8+ and PyTorch 2.8.0+'
      : 'Data type for kv cache storage. "auto" will use model data type. "bf16" or "bfloat16" for BF16 KV cache. ' +
          '"fp8_e5m2" and "fp8_e4m3" are supported for CUDA 11.8+. "fp4_e2m1" (only mxfp4) is supported for CUDA ' +
          '12.8+ and PyTorch 2.8.0+';
  }
  for (const o of opts) if (HELP[o]) return HELP[o];
  return '';
}

/**
 * One row: [optionStrings, spec]. spec.field is the ServerArgs field the value lands in (defaults to dest);
 * spec.float marks float fields for the ServerArgs repr.
 * @param {'f'|'j'} flavor
 */
function table(flavor) {
  const j = flavor === 'j';
  // Parallelism flags: [F] lists the long alias first (dest tensor_parallel_size, copied to tp_size in
  // from_cli_args); [J] derives `--tp-size` from the dataclass field and keeps the long one as an alias.
  const par = (field, long, short, extra = []) =>
    j
      ? [[short, long, ...extra], { dest: field, type: 'int', default: 1 }]
      : [[long, short, ...extra], { field, type: 'int', default: 1 }];
  const rows = [
    // Model and tokenizer
    [['--model-path', '--model'], { dest: 'model_path', required: true }],
    [['--tokenizer-path'], {}],
    [['--tokenizer-worker-num'], { type: 'int', default: 1 }],
    [['--tokenizer-mode'], { default: 'auto', choices: ['auto', 'slow'] }],
    [['--skip-tokenizer-init'], { action: 'store_true' }],
    [['--load-format'], { default: 'auto', choices: LOAD_FORMAT }],
    [['--model-loader-extra-config'], { default: '{}' }],
    [['--trust-remote-code'], { action: 'store_true' }],
    [['--context-length'], { type: 'int' }],
    [['--is-embedding'], { action: 'store_true' }],
    [['--enable-multimodal'], { action: 'store_true', default: null }],
    [['--revision'], {}],
    [['--model-impl'], { default: 'auto' }],
    // HTTP server
    [['--host'], { default: '127.0.0.1' }],
    [['--port'], { type: 'int', default: 30000 }],
    [['--skip-server-warmup'], { action: 'store_true' }],
    [['--warmups'], {}],
    [['--nccl-port'], { type: 'int' }],
    [['--grpc-mode'], { action: 'store_true' }],
    // Quantization and data type
    [['--dtype'], { default: 'auto', choices: ['auto', 'half', 'float16', 'bfloat16', 'float', 'float32'] }],
    [['--quantization'], { choices: j ? QUANT_J : QUANT_F }],
    [['--quantization-param-path'], {}],
    [['--kv-cache-dtype'], { default: 'auto', choices: j ? KV_J : KV_F }],
    [['--enable-fp32-lm-head'], { action: 'store_true' }],
    // Memory and scheduling
    [['--mem-fraction-static'], { type: 'float', float: true }],
    [['--max-running-requests'], { type: 'int' }],
    [['--max-queued-requests'], { type: 'int' }],
    [['--max-total-tokens'], { type: 'int' }],
    [['--chunked-prefill-size'], { type: 'int' }],
    [['--max-prefill-tokens'], { type: 'int', default: 16384 }],
    [['--schedule-policy'], { default: 'fcfs', choices: ['lpm', 'random', 'fcfs', 'dfs-weight', 'lof', 'priority'] }],
    [['--schedule-conservativeness'], { type: 'float', default: 1.0, float: true }],
    [['--page-size'], { type: 'int' }],
    [['--disable-hybrid-swa-memory'], { action: 'store_true' }],
    // Runtime options
    [['--device'], {}],
    par('tp_size', '--tensor-parallel-size', '--tp-size'),
    par('pp_size', '--pipeline-parallel-size', '--pp-size'),
    [['--stream-interval'], { type: 'int', default: 1 }],
    [['--stream-output'], { action: 'store_true' }],
    [['--random-seed'], { type: 'int' }],
    [['--watchdog-timeout'], { type: 'float', default: 300, float: true }],
    [['--soft-watchdog-timeout'], { type: 'float', float: true }],
    [['--dist-timeout'], { type: 'int' }],
    [['--download-dir'], {}],
    [['--base-gpu-id'], { type: 'int', default: 0 }],
    [['--gpu-id-step'], { type: 'int', default: 1 }],
    [['--sleep-on-idle'], { action: 'store_true' }],
    // Logging
    [['--log-level'], { default: 'info' }],
    [['--log-level-http'], {}],
    [['--log-requests'], { action: 'store_true' }],
    [['--log-requests-level'], { type: 'int', default: 2, choices: [0, 1, 2, 3] }],
    [['--crash-dump-folder'], {}],
    [['--show-time-cost'], { action: 'store_true' }],
    [['--enable-metrics'], { action: 'store_true' }],
    [['--enable-metrics-for-all-schedulers'], { action: 'store_true' }],
    [['--decode-log-interval'], { type: 'int', default: 40 }],
    [['--enable-request-time-stats-logging'], { action: 'store_true' }],
    // API related
    [['--api-key'], {}],
    [['--admin-api-key'], {}],
    [['--served-model-name'], {}],
    [['--weight-version'], { default: 'default' }],
    [['--chat-template'], {}],
    [['--completion-template'], {}],
    [['--file-storage-path'], { default: 'sglang_storage' }],
    [['--enable-cache-report'], { action: 'store_true' }],
    [['--reasoning-parser'], { choices: REASON_F }],
    [['--tool-call-parser'], { choices: TOOL_F }],
    // Data parallelism
    par('dp_size', '--data-parallel-size', '--dp-size'),
    [
      ['--load-balance-method'],
      { default: 'round_robin', choices: ['round_robin', 'shortest_queue', 'minimum_tokens'] },
    ],
    // Multi-node distributed serving
    [['--dist-init-addr', '--nccl-init-addr'], { dest: 'dist_init_addr' }],
    [['--nnodes'], { type: 'int', default: 1 }],
    [['--node-rank'], { type: 'int', default: 0 }],
    // Model override args
    [['--json-model-override-args'], { default: '{}' }],
    [['--preferred-sampling-params'], {}],
    // LoRA
    [['--enable-lora'], { action: 'store_true', default: null }],
    [['--max-lora-rank'], { type: 'int' }],
    [['--lora-paths'], { nargs: '*' }],
    // Kernel backends
    [['--attention-backend'], { choices: j ? ATTN_J : ATTN_F }],
    [['--prefill-attention-backend'], { choices: j ? ATTN_J : ATTN_F }],
    [['--decode-attention-backend'], { choices: j ? ATTN_J : ATTN_F }],
    [['--sampling-backend'], { choices: ['flashinfer', 'pytorch', 'ascend'] }],
    [['--grammar-backend'], { choices: ['xgrammar', 'outlines', 'llguidance', 'none'] }],
    [
      ['--fp8-gemm-backend'],
      { dest: 'fp8_gemm_runner_backend', default: 'auto', choices: j ? FP8_GEMM_J : FP8_GEMM_F },
    ],
    [
      ['--fp4-gemm-backend'],
      {
        dest: 'fp4_gemm_runner_backend',
        default: j ? 'auto' : 'flashinfer_cutlass',
        choices: j ? FP4_GEMM_J : FP4_GEMM_F,
      },
    ],
    // Speculative decoding
    [['--speculative-algorithm'], { choices: ['EAGLE', 'EAGLE3', 'NEXTN', 'STANDALONE', 'NGRAM'] }],
    [['--speculative-draft-model-path', '--speculative-draft-model'], { dest: 'speculative_draft_model_path' }],
    [['--speculative-draft-model-revision'], {}],
    [['--speculative-num-steps'], { type: 'int' }],
    [['--speculative-eagle-topk'], { type: 'int' }],
    [['--speculative-num-draft-tokens'], { type: 'int' }],
    [['--speculative-accept-threshold-single'], { type: 'float', default: 1.0, float: true }],
    [['--speculative-accept-threshold-acc'], { type: 'float', default: 1.0, float: true }],
    [['--speculative-token-map'], {}],
    [['--speculative-attention-mode'], { default: 'prefill', choices: ['prefill', 'decode'] }],
    // Expert parallelism
    j
      ? [['--ep-size', '--expert-parallel-size', '--ep'], { dest: 'ep_size', type: 'int', default: 1 }]
      : [['--expert-parallel-size', '--ep-size', '--ep'], { field: 'ep_size', type: 'int', default: 1 }],
    [['--moe-a2a-backend'], { default: 'none', choices: ['none', 'deepep', 'mooncake', 'ascend_fuseep'] }],
    [['--moe-runner-backend'], { default: 'auto', choices: j ? MOE_J : MOE_F }],
    [['--enable-flashinfer-allreduce-fusion'], { action: 'store_true' }],
    [['--deepep-mode'], { default: 'auto', choices: ['normal', 'low_latency', 'auto'] }],
    [['--ep-num-redundant-experts'], { type: 'int', default: 0 }],
    [['--enable-eplb'], { action: 'store_true' }],
    // Optimization / debug options
    [['--disable-radix-cache'], { action: 'store_true' }],
    [['--cuda-graph-max-bs'], { type: 'int' }],
    [['--cuda-graph-bs'], { type: 'int', nargs: '+' }],
    [['--disable-cuda-graph'], { action: 'store_true' }],
    [['--disable-cuda-graph-padding'], { action: 'store_true' }],
    [['--enable-profile-cuda-graph'], { action: 'store_true' }],
    [['--enable-cudagraph-gc'], { action: 'store_true' }],
    [['--enable-nccl-nvls'], { action: 'store_true' }],
    [['--enable-symm-mem'], { action: 'store_true' }],
    [['--enable-tokenizer-batch-encode'], { action: 'store_true' }],
    [['--disable-outlines-disk-cache'], { action: 'store_true' }],
    [['--disable-custom-all-reduce'], { action: 'store_true' }],
    [['--enable-mscclpp'], { action: 'store_true' }],
    [['--disable-overlap-schedule'], { action: 'store_true' }],
    [['--enable-mixed-chunk'], { action: 'store_true' }],
    [['--enable-dp-attention'], { action: 'store_true' }],
    [['--enable-dp-lm-head'], { action: 'store_true' }],
    [['--enable-two-batch-overlap'], { action: 'store_true' }],
    [['--enable-torch-compile'], { action: 'store_true' }],
    [['--enable-piecewise-cuda-graph'], { action: 'store_true' }],
    [['--torch-compile-max-bs'], { type: 'int', default: 32 }],
    [['--torchao-config'], { default: '' }],
    [['--enable-nan-detection'], { action: 'store_true' }],
    [['--enable-p2p-check'], { action: 'store_true' }],
    [['--triton-attention-reduce-in-fp32'], { action: 'store_true' }],
    [['--triton-attention-num-kv-splits'], { type: 'int', default: 8 }],
    [['--num-continuous-decode-steps'], { type: 'int', default: 1 }],
    [['--delete-ckpt-after-loading'], { action: 'store_true' }],
    [['--enable-memory-saver'], { action: 'store_true' }],
    [['--allow-auto-truncate'], { action: 'store_true' }],
    [['--enable-custom-logit-processor'], { action: 'store_true' }],
    [['--flashinfer-mla-disable-ragged'], { action: 'store_true' }],
    [['--disable-shared-experts-fusion'], { action: 'store_true' }],
    [['--disable-chunked-prefix-cache'], { action: 'store_true' }],
    [['--disable-fast-image-processor'], { action: 'store_true' }],
    [['--enable-return-hidden-states'], { action: 'store_true' }],
    [['--disable-flashinfer-autotune'], { action: 'store_true' }],
    [['--enable-deterministic-inference'], { action: 'store_true' }],
    // PD disaggregation
    [['--disaggregation-mode'], { default: 'null', choices: ['null', 'prefill', 'decode'] }],
    [['--disaggregation-transfer-backend'], { default: 'mooncake', choices: ['mooncake', 'nixl', 'ascend', 'fake'] }],
    // Config file (parser-only: not a ServerArgs field)
    [['--config'], { noField: true }],
  ];
  return rows;
}

/** Where each DSA/NSA backend flag lands, per flavour. */
export function backendRows(flavor) {
  if (flavor === 'j') {
    return [
      [['--dsa-prefill-backend'], { choices: DSA_J }],
      [['--dsa-decode-backend'], { choices: DSA_J }],
      [['--cuda-graph-max-bs-decode'], { type: 'int' }],
      [['--cuda-graph-backend-decode'], {}],
      [['--cuda-graph-backend-prefill'], {}],
    ];
  }
  return [
    [['--nsa-prefill-backend'], { choices: NSA_F }],
    [['--nsa-decode-backend'], { choices: NSA_F }],
  ];
}

/** The deprecated-flag warning SGLang [J] prints (arg_groups/argparse_actions.py, print_deprecated_warning). */
export function deprecationText(optionString, newFlag) {
  const replacement = newFlag ? ` Use '${newFlag}' instead.` : '';
  return `\x1b[1;33m'${optionString}' is deprecated and will be removed in a future release.${replacement}\x1b[0m`;
}

/**
 * STANDIN_EXTRA_CHOICES=`--flag=a,b;--other=c`: values appended to those flags' choices, as a SGLang release newer
 * than the bot's shipped table would take them (the bot must learn them from --help). An unknown or choice-less flag
 * is an error, so a typo in a test cannot pass silently.
 * @param {Array<[string[], object]>} rows
 * @param {string | undefined} spec
 */
function extraChoices(rows, spec) {
  if (!spec?.trim()) return rows;
  const extra = new Map();
  for (const part of spec.split(';').filter((p) => p.trim())) {
    const eq = part.indexOf('=');
    const flag = part.slice(0, eq).trim();
    if (eq < 0 || !flag.startsWith('--')) throw new Error(`STANDIN_EXTRA_CHOICES: '${part}' is not --flag=value,value`);
    extra.set(
      flag,
      part
        .slice(eq + 1)
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean),
    );
  }
  const out = rows.map(([opts, spec]) => {
    const add = extra.get(opts[0]);
    if (!add) return [opts, spec];
    if (!spec.choices) throw new Error(`STANDIN_EXTRA_CHOICES: ${opts[0]} takes no choices`);
    extra.delete(opts[0]);
    return [opts, { ...spec, choices: [...spec.choices, ...add] }];
  });
  if (extra.size > 0) throw new Error(`STANDIN_EXTRA_CHOICES: no flag ${[...extra.keys()].join(', ')}`);
  return out;
}

/**
 * Build the launch_server parser.
 * @param {'f'|'j'} flavor
 * @param {(msg: string) => void} warn called for deprecated aliases in the 'j' flavour
 * @returns {{parser: ArgumentParser, fields: Array<{field: string, dest: string, float: boolean}>}}
 */
export function buildParser(flavor, warn) {
  const parser = new ArgumentParser({ prog: 'launch_server.py' });
  const fields = [];
  const addRow = ([opts, spec]) => {
    const a = parser.add(opts, { ...spec, help: helpOf(opts, spec, flavor) });
    if (!spec.noField) fields.push({ field: spec.field ?? a.dest, dest: a.dest, float: !!spec.float });
    return a;
  };
  const rows = extraChoices(table(flavor), process.env.STANDIN_EXTRA_CHOICES);
  // The NSA/DSA backend flags sit with the attention backends upstream.
  const at = rows.findIndex(([o]) => o[0] === '--sampling-backend');
  rows.splice(at, 0, ...backendRows(flavor));
  for (const row of rows) {
    const [opts] = row;
    if (flavor === 'j' && opts[0] === '--cuda-graph-max-bs') {
      addRow([
        opts,
        {
          dest: 'cuda_graph_max_bs_decode',
          type: 'int',
          help: 'Deprecated. Use --cuda-graph-max-bs-decode instead.',
          onUse: (o) => warn(deprecationText(o, '--cuda-graph-max-bs-decode')),
        },
      ]);
      fields.pop();
      continue;
    }
    if (flavor === 'j' && opts[0] === '--disable-cuda-graph') {
      addRow([
        opts,
        {
          action: 'store_true',
          help: 'Deprecated. Use --cuda-graph-backend-{decode,prefill}=disabled instead.',
          onUse: (o) => warn(deprecationText(o, '--cuda-graph-backend-decode=disabled')),
        },
      ]);
      continue;
    }
    addRow(row);
  }
  if (flavor === 'j') {
    // Deprecated `--nsa-*` aliases: they store into the `dsa_*` fields and warn.
    for (const phase of ['prefill', 'decode']) {
      addRow([
        [`--nsa-${phase}-backend`],
        {
          dest: `dsa_${phase}_backend`,
          choices: DSA_J,
          help: `Deprecated. Use --dsa-${phase}-backend instead.`,
          onUse: (o) => warn(deprecationText(o, `--dsa-${phase}-backend`)),
        },
      ]);
      fields.pop();
    }
  }
  return { parser, fields };
}
