// SGLang startup milestones, recognised from its real log lines (docs/sglang.md §3), and the same steps in the words
// of vLLM, transformers and TensorRT-LLM, whose logs the classifier reads too. One line at a time, pure; the tracker
// in src/lifecycle decides what a milestone means for an attempt.

export type Milestone =
  | { kind: 'server_args' }
  /** A launcher started the model server's process (TGI's `Starting shard`). */
  | { kind: 'server_start' }
  | { kind: 'dist_init_begin' }
  | { kind: 'weights_begin' }
  | { kind: 'shards'; done: number; total: number; percent: number }
  | { kind: 'weights_end'; memUsageGb?: number }
  | { kind: 'kv_allocated'; tokens: number }
  /** The KV cache was sized (vLLM's `# GPU blocks: N` / `GPU KV cache size: N tokens`). */
  | { kind: 'kv_sized' }
  | { kind: 'mem_pool_end' }
  | { kind: 'graph_begin' }
  | { kind: 'graph_end'; seconds?: number }
  | { kind: 'scheduler_ready'; maxTotalTokens: number }
  | { kind: 'uvicorn_running'; port: number }
  /** The server's own warm-up started (TGI's router `Warming up model`; vLLM's engine init done, its API server next). */
  | { kind: 'warmup_begin' }
  /** uvicorn's `Application startup complete.`: vLLM's ready line; SGLang warms up after it. */
  | { kind: 'app_started' }
  | { kind: 'ready' }
  | { kind: 'prefill' }
  | { kind: 'decode' }
  | { kind: 'shutdown' };

// SGLang's answer to SIGTERM (tokenizer_manager.py: its signal handler logs `SIGTERM received. signum=...`, then its
// watchdog `Gracefully exiting... Remaining number of requests N`): someone stopped the server.
const STOP_SIGNAL = /SIGTERM received\. signum=|Gracefully exiting\.\.\./;

const num = (s: string | undefined): number => Number(s ?? Number.NaN);

const LINE_TERMINATOR = /[\n\r\u2028\u2029]/g;

/**
 * What `head.*tail` (`pick: 'last'`) or `head.*?tail` (`'first'`) would match of `tail`, in one pass: as a regex,
 * every `head` of a long line without the tail runs to the line's end and back, quadratic in the line's length (a 1
 * MB line of joined log records took seconds). The leftmost head decides, as the regex's leftmost match would; `.`
 * stops at a line terminator, so a stretch without a tail moves on to the first head after it. `head` and `tail`
 * are global regexes.
 */
function headThenTail(line: string, head: RegExp, tail: RegExp, pick: 'first' | 'last'): RegExpExecArray | null {
  head.lastIndex = 0;
  for (let h = head.exec(line); h; h = head.exec(line)) {
    const from = h.index + h[0].length;
    LINE_TERMINATOR.lastIndex = from;
    const end = LINE_TERMINATOR.exec(line)?.index ?? line.length;
    // The tail is looked for in this stretch only, so no part of the line is read twice.
    const stretch = line.slice(from, end);
    let found: RegExpExecArray | null = null;
    tail.lastIndex = 0;
    for (let t = tail.exec(stretch); t; t = tail.exec(stretch)) {
      found = t;
      if (pick === 'first') break;
      tail.lastIndex = t.index + 1;
    }
    if (found) return found;
    head.lastIndex = end + 1;
  }
  return null;
}

type Rule = RegExp | ((line: string) => RegExpMatchArray | null);

const capture = (tail: RegExp) => (line: string) => headThenTail(line, /Capture /gi, tail, 'last');

