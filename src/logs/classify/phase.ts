// Where the server was when it crashed, by the phase rule of corpus/README.md in its written order (phaseByRule):
// 1 the milestones before the failure (parseMilestone's lines, folded by applyMilestone), 2 the frames of its
// tracebacks, 3 a class or message that happens at one point only, 4 unknown. Each step's data is a table here.

import type { Milestone } from '../milestones.ts';
import type { Anchor, Phase } from './types.ts';

/**
 * Literal text of every milestone line that can change the phase (except the frequent ones below) and of the
 * traceback header. Each is a substring of every line the matching rule in milestones.ts accepts, so the
 * pre-filter never hides a milestone.
 */
export const STRUCTURE_ANCHORS: Anchor[] = [
  { text: 'ServerArgs(', ci: false },
  // vLLM's, transformers' and TensorRT-LLM's words for the same steps (milestones.ts); few and short, since every
  // byte of a log is scanned for them
  { text: 'non-default args', ci: false },
  { text: 'to load model', ci: false },
  { text: 'Loading drafter model', ci: false },
  { text: 'loading took', ci: false },
  // every weight-load progress bar (`Loading <what> weights <how>: N%`) and `Loading weights took`
  { text: 'weights', ci: false },
  { text: 'GPU blocks', ci: false },
  { text: 'KV cache size', ci: false },
  // `Capturing CUDA graphs`, `Capturing cudagraphs`, `Capturing the model for CUDA graphs`, `Graph capturing`
  { text: 'capturing', ci: true },
  { text: 'Init torch distributed begin', ci: false },
  // Ray's cluster joined (milestones.ts)
  { text: 'Connecting to existing Ray cluster', ci: false },
  { text: 'Started a local Ray instance', ci: false },
  // NCCL's communicator set-up (milestones.ts)
  { text: 'NCCL INFO Bootstrap', ci: false },
  { text: 'NCCL INFO NET/', ci: false },
  { text: 'NCCL INFO Using network', ci: false },
  { text: 'NCCL version', ci: false },
  { text: 'Init COMPLETE', ci: false },
  { text: 'Init START', ci: false },
  { text: 'ncclCommInitRank', ci: false },
  { text: 'Load weight begin', ci: false },
  { text: 'checkpoint shards:', ci: false },
  { text: 'loading shards:', ci: false },
  { text: 'Fastsafetensor loader:', ci: false },
  { text: 'Load weight end', ci: false },
  { text: 'KV Cache is allocated', ci: false },
  { text: 'Memory pool end', ci: false },
  { text: 'graph begin', ci: true },
  { text: 'graph end', ci: true },
  { text: 'max_total_num_tokens=', ci: false },
  { text: 'Uvicorn running on', ci: false },
  { text: 'Application startup complete', ci: false },
  { text: 'fired up and ready to roll', ci: false },
  { text: ': Connected', ci: false },
  { text: 'Service at ', ci: false },
  { text: 'Starting shard', ci: false },
  { text: 'safetensors files', ci: false },
  { text: 'Available KV cache memory', ci: false },
  { text: 'Memory profiling takes', ci: false },
  { text: 'KV self size', ci: false },
  { text: 'KV buffer size', ci: false },
  { text: 'Warming up model', ci: false },
  { text: 'init engine (profile', ci: false },
  { text: 'Shutting down', ci: false },
  // `Waiting for application shutdown.`, `Application shutdown complete.`
  { text: 'application shutdown', ci: true },
  { text: 'Finished server process', ci: false },
  { text: 'SIGTERM received', ci: false },
  { text: 'Gracefully exiting', ci: false },
  { text: 'Traceback (most recent call last)', ci: false },
  // Structure the traceback reader needs even when the excerpt starts mid-traceback: frames, exception lines,
  // C++ exceptions. Case matters: `Error` is an exception name's ending, not a log level.
  { text: 'File "', ci: false },
  // a frame whose start the excerpt cut off: `vllm/engine/arg_utils.py", line 963, in create_model_config`
  { text: '", line ', ci: false },
  // IPython 8's frames (`File ~/x/cache_engine.py:64, in f(...)`) and JupyterLab's copy of them with the path as a
  // Markdown link (`File [~/x/cache_engine.py:64](http://...), in f(...)`): an excerpt can start at one, its header left out
  { text: 'File ~', ci: false },
  { text: 'File [', ci: false },
  { text: 'Error', ci: false },
  { text: 'Exception', ci: false },
  // a Ctrl-C's exception, printed alone by a process it stopped outside any traceback (engine.ts, interrupted)
  { text: 'KeyboardInterrupt', ci: false },
  { text: 'what():', ci: false },
];

