// The phase rule of corpus/README.md, step by step (phase.ts): 1 the milestones before the failure, 2 the frames,
// 3 a class that happens at one point only, 4 unknown; each step's data on its own, then the steps' order.
import { describe, expect, it } from 'vitest';
import { createClassifier, diagnoseText } from '../../src/logs/classify/index.ts';
import { type Frame, phaseByRule, phaseFromFrames, reportedCall } from '../../src/logs/classify/phase.ts';
import { parseMilestone } from '../../src/logs/milestones.ts';

const frame = (file: string, func: string, source?: string): Frame => ({
  line: 1,
  text: `  File "${file}", line 1, in ${func}`,
  file,
  func,
  ...(source !== undefined && { source }),
});
const traceback = (...frames: [string, string][]) => [
  'Traceback (most recent call last):',
  ...frames.map(([file, func]) => `  File "${file}", line 1, in ${func}`),
  'RuntimeError: boom',
];
const phaseOf = (...lines: string[]) => diagnoseText(lines.join('\n')).classification.phase;

describe('phase rule 1: the milestones before the failure', () => {
  const boom = traceback(['/x/app/main.py', 'main']);

  it('places a crash after Load weight end in the KV cache set-up, after Load weight begin in the weight load', () => {
    expect(phaseOf('[TP0] Load weight begin. avail mem=70.00 GB', ...boom)).toBe('weight_load');
    expect(
      phaseOf('[TP0] Load weight begin. avail mem=70.00 GB', '[TP0] Load weight end. mem usage=9 GB', ...boom),
    ).toBe('kv_alloc');
    // vLLM's words for the end of the load
    expect(phaseOf('INFO [gpu_model_runner.py:1347] Model loading took 18.1 GiB and 40.7 seconds', ...boom)).toBe(
      'kv_alloc',
    );
  });

  it("reads uvicorn's Application startup complete as the ready line, except after SGLang's scheduler was ready", () => {
    expect(parseMilestone('INFO:     Application startup complete.')).toEqual({ kind: 'app_started' });
    const started = ['INFO:     Waiting for application startup.', 'INFO:     Application startup complete.'];
    expect(phaseOf(...started, ...boom)).toBe('runtime');
    // SGLang's HTTP server sends its warm-up request once the app has started; its ready line is `fired up`
    for (const ready of [
      '[TP0] max_total_num_tokens=56524, chunked_prefill_size=8192, max_prefill_tokens=16384',
      '[TP0] max_total_num_tokens=56524, max_prefill_tokens=16384, max_running_requests=2049',
    ]) {
      expect(parseMilestone(ready)?.kind).toBe('scheduler_ready');
      expect(phaseOf(ready, ...started, ...boom)).toBe('warmup');
    }
  });

  it('reads a request served as serving, not a request refused (the warm-up request that failed)', () => {
    expect(phaseOf('INFO:     127.0.0.1:1 - "POST /v1/completions HTTP/1.1" 200 OK', ...boom)).toBe('runtime');
    const refused = 'INFO:     127.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error';
    expect(phaseOf(refused, ...boom)).toBe('unknown');
    expect(phaseOf(refused, ...traceback(['/x/sglang/srt/entrypoints/http_server.py', '_execute_server_warmup']))).toBe(
      'warmup',
    );
  });

  it("reads vLLM's drafter load and a progress bar printed without its bar as the weight load", () => {
    expect(parseMilestone('(Worker_TP1 pid=530) INFO [gpu_model_runner.py:2641] Loading drafter model...')).toEqual({
      kind: 'weights_begin',
    });
    expect(parseMilestone('Loading checkpoint shards:  57% 4/7 [00:40<00:29,  9.96s/it]')).toEqual({
      kind: 'shards',
      percent: 57,
      done: 4,
      total: 7,
    });
  });

  it("reads TGI's, vLLM's and SGLang's diffusion words for the steps", () => {
    // TGI's launcher starting the model server, its router warming up
    expect(
      phaseOf('2024-01-01T00:00:00Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0', ...boom),
    ).toBe('startup');
    expect(
      phaseOf('2024-01-01T00:00:00Z  INFO text_generation_router: router/src/main.rs:1: Warming up model', ...boom),
    ).toBe('warmup');
    // SGLang's diffusion loader before the transformer's weight files
    expect(phaseOf("[01-01 00:00:00] Loading model from 2 safetensors files: ['/m/a.safetensors']", ...boom)).toBe(
      'weight_load',
    );
    // vLLM's memory profile done (V1, V0), its engine initialised before the API server starts
    expect(phaseOf('INFO [gpu_worker.py:1] Available KV cache memory: 12.30 GiB', ...boom)).toBe('kv_alloc');
    expect(phaseOf('INFO [worker.py:1] Memory profiling takes 4.12 seconds', ...boom)).toBe('kv_alloc');
    expect(
      phaseOf('INFO [core.py:1] init engine (profile, create kv cache, warmup model) took 42.00 seconds', ...boom),
    ).toBe('warmup');
  });

  it("reads TGI's and Triton's ready lines as the ready line", () => {
    for (const ready of [
      '2024-01-01T00:00:00.000000Z  INFO text_generation_router::server: router/src/server.rs:1898: Connected',
      'I0101 00:00:00.000000 1 http_server.cc:4637] Started HTTPService at 0.0.0.0:8000',
      'I0101 00:00:00.000000 1 grpc_server.cc:2451] Started GRPCInferenceService at 0.0.0.0:8001',
    ]) {
      expect(parseMilestone(ready)).toEqual({ kind: 'ready' });
      expect(phaseOf(ready, ...boom)).toBe('runtime');
    }
    // another program's `Connected`
    expect(parseMilestone('2024-01-01 INFO redis: Connected')).toBeNull();
  });

  it("reads uvicorn's and TGI's shutdown lines as the shutdown, which does not excuse a failure before it", () => {
    for (const line of [
      'INFO:     Shutting down',
      'INFO:     Waiting for application shutdown.',
      'INFO:     Application shutdown complete.',
      'INFO:     Finished server process [4242]',
      '2024-01-01T00:00:00Z  INFO text_generation_launcher: Shutting down shards',
    ]) {
      expect(parseMilestone(line)).toEqual({ kind: 'shutdown' });
      expect(phaseOf('INFO:     Application startup complete.', line, ...boom)).toBe('shutdown');
    }
    // words that only mention it
    expect(parseMilestone('WARNING Shutting down the engine because the scheduler died: x')).toBeNull();
    // a failure record, then the process shuts down by itself (uvicorn's lines): still the crash
    const record = '2025-01-01 12:00:00 ERROR Failed to initialize the engine: TypeError: bad operand';
    expect(diagnoseText([record, 'INFO:     Shutting down'].join('\n')).classification.category).toBe('other');
  });

  it("starts a new run at a second launch's weight load after the first run shut down (two runs in one log)", () => {
    const lines = [
      'INFO 03-04 09:00:20 model_runner.py:1072] Starting to load model Qwen/Qwen2.5-7B-Instruct...',
      'INFO:     Application startup complete.',
      'INFO:     127.0.0.1:40000 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
      'INFO:     Shutting down',
      'INFO:     Finished server process [4021]',
      "INFO 03-04 10:00:00 api_server.py:586] args: Namespace(model='Qwen/Qwen2.5-72B-Instruct')",
      'INFO 03-04 10:00:20 model_runner.py:1072] Starting to load model Qwen/Qwen2.5-72B-Instruct...',
      ...boom,
    ];
    expect(diagnoseText(lines.join('\n')).classification.phase).toBe('weight_load');
  });

  it("reads a stop signal's lines (SGLang's `SIGTERM received`) as the server carrying on until it was stopped", () => {
    const lines = [
      '[2025-11-05 12:00:36] The server is fired up and ready to roll!',
      '[2025-11-05 12:05:00] ERROR: Failed to push metrics to http://10.0.0.9:9091: connection refused',
      '[2025-11-05 13:00:00] SIGTERM received. signum=None frame=None. Draining requests and shutting down...',
      '[2025-11-05 13:00:01] Gracefully exiting... Remaining number of requests 0',
    ];
    expect(diagnoseText(lines.join('\n')).classification.category).toBe('none');
    const c = createClassifier();
    lines.forEach((l, i) => {
      c.push(l, i + 1);
    });
    expect(c.crashed()).toBe(false);
    // the record as the last line is still the failure (the signal's lines are what clear it)
    expect(diagnoseText(lines.slice(0, 2).join('\n')).classification.category).toBe('other');
    // a vLLM API server's failure record, then uvicorn's own shutdown: still the crash
    const vllm = [
      'INFO:     Application startup complete.',
      'ERROR 03-04 11:00:00 [loggers.py:120] Failed to log stats to the collector: timed out',
      'INFO:     Shutting down',
      'INFO:     Waiting for application shutdown.',
      'INFO:     Application shutdown complete.',
      'INFO:     Finished server process [4021]',
    ];
    expect(diagnoseText(vllm.join('\n')).classification.category).toBe('other');
  });

  it('decides before the frames: a server-args line alone is start-up, whatever step the traceback shows', () => {
    const load = traceback(['/x/sglang/srt/model_executor/model_runner.py', 'load_model']);
    expect(phaseOf(...load)).toBe('weight_load');
    expect(phaseOf('[2025-01-01] server_args=ServerArgs(model_path="x")', ...load)).toBe('startup');
    expect(phaseOf('[TP0] Load weight begin. avail mem=70.00 GB', ...traceback(['/x/m.py', 'init_memory_pool']))).toBe(
      'weight_load',
    );
  });

  it('while serving, the failed traceback names its pass over the last serving line', () => {
    const decoding = '[TP0] Decode batch. #running-req: 1, #token: 1293, token usage: 0.01, cuda graph: True';
    expect(phaseOf(decoding, ...boom)).toBe('decode');
    expect(phaseOf(decoding, ...traceback(['/x/sglang/srt/model_executor/model_runner.py', 'forward_extend']))).toBe(
      'prefill',
    );
  });
});