const RULES: Array<[Rule, (m: RegExpMatchArray) => Milestone]> = [
  [/server_args=ServerArgs\(/, () => ({ kind: 'server_args' })],
  // vLLM's CLI prints the arguments it was given (vllm/entrypoints/utils.py log_non_default_args).
  [/non-default args: \{/, () => ({ kind: 'server_args' })],
  // TGI's launcher, right before it spawns the model server (`text-generation-server`) that loads the model
  // (launcher/src/main.rs shard_manager: `Starting shard`; older versions add the rank after it).
  [/\bStarting shard(?: rank=\d+| \d+)?\s*$/, () => ({ kind: 'server_start' })],
  [/Init torch distributed begin\./, () => ({ kind: 'dist_init_begin' })],
  // A process joining the Ray cluster its workers will run on, as vLLM's Ray executor does while it starts
  // (ray/_private/worker.py, ray.init: `Connecting to existing Ray cluster at address: ...`, `Started a local Ray
  // instance.`). (Not NCCL's communicator set-up: torch creates a communicator at its first collective, which can
  // be any step's.)
  [/Connecting to existing Ray cluster at address|Started a local Ray instance/, () => ({ kind: 'dist_init_begin' })],
  // NCCL setting up a communicator, with NCCL_DEBUG=INFO (src/init.cc, src/bootstrap.cc, src/transport/net.cc:
  // `NCCL version 2.x+cuda12.4` (with its CUDA: an error message's `, NCCL version 2.14.3` names none), `Bootstrap : Using eth0`, `NET/IB : Using`, `Using network Socket`, `comm 0x.. rank 0
  // nranks 8 ... - Init COMPLETE`): a step of distributed init (phase rule 1: only init-distributed lines -> startup).
  // Phases only move forward and stop at ready, so the same lines from a communicator made later (torch makes one
  // at a group's first collective) change nothing once loading has begun. Its channel and ring lines (`Channel 00/32`,
  // `Connected all rings`) are not taken: they are the communicator's topology, printed again for every new one.
  [
    /\bNCCL INFO (?:Bootstrap ?: Using|NET\/\w+ ?: |Using network |comm 0x[0-9a-f]+ rank \d+ nranks \d+ .*Init (?:START|COMPLETE)|ncclCommInitRank)|\bNCCL version \d+\.\d+\.\d+\+cuda/,
    () => ({ kind: 'dist_init_begin' }),
  ],
  [/Load weight begin\./, () => ({ kind: 'weights_begin' })],
  // vLLM: `Starting to load model <name>...` and, for a speculative decoding drafter, `Loading drafter model...`
  // (gpu_model_runner.py load_model).
  [/Starting to load model |Loading drafter model\.\.\./, () => ({ kind: 'weights_begin' })],
  // SGLang's diffusion (multimodal_gen) loader, before it reads the transformer's weight files: `Loading model from 3
  // safetensors files: [...]`.
  [/Loading model from \d+ safetensors files/, () => ({ kind: 'weights_begin' })],
  // Progress bars of a weight load: SGLang's and vLLM's `Loading safetensors checkpoint shards:  50% Completed | 1/2`,
  // transformers' tqdm `Loading checkpoint shards:  75%|███▌ | 3/4`, TensorRT-LLM's `Loading weights concurrently:`.
  [
    /(?:Loading (?:\w+ )?checkpoint shards|Multi-thread loading shards|Loading safetensors using Fastsafetensor loader|Loading (?:\w+ )?weights(?: \w+){0,2}):\s+(\d+)%(?: Completed \| |\|[^|\d]*\|? ?| )(\d+)\/(\d+)/,
    (m) => ({ kind: 'shards', percent: num(m[1]), done: num(m[2]), total: num(m[3]) }),
  ],
  [
    (line) => headThenTail(line, /Load weight end\./g, /mem usage=([\d.]+) GB/g, 'first'),
    (m) => ({ kind: 'weights_end', memUsageGb: num(m[1]) }),
  ],
  [/Load weight end\./, () => ({ kind: 'weights_end' })],
  // vLLM: `Loading weights took 3.04 seconds`, `Model loading took 14.99 GiB and 3.2 seconds` (before 0.9, `... took
  // 40.3172 GB and 42.64 seconds`, gpu_model_runner.py load_model); V0's model runner
  // `Loading model weights took 14.9889 GB` (vllm/worker/model_runner.py, load_model), which the Gaudi fork's HPU
  // runner prints as `Loading model weights took in total 15.05 GiB of device memory` (hpu_model_runner.py).
  [
    /Loading weights took [\d.]+ seconds|Model loading took [\d.]+ Gi?B|Loading model weights took (?:in total )?[\d.]+ Gi?B/,
    () => ({ kind: 'weights_end' }),
  ],
  [/KV Cache is allocated\.[^#]*#tokens: (\d+)/, (m) => ({ kind: 'kv_allocated', tokens: num(m[1]) })],
  [/Memory pool end\./, () => ({ kind: 'mem_pool_end' })],
  // vLLM V0 (executor: `# GPU blocks: 1478, # CPU blocks: 2048`) and V1 (kv_cache_utils.py: `GPU KV cache size: N tokens`).
  [/# GPU blocks: \d+|GPU KV cache size: [\d,]+ tokens/, () => ({ kind: 'kv_sized' })],
  // vLLM V1's worker after its memory profile (gpu_worker.py determine_available_memory: `Available KV cache memory:
  // 12.3 GiB`), and V0's (worker.py determine_num_available_blocks: `Memory profiling takes 5.1 seconds`).
  [/Available KV cache memory: -?[\d.]+ GiB|Memory profiling takes [\d.]+ seconds/, () => ({ kind: 'kv_sized' })],
  // llama.cpp once it has allocated a context's KV cache: `llama_new_context_with_model: KV self size  = 5120.00 MiB`
  // (src/llama.cpp, llama_new_context_with_model), and in newer releases per device `llama_kv_cache_unified: CUDA0 KV
  // buffer size = 256.00 MiB` (src/llama-kv-cache.cpp); its compute buffers are allocated after it
  [/\bKV self size +=|\bKV buffer size +=/, () => ({ kind: 'kv_sized' })],
  // `Capture .*graph begin`, case-insensitive (`Capture piecewise CUDA graph begin`).
  [capture(/graph begin/gi), () => ({ kind: 'graph_begin' })],
  [capture(/graph end\.(?: Time elapsed: ([\d.]+) s)?/gi), (m) => ({ kind: 'graph_end', seconds: num(m[1]) })],
  // vLLM: `Capturing the model for CUDA graphs.` (V0), `Capturing cudagraphs for decoding.`, `Capturing CUDA graphs
  // (mixed prefill-decode, PIECEWISE):` (V1), `Graph capturing for 304 input tokens`; then `Graph capturing finished in 5 secs`.
  [/Graph capturing finished in ([\d.]+) sec/, (m) => ({ kind: 'graph_end', seconds: num(m[1]) })],
  [
    /Capturing (?:the model for )?(?:CUDA graphs|cudagraphs)\b|Graph capturing for \d+/,
    () => ({ kind: 'graph_begin' }),
  ],
  // The scheduler's ready line, in SGLang's newer (`, chunked_prefill_size=`) and older (`, max_prefill_tokens=`) words.
  [
    /max_total_num_tokens=(\d+), (?:chunked_prefill_size|max_prefill_tokens)=/,
    (m) => ({ kind: 'scheduler_ready', maxTotalTokens: num(m[1]) }),
  ],
  [/Uvicorn running on https?:\/\/[^\s:]+:(\d+)/, (m) => ({ kind: 'uvicorn_running', port: num(m[1]) })],
  // TGI's router before its warm-up batch (`Warming up model`); vLLM V1's engine core once it has profiled, sized the
  // KV cache and compiled or captured (core.py _initialize_kv_caches: `init engine (profile, create kv cache, warmup
  // model) took N seconds`), its API server's start-up next.
  [
    /\bWarming up model\b|init engine \(profile, create kv cache, warmup model\) took/,
    () => ({ kind: 'warmup_begin' }),
  ],
  [/The server is fired up and ready to roll!/, () => ({ kind: 'ready' })],
  // Other servers' ready lines: TGI's router once its warm-up is done and its shards answer (router/src/server.rs:
  // `Connected`, under its `text_generation_router` target), Triton's once its endpoints listen (`Started
  // HTTPService at 0.0.0.0:8000`, `Started GRPCInferenceService at ...`). Bounded runs (the target's path, the
  // source place): an unbounded one is retried from every `text_generation_router` of a long line.
  [
    /text_generation_router[\w:]{0,80}: \S{1,200}: Connected\s*$|Started (?:HTTPService|GRPCInferenceService) at /,
    () => ({ kind: 'ready' }),
  ],
  [/Application startup complete\./, () => ({ kind: 'app_started' })],
  [/Prefill batch[,.]/, () => ({ kind: 'prefill' })],
  [/Decode batch[,.]/, () => ({ kind: 'decode' })],
  [STOP_SIGNAL, () => ({ kind: 'shutdown' })],
  // uvicorn stopping (server.py shutdown: `Shutting down`, then its lifespan's `Waiting for application shutdown.`,
  // `Application shutdown complete.`; `Finished server process [N]`), the HTTP server of SGLang, vLLM and lmdeploy;
  // TGI's launcher stopping its shards (`Shutting down shards`).
  [
    /(?:^|\s)Shutting down(?: shards)?\s*$|Waiting for application shutdown\.|Application shutdown complete\.|Finished server process \[\d+\]/,
    () => ({ kind: 'shutdown' }),
  ],
];

/**
 * True when a shutdown line is the server answering a signal someone sent it (STOP_SIGNAL), not stopping by itself:
 * it served until then, so an error it recorded before was no failure it died of.
 */
export function stopSignalled(line: string): boolean {
  return STOP_SIGNAL.test(line);
}

export function parseMilestone(line: string): Milestone | null {
  // Cheap pre-filter: every rule's line contains one of these words, and most log lines contain none.
  if (
    !/ServerArgs|non-default args|torch distributed|Ray cluster|Ray instance|NCCL|weight|load model|drafter model|loading took|shard|safetensors files|Fastsafetensor|KV Cache|GPU blocks|KV self size|KV buffer size|Memory pool|Memory profiling|graph|max_total_num_tokens|Uvicorn|startup complete|fired up|Connected|Service at|batch|warming up|init engine|SIGTERM|Gracefully|shutting down|shutdown|server process/i.test(
      line,
    )
  ) {
    return null;
  }
  for (const [rule, build] of RULES) {
    const m = typeof rule === 'function' ? rule(line) : line.match(rule);
    if (m) return build(m);
  }
  return null;
}