export type FrequentKind = 'prefill' | 'decode' | 'access' | 'refused' | 'generated';

/**
 * Lines that come by the thousand in a running server. They only move the phase between prefill, decode and
 * runtime, so the fast scan keeps just the last one before each line it looks at (see `lastFrequent`).
 */
export const FREQUENT: { anchor: string; kind: FrequentKind; follows: RegExp }[] = [
  { anchor: 'Prefill batch', kind: 'prefill', follows: /[,.]/ },
  { anchor: 'Decode batch', kind: 'decode', follows: /[,.]/ },
  // uvicorn access log: `"POST /generate HTTP/1.1" 200 OK` is a request served; a request refused or failed (`500
  // Internal Server Error`, the warm-up request that failed) says the server answered, not that it was serving.
  { anchor: 'HTTP/1.1" ', kind: 'access', follows: /2/ },
  { anchor: 'HTTP/1.1" ', kind: 'refused', follows: /[013-9]/ },
  // vLLM's periodic engine stats (vllm/engine/metrics.py LoggingStatLogger, V1's vllm/v1/metrics/loggers.py: `Avg
  // prompt throughput: X tokens/s, Avg generation throughput: Y tokens/s, Running: N reqs, ...`): a generation
  // throughput of 1 token/s or more says the engine generated tokens in that interval, as a batch line does (a hung
  // engine logs 0.0 with its requests still running); the phase it leaves is `runtime`
  { anchor: 'Avg generation throughput: ', kind: 'generated', follows: /[1-9]/ },
  // vLLM's async engine logs each request it takes (vllm/engine/async_llm_engine.py, add_request: `Added request
  // cmpl-....`): the engine is serving
  { anchor: 'Added request ', kind: 'access', follows: /\S/ },
];

/** The last frequent milestone in `text[from, to)`, by position; `null` if none. */
export function lastFrequent(
  text: string,
  from = 0,
  to = text.length,
  only?: ReadonlySet<FrequentKind>,
): FrequentKind | null {
  const seg = from === 0 && to === text.length ? text : text.slice(from, to);
  let bestPos = -1;
  let best: FrequentKind | null = null;
  for (const f of FREQUENT) {
    if (only && !only.has(f.kind)) continue;
    let p = seg.length;
    for (;;) {
      p = seg.lastIndexOf(f.anchor, p - 1);
      if (p < 0 || p <= bestPos) break;
      if (f.follows.test(seg.charAt(p + f.anchor.length))) {
        bestPos = p;
        best = f.kind;
        break;
      }
    }
  }
  return best;
}

const ORDER: Record<Phase, number> = {
  unknown: 0,
  startup: 1,
  weight_load: 2,
  kv_alloc: 3,
  cuda_graph_capture: 4,
  warmup: 5,
  prefill: 6,
  decode: 6,
  runtime: 6,
  shutdown: 7,
};

export interface PhaseState {
  phase: Phase;
  ready: boolean;
  /** SGLang's scheduler reported ready (`max_total_num_tokens=`): its ready line is `fired up`, after its warm-up. */
  warmsUpAfterStart: boolean;
}

export function initialPhase(): PhaseState {
  return { phase: 'unknown', ready: false, warmsUpAfterStart: false };
}

// Startup phases only move forward: ranks print the same milestone at slightly different times, and a late
// "Load weight begin" from TP7 must not send the phase back from kv_alloc.
function advance(s: PhaseState, target: Phase): void {
  if (!s.ready && ORDER[target] > ORDER[s.phase]) s.phase = target;
}

/**
 * Rule 1 of the phase rule (corpus/README.md): the phase each milestone starts. `Load weight begin` and checkpoint
 * shards -> weight_load; from `Load weight end` up to the memory pool, the KV cache and `# GPU blocks` -> kv_alloc;
 * capture -> cuda_graph_capture; after capture, before the ready line -> warmup.
 */