describe('phase rule 2: the frames', () => {
  it('the innermost init step wins', () => {
    const loadThenGroups = [
      frame('/x/sglang/srt/model_executor/model_runner.py', 'load_model'),
      frame('/x/app/parallel.py', 'init_distributed_environment'),
    ];
    expect(phaseFromFrames(loadThenGroups)).toBe('startup');
    expect(phaseFromFrames([...loadThenGroups].reverse())).toBe('weight_load');
  });

  it("vLLM's kernel warm-up and SGLang's 2024 attention passes name their step", () => {
    expect(
      phaseFromFrames([
        frame('/x/vllm/model_executor/warmup/kernel_warmup.py', 'kernel_warmup'),
        frame('/x/vllm/model_executor/warmup/deep_gemm_warmup.py', '_deepgemm_fp8_gemm_nt_warmup'),
        frame('/x/vllm/utils/deep_gemm.py', 'fp8_gemm_nt'),
      ]),
    ).toBe('warmup');
    expect(phaseFromFrames([frame('/x/sglang/srt/layers/radix_attention.py', 'prefill_forward_flashinfer')])).toBe(
      'prefill',
    );
    expect(phaseFromFrames([frame('/x/sglang/srt/layers/radix_attention.py', 'decode_forward_triton')])).toBe('decode');
  });

  it("a worker binding its device is start-up; vLLM's `Added request` says the engine serves", () => {
    expect(phaseFromFrames([frame('/x/vllm_ascend/platform.py', 'set_device')])).toBe('startup');
    const d = diagnoseText(
      [
        'INFO 02-10 18:06:30 engine.py:275] Added request cmpl-30aaf466904d4d148c2e17a584f448e0-0.',
        "ERROR 02-10 18:06:30 engine.py:139] OutOfMemoryError('CUDA out of memory. Tried to allocate 1.27 GiB.')",
        '',
      ].join('\n'),
    );
    expect(d.classification.phase).toBe('runtime');
  });

  it('an init step beats the serving pass inside it (capture runs the decode forward)', () => {
    expect(
      phaseFromFrames([
        frame('/x/sglang/srt/model_executor/cuda_graph_runner.py', 'capture_one_batch_size'),
        frame('/x/sglang/srt/layers/attention/flashinfer_backend.py', 'forward_decode'),
      ]),
    ).toBe('cuda_graph_capture');
  });

  it('names init steps the rule does not list by what they are in SGLang, vLLM and PyTorch', () => {
    const step = (file: string, func: string, source?: string) => phaseFromFrames([frame(file, func, source)]);
    // SGLang's scheduler builds its memory pools and the radix cache over them
    expect(step('/x/sglang/srt/managers/scheduler.py', 'init_memory_pool_and_cache')).toBe('kv_alloc');
    // a communication library's communicator or agent between the ranks, the executor and its workers started
    expect(step('/x/vllm/distributed/device_communicators/pynccl_wrapper.py', 'ncclCommInitRank')).toBe('startup');
    expect(step('/x/vllm/worker/worker.py', 'init_mscclpp_comm')).toBe('startup');
    expect(step('/x/vllm/engine/llm_engine.py', '_initialize_nixl')).toBe('startup');
    expect(step('/x/vllm/v1/executor/multiproc_executor.py', '_init_executor')).toBe('startup');
    // the device checked while it is initialised; DistributedDataParallel's construction (its first collectives)
    expect(step('/x/vllm/worker/worker.py', '_check_if_gpu_supports_dtype')).toBe('startup');
    expect(step('/x/torch/nn/parallel/distributed.py', '__init__')).toBe('startup');
    // the engine's arguments built, as the call an excerpt stopped at; building the whole engine says no step
    expect(step('/x/vllm/entrypoints/llm.py', '__init__', '    engine_args = EngineArgs(')).toBe('startup');
    expect(step('/x/vllm/engine/multiprocessing/engine.py', 'from_engine_args')).toBeNull();
  });

  it("reads an engine part's construction as start-up only where the excerpt stops in it", () => {
    const core = frame('/x/vllm/v1/engine/core.py', '__init__');
    expect(phaseFromFrames([core])).toBe('startup');
    expect(phaseFromFrames([frame('/x/sglang/srt/managers/tp_worker.py', 'init')])).toBe('startup');
    // a frame inside it that names no step may belong to any step
    expect(phaseFromFrames([core, frame('/x/sglang/srt/model_executor/model_runner.py', 'initialize')])).toBeNull();
    // a constructor elsewhere says nothing
    expect(phaseFromFrames([frame('/x/app/model.py', '__init__')])).toBeNull();
  });

  it("serving in request handlers; not in a command line's functions nor in a native stack's C++ names", () => {
    expect(
      phaseFromFrames([frame('/x/vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py', 'extract_tool_calls')]),
    ).toBe('runtime');
    expect(
      phaseFromFrames([frame('/x/vllm/entrypoints/openai/chat_completion/serving.py', 'create_chat_completion')]),
    ).toBe('runtime');
    expect(phaseFromFrames([frame('/x/sglang/cli/generate.py', 'generate')])).toBeNull();
    expect(phaseFromFrames([frame('<unknown>', 'swap_blocks_batch(at::Tensor const&, bool)')])).toBeNull();
    expect(phaseFromFrames([frame('/x/vllm/v1/engine/core.py', 'step')])).toBe('runtime');
  });

  it("reads vLLM's dump_input_when_exception wrapper as the execute_model it decorates", () => {
    expect(phaseFromFrames([frame('/x/vllm/worker/model_runner_base.py', '_wrapper')])).toBe('runtime');
    // the file's other functions are no such call
    expect(phaseFromFrames([frame('/x/vllm/worker/model_runner_base.py', 'from_broadcasted_tensor_dict')])).toBeNull();
  });

  it("reads vLLM's input processor as a request handled, not its construction", () => {
    expect(phaseFromFrames([frame('/x/vllm/v1/engine/processor.py', '_validate_model_input')])).toBe('runtime');
    expect(phaseFromFrames([frame('/x/vllm/v1/engine/input_processor.py', 'process_inputs')])).toBe('runtime');
    expect(phaseFromFrames([frame('/x/vllm/v1/engine/processor.py', '__init__')])).toBeNull();
  });

  it("names the pass by its forward, or by the scheduler's processing of that pass's output", () => {
    expect(phaseFromFrames([frame('/x/m.py', 'forward_decode')])).toBe('decode');
    expect(phaseFromFrames([frame('/x/m.py', 'forward_extend')])).toBe('prefill');
    expect(
      phaseFromFrames([
        frame('/x/sglang/srt/managers/scheduler.py', 'event_loop_overlap'),
        frame('/x/sglang/srt/managers/scheduler_output_processor_mixin.py', 'process_batch_result_decode'),
      ]),
    ).toBe('decode');
    expect(phaseFromFrames([frame('/x/sglang/srt/managers/scheduler.py', 'event_loop_overlap')])).toBe('runtime');
  });

  it("reads a tool-call parser's methods as a response being handled, wherever a plugin put its file", () => {
    expect(phaseFromFrames([frame('/app/hermes_tool_parser.py', 'extract_tool_calls_streaming')])).toBe('runtime');
    expect(phaseFromFrames([frame('/app/my_reasoner.py', 'extract_reasoning_content')])).toBe('runtime');
  });

  it('reads the call a frame made through the torch decorator an excerpt stopped in', () => {
    const entry = frame(
      '/x/sglang/srt/managers/scheduler.py',
      'run_scheduler_process',
      'scheduler.event_loop_normal()',
    );
    const decorator = frame('/x/torch/utils/_contextlib.py', 'decorate_context', 'return func(*args, **kwargs)');
    expect(phaseFromFrames([entry, decorator])).toBe('runtime');
    // the decorator's own call names nothing
    expect(phaseFromFrames([frame('/x/app/main.py', 'main', 'run()'), decorator])).toBeNull();
  });
});

