// What an operator may set in a launch by default (access.operator_may_set), and what no allow-list may let through:
// the config's defaults and its check. The rule itself is applied at launch by src/access/operator.ts.
import { matchesPatternList } from '../glob.ts';

/**
 * The default: SGLang's, NCCL's, CUDA's, PyTorch's and Hugging Face's own tuning variables, minus those of them that
 * load code (a shared library, a Python package, remote model code from another hub).
 */
export const DEFAULT_OPERATOR_ENV: readonly string[] = [
  'SGLANG_*',
  'SGL_*',
  'NCCL_*',
  'CUDA_*',
  'TORCH_*',
  'PYTORCH_CUDA_ALLOC_CONF',
  'HF_*',
  'TRANSFORMERS_*',
  'TOKENIZERS_PARALLELISM',
  'OMP_NUM_THREADS',
  '!SGLANG_EXTERNAL_*',
  '!NCCL_*_PLUGIN',
  '!CUDA_INJECTION*',
  '!HF_ENDPOINT',
  '!HF_MODULES_CACHE',
  '!TORCH_EXTENSIONS_DIR',
];

/** The default: SGLang's scheduling, parallelism, memory, CUDA-graph, speculative and logging knobs. */
export const DEFAULT_OPERATOR_ARGS: readonly string[] = [
  '--max-running-requests',
  '--max-total-tokens',
  '--max-prefill-tokens',
  '--schedule-policy',
  '--schedule-conservativeness',
  '--page-size',
  '--dtype',
  '--cuda-graph-bs',
  '--disable-radix-cache',
  '--disable-overlap-schedule',
  '--disable-custom-all-reduce',
  '--disable-chunked-prefix-cache',
  '--enable-torch-compile',
  '--torch-compile-max-bs',
  '--enable-dp-attention',
  '--dp-size',
  '--data-parallel-size',
  '--ep-size',
  '--expert-parallel-size',
  '--ep',
  '--pp-size',
  '--moe-a2a-backend',
  '--deepep-mode',
  '--enable-two-batch-overlap',
  '--enable-mixed-chunk',
  '--enable-p2p-check',
  '--enable-deterministic-inference',
  '--num-continuous-decode-steps',
  '--stream-interval',
  '--random-seed',
  '--sampling-backend',
  '--grammar-backend',
  '--speculative-algorithm',
  '--speculative-num-steps',
  '--speculative-eagle-topk',
  '--speculative-num-draft-tokens',
  '--watchdog-timeout',
  '--soft-watchdog-timeout',
  '--dist-timeout',
  '--skip-server-warmup',
  '--enable-metrics',
  '--log-level',
  '--log-level-http',
  '--decode-log-interval',
  '--api-key',
];

/**
 * Variables that make the server run code of the setter's choosing (a preloaded library, a Python path or package,
 * an NCCL or CUDA plugin, model code from another hub). No operator allow-list may let one through: the config is
 * refused (src/config/schema.ts). An admin may still set them.
 */
export const CODE_ENV: readonly string[] = [
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONSTARTUP',
  'PATH',
  'BASH_ENV',
  'SGLANG_EXTERNAL_MODEL_PACKAGE',
  'SGLANG_EXTERNAL_MM_PROCESSOR_PACKAGE',
  'NCCL_NET_PLUGIN',
  'NCCL_TUNER_PLUGIN',
  'NCCL_PROFILER_PLUGIN',
  'CUDA_INJECTION64_PATH',
  'HF_ENDPOINT',
  'HF_MODULES_CACHE',
];

/**
 * SGLang flags that pick the code or weights that run (remote model code, a custom weight loader, pickled logit
 * processors from clients, another model, a config file that sets any of these). Same rule as CODE_ENV.
 */
export const CODE_ARGS: readonly string[] = [
  '--trust-remote-code',
  '--model-path',
  '--model',
  '--tokenizer-path',
  '--config',
  '--custom-weight-loader',
  '--enable-custom-logit-processor',
  '--json-model-override-args',
  '--model-loader-extra-config',
  '--speculative-draft-model-path',
  '--hicache-storage-backend-extra-config',
];

/** Entries of CODE_ENV / CODE_ARGS a list would let through (a config check). */
export function codePathsAllowed(list: readonly string[], code: readonly string[]): string[] {
  return code.filter((name) => matchesPatternList(list, name));
}