const ADVANCE: Partial<Record<Milestone['kind'], Phase>> = {
  server_args: 'startup',
  server_start: 'startup',
  dist_init_begin: 'startup',
  weights_begin: 'weight_load',
  shards: 'weight_load',
  weights_end: 'kv_alloc',
  kv_allocated: 'kv_alloc',
  // vLLM sizes the KV cache after its memory profile (corpus/README.md, phase rule 1: `# GPU blocks` -> kv_alloc).
  kv_sized: 'kv_alloc',
  mem_pool_end: 'kv_alloc',
  graph_begin: 'cuda_graph_capture',
  // After capture the scheduler finishes init and the HTTP server starts its warm-up request.
  graph_end: 'warmup',
  scheduler_ready: 'warmup',
  uvicorn_running: 'warmup',
  warmup_begin: 'warmup',
};

/**
 * SGLang's capture progress bar (cuda_graph_runner.py: `Capturing batches (bs=32 avail_mem=10.30 GB):   0%|`): the
 * log is in capture even when its `Capture cuda graph begin` line was not copied. Phase only: the bar redraws once
 * per batch size, and a milestone would tell the attempt's face each time.
 */
export const CAPTURE_PROGRESS = /Capturing batches \(bs=/;

export function applyMilestone(s: PhaseState, m: Milestone): void {
  // A new launch appended to the same log: its first lines (its arguments, its server starting) after the last run got
  // ready or shut down, or its weights starting to load after the last run shut down (vLLM's `args: Namespace(...)` is
  // no milestone; its `Starting to load model` is the next one). A run that is serving can load weights again (a
  // weight update), so that alone does not start one then.
  const launch = m.kind === 'server_args' || m.kind === 'server_start';
  if ((launch && (s.phase === 'shutdown' || s.ready)) || (m.kind === 'weights_begin' && s.phase === 'shutdown')) {
    s.ready = false;
    s.phase = launch ? 'startup' : 'weight_load';
    return;
  }
  if (s.phase === 'shutdown') return;
  if (m.kind === 'scheduler_ready') s.warmsUpAfterStart = true;
  // uvicorn's `Application startup complete` is the ready line of a server whose app is ready when it starts
  // (vLLM's API server); SGLang's HTTP server sends its warm-up request once the app has started
  // (http_server.py `_wait_and_warmup`), so after its scheduler reported ready it is still warming up.
  if (m.kind === 'ready' || (m.kind === 'app_started' && !s.warmsUpAfterStart)) {
    s.ready = true;
    s.phase = 'runtime';
  } else if (m.kind === 'shutdown') {
    s.phase = 'shutdown';
  } else if (m.kind === 'prefill' || m.kind === 'decode') {
    applyFrequent(s, m.kind);
  } else {
    const target = ADVANCE[m.kind];
    if (target) advance(s, target);
  }
}

export function applyFrequent(s: PhaseState, kind: FrequentKind): void {
  if (s.phase === 'shutdown' || kind === 'refused') return;
  const runtimePhase: Phase = kind === 'access' || kind === 'generated' ? 'runtime' : kind;
  // Before the ready line these are the warm-up request; in a log that starts mid-run they are the real thing.
  if (!s.ready && ORDER[s.phase] >= ORDER.startup && ORDER[s.phase] <= ORDER.warmup) s.phase = 'warmup';
  else s.phase = runtimePhase;
}

export interface Frame {
  line: number;
  text: string;
  file: string;
  func: string;
  /** The source line shown under the frame (the call it was making), when the traceback printed one; wrappers off. */
  source?: string;
}

// Rule 2's data: init steps by the functions SGLang (and vLLM, whose engine code shows up in the same reports) run
// them in. The innermost frame that names one decides (initStep); the order below only settles a frame that names
// two.
interface Hint {
  phase: Phase;
  funcs: string[];
  file?: RegExp;
  /** The function's name read as words (`_allocate_kv_cache_tensors` -> allocate, kv, cache, tensors). */
  words?: (w: readonly string[]) => boolean;
  /** Functions (as words) of the hint's files that are no part of its step. */
  not?: (w: readonly string[]) => boolean;
}

const has = (w: readonly string[], ...any: string[]): boolean => any.some((x) => w.includes(x));

const HINTS: Hint[] = [
  // vLLM warms its JIT kernels up after capture and before it serves (vllm/model_executor/warmup/kernel_warmup.py,
  // kernel_warmup: deep_gemm_warmup, flashinfer_autotune), so the server's first request compiles nothing
  {
    phase: 'warmup',
    funcs: ['_wait_and_warmup', '_execute_server_warmup', 'warmup', 'warmup_model', 'kernel_warmup'],
    file: /model_executor[/\\]warmup[/\\]/,
  },
  {
    phase: 'cuda_graph_capture',
    funcs: [
      'init_cuda_graphs',
      'init_device_graphs',
      'init_all_cuda_graphs',
      'capture_one_batch_size',
      'capture',
      'capture_model',
      '_capture_cudagraphs',
      'capture_graph',
    ],
    // torch/cuda/graphs.py is PyTorch's capture API (torch.cuda.graph, CUDAGraph.capture_begin/capture_end): every
    // engine's capture runs through it. Engines name their own capture step `capture_cudagraph`, `_capture_graphs`.
    file: /cuda_graph_runner\.py$|cuda_graph\.py$|torch[/\\]cuda[/\\]graphs\.py$/,
    words: (w) => has(w, 'capture') && has(w, 'graph', 'graphs', 'cudagraph', 'cudagraphs'),
    // the same files run the captured graphs (CUDAGraph.replay, the runner's replay): that is serving, not capture
    not: (w) => has(w, 'replay'),
  },
  {
    phase: 'kv_alloc',
    funcs: [
      'init_memory_pool',
      'profile_max_num_token',
      'init_kv_cache',
      'determine_available_memory',
      'determine_num_available_blocks',
      'profile_run',
      'initialize_kv_cache',
      '_initialize_kv_caches',
      'initialize_cache',
      '_init_cache',
      'get_kv_cache_spec',
    ],
    // A step that sets up the KV cache in any engine's words: `initialize_kv_cache_tensors`, `_allocate_kv_cache_tensors`,
    // SGLang's scheduler building its memory pools and the radix cache over them (`init_memory_pool_and_cache`).
    words: (w) =>
      ((has(w, 'kv') && has(w, 'cache')) ||
        (has(w, 'cache') && has(w, 'blocks')) ||
        (has(w, 'memory') && has(w, 'pool'))) &&
      has(w, 'init', 'initialize', 'allocate', 'alloc', 'profile', 'determine', 'reserve'),
  },
  {
    phase: 'weight_load',
    // Not `from_pretrained`: transformers loads configs and tokenizers with it too, before any weight is read. Not
    // `get_model` by its name alone: SGLang's and vLLM's (model_loader/__init__.py) are matched by their file, while
    // a serving framework's `get_model` hands out a model that is already loaded (or names the model class to use).
    // transformers' from_pretrained reads the weights in _load_pretrained_model and, for a model built on the meta
    // device, _load_state_dict_into_meta_model, which moves each tensor onto its device with accelerate's
    // set_module_tensor_to_device (transformers/modeling_utils.py, accelerate/utils/modeling.py; accelerate's
    // load_checkpoint_in_model does the same for its own loading): the weights being loaded.
    funcs: [
      'load_model',
      'load_weights',
      'load_weights_and_postprocess',
      '_load_pretrained_model',
      '_load_state_dict_into_meta_model',
      'set_module_tensor_to_device',
      'load_checkpoint_in_model',
    ],
    file: /\/model_loader\/|weight_utils\.py$/,
    // The tokenizer is read when the model is (corpus/README.md's rule 3): `get_tokenizer`, `get_cached_tokenizer`,
    // `init_tokenizer_from_configs`, SGLang's and vLLM's steps that load it.
    words: (w) => has(w, 'tokenizer') && has(w, 'get', 'init', 'load'),
  },
  {
    // transformers' tokenizer loading, PreTrainedTokenizerBase.from_pretrained -> _from_pretrained
    // (tokenization_utils_base.py), which reads the tokenizer's files and constructs it: the tokenizer the phase rule
    // reads as loaded with the model (weight_load). Not its other functions (encode, __call__), which run on requests.
    phase: 'weight_load',
    funcs: [],
    file: /(^|[/\\])tokenization_utils(?:_base|_fast)?\.py$/,
    not: (w) => !has(w, 'pretrained'),
  },
  {
    phase: 'startup',
    funcs: [
      'init_torch_distributed',
      'init_distributed_environment',
      'prepare_server_args',
      'init_device',
      // a worker binding its device (torch.cuda.set_device, torch_npu's set_device, the platforms' own set_device)
      'set_device',
      'init_worker_distributed_environment',
      'ensure_model_parallel_initialized',
      'initialize_model_parallel',
      // torch.distributed's own entry point: the process group is created before anything is loaded.
      'init_process_group',
      // the helper init_process_group and new_group create each process group in (its backend, NCCL or Gloo, and
      // the store rendezvous it waits on: torch/distributed/distributed_c10d.py); engines create their groups while
      // their workers start (vLLM's init_distributed_environment / initialize_model_parallel)
      '_new_process_group_helper',
    ],
    // PyTorch's rendezvous (torch/distributed/rendezvous.py, elastic/rendezvous/) is how ranks find each other, before
    // anything is loaded.
    file: /(server_args|launch_server|arg_utils)\.py$|distributed[/\\](?:elastic[/\\])?rendezvous/,
    // The server or its engine being started: `wait_for_engine_startup`, `launch_core_engines`, `launch_server`;
    // its arguments parsed (`parse_args`, transformers' `parse_args_into_dataclasses`) or built (`EngineArgs(...)`,
    // `ServerArgs(...)`, the call an excerpt stopped at).
    words: (w) =>
      has(w, 'startup', 'rendezvous') ||
      (has(w, 'parse') && has(w, 'args', 'arguments')) ||
      // (the classes, not `from_engine_args`: that builds the whole engine)
      (w[w.length - 1] === 'args' && w[0] !== 'from' && has(w, 'engine', 'server')) ||
      (w[0] === 'launch' && has(w, 'server', 'engine', 'engines', 'subprocesses')) ||
      // `_init_distributed_environment`, `init_process_groups`: the ranks joining each other
      (has(w, 'init', 'initialize') && has(w, 'distributed', 'dist')) ||
      // a communication library's communicator or agent set up between the ranks: NCCL's `ncclCommInitRank`,
      // `init_mscclpp_comm`, `_initialize_nixl` (vLLM creates them when its workers start)
      (has(w, 'init', 'initialize') && has(w, 'comm', 'communicator', 'nccl', 'mscclpp', 'nixl')) ||
      // the engine's executor and its workers being started (`_init_executor`, `_init_workers_ray`, `init_worker`)
      (has(w, 'init', 'initialize') && has(w, 'executor', 'worker', 'workers')) ||
      // the Ray cluster the ranks will run on being joined and its GPUs reserved: vLLM's `initialize_ray_cluster`
      // (vllm/executor/ray_utils.py: ray.init, then a placement group for the world size)
      (has(w, 'init', 'initialize') && has(w, 'ray') && has(w, 'cluster')),
  },
  {
    phase: 'startup',
    // vLLM's worker checks its device while it initialises it (worker.py `init_device` calls it).
    funcs: ['_check_if_gpu_supports_dtype'],
    // Constructing DistributedDataParallel broadcasts and verifies the parameters across the ranks: the process
    // group's first collectives, before training or serving starts (torch/nn/parallel/distributed.py).
    file: /torch[/\\]nn[/\\]parallel[/\\]distributed\.py$/,
  },
];

// Forward passes at serving time, read after every init step. Rule 2 names the pass by its forward (`forward_decode`,
// `forward_extend`); SGLang's scheduler processes the pass's output right after it (`process_batch_result_decode`,
// where the overlap scheduler synchronises with the decode it launched and its asynchronous errors surface): the same
// pass.
// SGLang's 2024 RadixAttention named each pass's attention by it (python/sglang/srt/layers/radix_attention.py:
// `extend_forward`, `prefill_forward_flashinfer`, `decode_forward_triton`, ...).
const RUNTIME_HINTS: Hint[] = [
  {
    phase: 'decode',
    funcs: [
      'forward_decode',
      'forward_decode_batch',
      'process_batch_result_decode',
      'decode_forward',
      'decode_forward_flashinfer',
      'decode_forward_triton',
    ],
  },
  {
    phase: 'prefill',
    funcs: [
      'forward_extend',
      'forward_prefill_batch',
      'process_batch_result_prefill',
      'extend_forward',
      'extend_forward_flashinfer',
      'extend_forward_triton',
      'prefill_forward_flashinfer',
      'prefill_forward_triton',
    ],
  },
  {
    phase: 'runtime',
    funcs: [
      'run_batch',
      'event_loop_normal',
      'event_loop_overlap',
      'event_loop_pp',
      'forward_batch_generation',
      'get_model_worker_batch',
      'process_input_requests',
      'handle_generate_request',
      'generate_request',
      'execute_model',
      'execute_model_spmd',
      'step',
      'step_async',
      'engine_step',
      // vLLM V1's Scheduler.schedule (v1/core/sched/scheduler.py), which EngineCore.step calls for every step
      'schedule',
      'run_engine_loop',
      // the done-callbacks of vLLM V0's serving loop (run_engine_loop, started by the first request), which raise
      // AsyncEngineDeadError when it ends: `_raise_exception_on_finish` (vllm/engine/async_llm_engine.py, before 0.4;
      // the engines forked from it keep it, aphrodite's async_aphrodite.py), `_log_task_completion` after it
      '_raise_exception_on_finish',
      '_log_task_completion',
      'output_handler',
      'generate',
      'sample',
      '_sample',
      // the methods of vLLM's tool-call and reasoning parsers (ToolParser, entrypoints/openai/tool_parsers/
      // abstract_tool_parser.py; ReasoningParser, vllm/reasoning/abs_reasoning_parsers.py), run on each response and
      // implemented by plugins loaded from anywhere (--tool-parser-plugin), so named by the interface, not the path
      'extract_tool_calls',
      'extract_tool_calls_streaming',
      'extract_reasoning_content',
      'extract_reasoning_content_streaming',
      // SGLang's PD disaggregation: the prefill server's KV sender thread takes each request's KV chunks from its queue
      // and sends them to the decode server (sglang/srt/disaggregation/mooncake/conn.py and nixl/conn.py,
      // `transfer_worker`), so it runs only while requests are served
      'transfer_worker',
    ],
  },
  {
    // vLLM's `dump_input_when_exception` (worker/model_runner_base.py) decorates the model runners' `execute_model`
    // and nothing else: its `_wrapper` frame is that call, the rule's `execute_model`.
    phase: 'runtime',
    funcs: [],
    file: /(^|[/\\])model_runner_base\.py$/,
    not: (w) => w.length !== 1 || w[0] !== 'wrapper',
  },
  {
    // vLLM V1's model runner hands each step's sampled tokens back through an asynchronous copy it waits on when the
    // engine core takes the step's output (vllm/v1/worker/gpu/async_utils.py, AsyncOutput.get_output): a step run.
    phase: 'runtime',
    funcs: [],
    file: /v1[/\\]worker[/\\](?:gpu[/\\])?async_utils\.py$/,
  },
  {
    // vLLM V1's input processor turns one request's prompt and parameters into the engine's request (engine/
    // processor.py, later input_processor.py: `process_inputs`, called by LLMEngine's and AsyncLLM's `add_request`),
    // validating it (`_validate_model_inputs`): request handling. Not its construction, at the engine's start.
    phase: 'runtime',
    funcs: [],
    file: /v1[/\\]engine[/\\](?:input_)?processor\.py$/,
    not: (w) => w.includes('init'),
  },
];

// Words that name a serving step in any engine's function names (SGLang, vLLM, TensorRT-LLM, transformers'
// generate, an app's own loop): sampling, generation, inference, the scheduler's loop and step, request handling.
// Only read after every init step above had its chance, so `capture_one_batch_size` stays capture.
const SERVING_WORDS = new Set([
  'sample',
  'sampling',
  'sampler',
  'generate',
  'generation',
  'inference',
  'infer',
  'loop',
  'step',
  'request',
  'requests',
  'batch',
]);
// A web framework's request handling (starlette, fastapi, aiohttp's server) runs only while the server serves, as do
// vLLM's OpenAI-compatible request handlers (`serving_chat.py`, `chat_completion/serving.py`) and the tool-call parsers
// they run on a response (`tool_parsers/`).
const SERVING_FILE =
  /(^|[/\\])(sampler|sampling|generation_utils)\.py$|(^|[/\\])(starlette|fastapi)[/\\]|aiohttp[/\\]web|entrypoints[/\\]openai[/\\](?:serving\w*\.py$|\w+[/\\]serving\.py$|tool_parsers[/\\])/;

/** `_executor_loop_overlap` -> executor, loop, overlap; `GenerationMixin._sample` -> generation, mixin, sample. */
function words(func: string): string[] {
  return func
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

// A test program's functions (`test_loop`, `test_batch_decode`) drive kernels directly, no server behind them.
const TEST_FILE = /(^|[/\\])(tests?[/\\]|test_[^/\\]*\.py$)/;
// Code whose function names use serving words for something else: HTTP clients and the Hugging Face hub client make
// requests (`_request_wrapper` downloads a file), PyTorch's compilers step through bytecode or graphs
// (`InstructionTranslator.step` in torch/_dynamo), a command line's functions are named after its commands (SGLang's
// and vLLM's `cli/`: `generate`, `serve`), and a native stack PyTorch symbolised (`File "<unknown>", line 0`) names
// C and C++ functions (`swap_blocks_batch`), not an engine's steps.
const NOT_SERVING =
  /(^|[/\\])(requests|urllib3|httpx|httpcore|aiohttp|huggingface_hub|_dynamo|_inductor|fx|triton[/\\]compiler|cli)[/\\]|^<unknown>$/;

function servingFrame(f: Frame): boolean {
  if (TEST_FILE.test(f.file)) return false;
  // The function's own name: in `uvloop.loop.Loop.run_until_complete` the loop is asyncio's, not a scheduler's.
  const w = words(f.func.slice(f.func.lastIndexOf('.') + 1));
  if (w.includes('test')) return false;
  return SERVING_FILE.test(f.file) || w.some((x) => SERVING_WORDS.has(x));
}

function hinted(frames: readonly Frame[], hints: readonly Hint[]): Phase | null {
  for (const h of hints) {
    const named = (f: Frame) => {
      const w = words(f.func.slice(f.func.lastIndexOf('.') + 1));
      if (h.not?.(w)) return false;
      return h.funcs.includes(f.func) || (h.file?.test(f.file) ?? false) || (h.words?.(w) ?? false);
    };
    if (frames.some(named)) return h.phase;
  }
  return null;
}

// The call a source line makes: `return executor(*args)`, `x = self.f(`, `await g(`, `_init_distributed_environment(`.
const CALL = /^\s*(?:return\s+|await\s+|[\w.[\], ]+?=\s*(?:await\s+)?)?(?:[\w]+\.)*(\w+)\(/;

// Frames that only pass a call on to the function the frame before them called: torch's decorators
// (torch/utils/_contextlib.py decorate_context, `return func(*args, **kwargs)`, around every @torch.no_grad() and
// @torch.inference_mode() method such as the servers' event loops) and nn.Module's __call__ (torch/nn/modules/module.py
// _wrapped_call_impl / _call_impl, `return forward_call(*args, **kwargs)`).
const PASS_ON = /torch[/\\](?:utils[/\\]_contextlib|nn[/\\]modules[/\\]module)\.py$/;

/**
 * The frames, and when the excerpt stops after the innermost frame's source line, the function that line calls: the
 * frame that would have come next (`_init_distributed_environment(...)` under `init_model`). Frames that only pass
 * the call on (PASS_ON) say nothing of it: the call is the one the frame before them made (`scheduler.event_loop_normal()`
 * under run_scheduler_process, then torch's decorate_context, cut there).
 */
function withCallee(frames: readonly Frame[]): readonly Frame[] {
  let at = frames.length - 1;
  while (at > 0 && PASS_ON.test((frames[at] as Frame).file)) at--;
  const last = frames[at];
  const callee = last?.source !== undefined ? CALL.exec(last.source)?.[1] : undefined;
  return callee ? [...frames, { line: last?.line ?? 0, text: '', file: '', func: callee }] : frames;
}

/** The init step one stack names, the innermost first (each frame against every init step), or null. */
function initStep(frames: readonly Frame[]): Phase | null {
  for (let i = frames.length - 1; i >= 0; i--) {
    const p = hinted([frames[i] as Frame], HINTS);
    if (p) return p;
  }
  return null;
}

/** The pass that failed while serving (`forward_decode`, `forward_extend`, serving in any engine's words), or null. */
function servingPass(frames: readonly Frame[]): Phase | null {
  const serving = frames.filter((f) => !NOT_SERVING.test(f.file));
  return hinted(serving, RUNTIME_HINTS) ?? (serving.some(servingFrame) ? 'runtime' : null);
}

/** A frame's file name without its directories, POSIX or Windows (`C:\\x\\vllm\\worker.py`): no regex, a path can be long. */
export function fileBase(file: string): string {
  return file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
}

/**
 * A module of an engine's core, executor, scheduler or workers (`engine/core.py`, `llm_engine.py`,
 * `multiproc_executor.py`, `tp_worker.py`, `scheduler.py`), whose constructors start them. Read from the file's base
 * name without a regex: a frame's path can be as long as its line.
 */
function enginePart(file: string): boolean {
  const base = fileBase(file);
  if (!base.endsWith('.py')) return false;
  const name = base.slice(0, -'.py'.length);
  if (name === 'core') return /engine[/\\]core\.py$/.test(file);
  // (vLLM V0's AsyncLLMEngine, engine/async_llm_engine.py, builds its LLMEngine in its constructor, `_init_engine`)
  return name.endsWith('llm_engine') || name === 'scheduler' || name.endsWith('executor') || name.includes('worker');
}

/**
 * The excerpt stops in the construction of an engine's core, executor, scheduler or worker (`__init__`, or `init` with
 * its dunders lost in a paste): the engine was being started. Read at the innermost frame shown only: a frame inside
 * it that names no step (the excerpt cut further in) may be part of any step.
 */
function constructing(f: Frame | undefined): boolean {
  return f !== undefined && (f.func === '__init__' || f.func === 'init') && enginePart(f.file);
}

/**
 * vLLM's multiprocessing workers run each call of their executor as `run_method(worker, method, args, kwargs)` and
 * report its failure as `Exception in worker <name> while processing method <method>.`, the traceback after it
 * (vllm/executor/multiproc_worker_utils.py `_run_worker_process`, `logger.exception`). So `<method>` is the worker
 * method the traceback's next frame runs (`init_device`, `load_model`, `start_worker_execution_loop`), often the
 * frame an excerpt cut; in the record it stands for that frame. Its Ray workers do the same in
 * `WorkerWrapperBase.execute_method` (vllm/worker/worker_base.py: `Error executing method 'init_device'. This might
 * cause deadlock in distributed execution.`, logged with the traceback; older releases print the name unquoted). An
 * empty list when the record names none.
 */
const WORKER_METHOD = /while processing method (\w+)|Error executing method '?(\w+)/;

export function reportedCall(record: string | undefined): Frame[] {
  const m = record === undefined ? null : WORKER_METHOD.exec(record);
  const func = m?.[1] ?? m?.[2];
  return func ? [{ line: 0, text: '', file: '', func }] : [];
}

/**
 * Rule 2 of the phase rule (corpus/README.md): the phase one stack's frames name. The innermost init step wins (an
 * engine part being constructed, when nothing inside it is shown); else the pass that failed while serving. Null when
 * the frames say nothing.
 */
export function phaseFromFrames(given: readonly Frame[]): Phase | null {
  const frames = withCallee(given);
  return initStep(frames) ?? (constructing(given[given.length - 1]) ? 'startup' : null) ?? servingPass(frames);
}

/** What the phase rule reads, one input per step. */
export interface PhaseInputs {
  /** Rule 1: where the milestones before the failure had brought the log (`unknown`: the excerpt shows none). */
  milestones: Phase;
  /** Rule 2: the failure's stacks, its own traceback first, then the others of the same failure and a hang's dump. */
  stacks: readonly (readonly Frame[])[];
  /** Rule 3: the phase of the failure's class (or message) when it happens at one point only. */
  onePoint?: Phase | undefined;
}

// vLLM V1's API server pulls the engine core's outputs in AsyncLLM.output_handler (vllm/v1/engine/async_llm.py), in
// another process than the engine core: when the core dies it fails too (`AsyncLLM output_handler failed.`, then
// EngineDeadError). As the failure's own traceback it is the server failing while it served; as another traceback
// after the core's own, it is that failure's echo, and names no step of the core's.
const ECHO = 'output_handler';
/** True when another traceback names `runtime` only by the API server's output handler (ECHO). */
function echoOnly(s: readonly Frame[], p: Phase): boolean {
  if (p !== 'runtime' || !s.some((f) => f.func === ECHO)) return false;
  return servingPass(withCallee(s.filter((f) => f.func !== ECHO))) === null;
}

const PASSES: ReadonlySet<Phase> = new Set(['prefill', 'decode', 'runtime']);

/**
 * The phase rule of corpus/README.md in its written order, first that decides wins: 1 the milestones before the
 * failure, 2 the frames, 3 a class (or message) that happens at one point only, 4 `unknown`. While serving, the
 * serving lines say only which pass ran last (`Decode batch`); the failed traceback's own frames, when they name
 * its pass (`forward_extend` for a new request's prefill), say which one failed.
 */
export function phaseByRule(i: PhaseInputs): Phase {
  const [own = [], ...others] = i.stacks;
  if (i.milestones !== 'unknown') {
    if (!PASSES.has(i.milestones)) return i.milestones;
    const pass = servingPass(withCallee(own));
    return pass === 'prefill' || pass === 'decode' ? pass : i.milestones;
  }
  const mine = phaseFromFrames(own);
  if (mine) return mine;
  for (const s of others) {
    const p = phaseFromFrames(s);
    if (p && !echoOnly(s, p)) return p;
  }
  return i.onePoint ?? 'unknown';
}