describe("phase rule 2: the call a vLLM worker's record says it ran", () => {
  const wrap = (line: string) =>
    `(VllmWorkerProcess pid=41) ERROR 02-03 10:00:00 multiproc_worker_utils.py:226] ${line}`;
  const report = (method: string) => wrap(`Exception in worker VllmWorkerProcess while processing method ${method}.`);
  // the traceback logged after the report, cut after the worker loop's own frame
  const cut = [
    wrap('Traceback (most recent call last):'),
    wrap('  File "/x/vllm/executor/multiproc_worker_utils.py", line 223, in _run_worker_process'),
    wrap('    output = executor(*args, **kwargs)'),
    wrap('RuntimeError: boom'),
  ];

  it('reads `while processing method <m>` as the frame the worker ran', () => {
    expect(reportedCall(report('init_device'))).toMatchObject([{ func: 'init_device' }]);
    expect(reportedCall('Exception in worker VllmWorkerProcess.')).toEqual([]);
    expect(phaseOf(report('init_device'), ...cut)).toBe('startup');
    expect(phaseOf(report('load_model'), ...cut)).toBe('weight_load');
    expect(phaseOf(report('start_worker_execution_loop'), ...cut)).toBe('runtime');
    // without the report the frames name no step
    expect(phaseOf(...cut)).toBe('unknown');
  });

  it('the frames shown inside the method still win (the innermost init step)', () => {
    const inside = [...cut.slice(0, 3), wrap('  File "/x/vllm/worker/worker.py", line 9, in load_model'), cut[3] ?? ''];
    expect(phaseOf(report('start_worker_execution_loop'), ...inside)).toBe('weight_load');
  });

  it('reads the report alone, its traceback cut off, the same way', () => {
    expect(phaseOf(report('init_device'))).toBe('startup');
  });

  it("reads a Ray worker's `Error executing method` the same way, quoted or not", () => {
    const ray = (m: string) =>
      `(RayWorkerWrapper pid=11) ERROR 08-27 05:12:18 worker_base.py:382] Error executing method ${m}. This might cause deadlock in distributed execution.`;
    expect(reportedCall(ray("'init_device'"))).toMatchObject([{ func: 'init_device' }]);
    expect(phaseOf(ray('init_device'), ...cut)).toBe('startup');
    expect(phaseOf(ray("'load_model'"), ...cut)).toBe('weight_load');
  });
});

describe('phase rules 3 and 4, and the order of all four', () => {
  const load = [frame('/x/vllm/model_executor/model_loader/loader.py', 'load_model')];

  it('reads every traceback of the failure (a chained one) before a class that happens at one point', () => {
    const chained = [
      'Traceback (most recent call last):',
      '  File "/x/transformers/models/auto/configuration_auto.py", line 1, in __getitem__',
      "KeyError: 'glm_moe_dsa'",
      'During handling of the above exception, another exception occurred:',
      ...traceback(['/x/sglang/srt/server_args.py', 'prepare_server_args']),
    ];
    expect(diagnoseText(chained.join('\n')).classification).toMatchObject({
      category: 'model_load_error',
      phase: 'startup',
    });
    // with no frame naming a step, the class's point: a model config that cannot be read is the model load
    expect(phaseOf(...chained.slice(0, 3))).toBe('weight_load');
  });

  it('applies the steps in their written order, the first that decides', () => {
    expect(phaseByRule({ milestones: 'kv_alloc', stacks: [load], onePoint: 'startup' })).toBe('kv_alloc');
    expect(phaseByRule({ milestones: 'unknown', stacks: [load], onePoint: 'startup' })).toBe('weight_load');
    expect(phaseByRule({ milestones: 'unknown', stacks: [[], load], onePoint: 'startup' })).toBe('weight_load');
    expect(phaseByRule({ milestones: 'unknown', stacks: [[]], onePoint: 'startup' })).toBe('startup');
    expect(phaseByRule({ milestones: 'unknown', stacks: [[]] })).toBe('unknown');
  });

  it('gives a class that happens at one point only its phase when nothing else says (an import error: start-up)', () => {
    expect(phaseOf("ModuleNotFoundError: No module named 'sgl_kernel'")).toBe('startup');
    // the milestones still come first
    expect(phaseOf('INFO:     Application startup complete.', "ModuleNotFoundError: No module named 'x'")).toBe(
      'runtime',
    );
  });
});
