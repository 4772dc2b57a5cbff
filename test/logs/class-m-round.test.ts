// The class decision on the m- round's dev misses: exception families by type and the code that raised them, and the
// messages libraries document, each in a small log in the style of the real one.
import { describe, expect, it } from 'vitest';
import { diagnose, tb } from './diagnose.ts';

describe('sampling: torch.multinomial refusing its distribution', () => {
  it('the host-side check (Distributions.cpp) is nan_in_sampling', () => {
    const line = 'RuntimeError: invalid multinomial distribution (sum of probabilities <= 0)';
    expect(diagnose([line])).toMatchObject({ category: 'nan_in_sampling', root: line });
  });
});

describe("triton's OutOfResources as its repr, logged by the process that got it back", () => {
  it('is shared_memory_exceeded', () => {
    const line = "ERROR 05-20 16:28:24 [engine.py:161] OutOfResources(98304, 49152, 'shared memory')";
    expect(diagnose([line]).category).toBe('shared_memory_exceeded');
  });
});

describe("vLLM V0's worker monitor reporting a worker killed by a signal", () => {
  it('is a crash (other), the death its root', () => {
    const line =
      'ERROR 03-19 13:02:05 [multiproc_worker_utils.py:124] Worker VllmWorkerProcess pid 320 died, exit code: -9';
    const d = diagnose([
      line,
      'INFO 03-19 13:02:05 [multiproc_worker_utils.py:128] Killing local vLLM worker processes',
    ]);
    expect([d.category, d.root]).toEqual(['other', line]);
  });
});

describe("Ray Serve's controller giving up on a replica's health check", () => {
  it('is watchdog_timeout', () => {
    const line =
      "(ServeController pid=1758) Didn't receive health check response for replica Replica(id='a1', deployment='vLLM', app='app') after 10.0s, marking it unhealthy.";
    expect(diagnose([line]).category).toBe('watchdog_timeout');
  });
});

describe('a KeyError on a checkpoint tensor name', () => {
  it('stays model_load_error when the next record of an interleaved log is read onto its line', () => {
    const d = diagnose([
      "(Worker_TP1 pid=9) ERROR 06-18 16:38:35 [multiproc_executor.py:870] KeyError: 'model.layers.3.self_attn.wq_b.weight'",
      '(EngineCore pid=5) ERROR 06-18 16:38:39 [core.py:1140] EngineCore failed to start.',
    ]);
    expect(d.category).toBe('model_load_error');
  });
});

describe("vLLM's attention backend selection finding no backend", () => {
  it('is backend_assertion, with or without its reasons', () => {
    const cut = 'ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(';
    expect(diagnose([cut, '    head_size=576,', '    use_']).category).toBe('backend_assertion');
  });
  it('reasons that name the compute capability make it the architecture', () => {
    const line =
      'ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=576, use_mla=True). Reasons: {FLASHMLA: [compute capability not supported]}.';
    expect(diagnose([line]).category).toBe('unsupported_arch');
  });
});

describe('a bare assert on a parallel split in model code', () => {
  it('is backend_assertion (the tensor parallel size does not divide the heads)', () => {
    const d = diagnose(
      tb(
        [
          ['/x/vllm/model_executor/models/llama.py', '__init__', 'self.self_attn = LlamaAttention('],
          ['/x/vllm/model_executor/models/llama.py', '__init__', 'assert self.total_num_kv_heads % tp_size == 0'],
        ],
        'AssertionError',
      ),
    );
    expect(d.category).toBe('backend_assertion');
  });
  it('another bare assert in model code stays other', () => {
    const d = diagnose(
      tb([['/x/vllm/model_executor/models/llama.py', 'forward', 'assert hidden_states.dim() == 2']], 'AssertionError'),
    );
    expect(d.category).toBe('other');
  });
});

describe("vLLM's KV connector factory refusing the configured connector", () => {
  it('is backend_assertion', () => {
    const d = diagnose(
      tb(
        [
          [
            '/x/vllm/distributed/kv_transfer/kv_transfer_state.py',
            'ensure_kv_transfer_initialized',
            '_KV_CONNECTOR_AGENT = KVConnectorFactory.create_connector_v0(',
          ],
          [
            '/x/vllm/distributed/kv_transfer/kv_connector/factory.py',
            'create_connector_v0',
            'assert issubclass(connector_cls, KVConnectorBase)',
          ],
        ],
        'AssertionError',
      ),
    );
    expect(d.category).toBe('backend_assertion');
  });
});

describe('NVSHMEM transport failures', () => {
  it('are nccl_error', () => {
    const line =
      '/sgl-workspace/nvshmem/src/modules/transport/ibrc/ibrc.cpp:420: non-zero status: 22 ibv_modify_qp failed';
    expect(diagnose([line]).category).toBe('nccl_error');
  });
});

describe("llama.cpp's model file and hub errors (C++ std::runtime_error)", () => {
  it('a model file that ends early is model_load_error', () => {
    const d = diagnose([
      'llama.cpp: loading model from ./models/7B/ggml-model-q4_0.bin',
      "terminate called after throwing an instance of 'std::runtime_error'",
      '  what():  unexpectedly reached end of file',
      'Aborted (core dumped)',
    ]);
    expect(d.category).toBe('model_load_error');
  });
  it('the hub answering an error to -hf is model_load_error', () => {
    const d = diagnose([
      "terminate called after throwing an instance of 'std::runtime_error'",
      '  what():  error from HF API, response code: 500, data: {"error":"Internal Error"}',
      'Aborted (core dumped)',
    ]);
    expect(d.category).toBe('model_load_error');
  });
});

describe('XLA on TPU failing to reserve device memory for a program', () => {
  it('is cuda_oom (device memory exhausted)', () => {
    const line =
      'RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: Error loading program: Attempting to reserve 1.04G at the bottom of memory. That was not possible. There are 905.37M free, 0B reserved, and 905.37M reservable.';
    expect(diagnose([line]).category).toBe('cuda_oom');
  });
});

describe('errors that only look like a configuration refused or a process-group failure', () => {
  it("torch_npu's operator error (its advice says `please set`) is no configuration refused", () => {
    const d = diagnose([
      'RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current working operator name is aclnnIsNegInf.',
      'Since the operator is called asynchronously, the stacktrace may be inaccurate. If you want to get the accurate stacktrace, please set the environment variable ASCEND_LAUNCH_BLOCKING=1.',
    ]);
    expect(d.category).toBe('other');
  });
  it("the NCCL watchdog's DistBackendError carrying a CUDA error is not nccl_error", () => {
    const d = diagnose([
      "terminate called after throwing an instance of 'c10::DistBackendError'",
      '  what():  [PG ID 2 PG GUID 3 Rank 1] Process group watchdog thread terminated with exception: CUDA error: unspecified launch failure',
    ]);
    expect(d.category).not.toBe('nccl_error');
  });
  it('a call-signature TypeError in a weight loader is a code bug (other), not a checkpoint that does not fit', () => {
    const d = diagnose(
      tb(
        [
          ['/x/sglang/srt/models/gpt_oss.py', 'load_weights', 'self._load_weights_mxfp4('],
          ['/x/sglang/srt/models/gpt_oss.py', '_load_mxfp4_experts_weights', 'weight_loader('],
        ],
        "TypeError: default_weight_loader() got an unexpected keyword argument 'weight_name'",
      ),
    );
    expect(d.category).toBe('other');
  });
});

describe("vLLM's model registry giving up on an architecture", () => {
  it('its closing ValueError alone is model_load_error', () => {
    const line =
      "ValueError: Model architectures ['Gemma3ForConditionalGeneration'] failed to be inspected. Please check the logs for more details.";
    expect(diagnose([line]).category).toBe('model_load_error');
  });
});

describe('model files and settings checked against the model config', () => {
  it("vLLM's loader finding no weight files is model_load_error", () => {
    expect(diagnose(['RuntimeError: Cannot find any model weights with `/models/x`']).category).toBe(
      'model_load_error',
    );
  });
  it("a length refused against the model's config.json is a setting refused, not a file missing", () => {
    const line =
      "ValueError: User-specified max_model_len (131072) is greater than the derived max_model_len (max_position_embeddings=32768 or model_max_length=None in model's config.json). This may lead to incorrect model outputs or CUDA errors.";
    expect(diagnose([line]).category).toBe('backend_assertion');
  });
  it('a config.json that is missing stays model_load_error', () => {
    const line = 'OSError: /models/x does not appear to have a file named config.json.';
    expect(diagnose([line]).category).toBe('model_load_error');
  });
});

describe("llama.cpp's log of a model it could not load", () => {
  it('is model_load_error', () => {
    const d = diagnose([
      "llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'qwen3next'",
      'llama_model_load_from_file_impl: failed to load model',
    ]);
    expect(d.category).toBe('model_load_error');
  });
});

describe("Ray's memory monitor (host RAM)", () => {
  it('its OutOfMemoryError is no GPU OOM', () => {
    const d = diagnose(['ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.']);
    expect(d.category).toBe('other');
  });
  it("the raylet's kill summary is no GPU OOM either", () => {
    const line =
      '(raylet) [2023-04-09 07:23:59,445 E 395 395] (raylet) node_manager.cc:3049: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: e5d9, IP: 10.0.62.231) over the last time period.';
    expect(diagnose([line]).category).toBe('other');
  });
  it("PyTorch's OutOfMemoryError stays cuda_oom", () => {
    expect(diagnose(['torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.']).category).toBe(
      'cuda_oom',
    );
  });
});

describe('notices a healthy server prints, as the last line read', () => {
  const ready = [
    '[2026-12-01 09:59:05 TP0] Load weight begin. avail mem=78.00 GB',
    '[2026-12-01 09:59:30 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.00 GB',
    '[2026-12-01 10:00:00] The server is fired up and ready to roll!',
  ];
  for (const line of [
    // c10's older logger format, a warning
    '[W socket.cpp:464] [c10d] The server socket cannot be initialized on [::]:29500 (errno: 97 - Address family not supported by protocol).',
    // NCCL at INFO level
    'node1:1234:1234 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.',
    // SGLang's get_ip going on with its default
    '[2026-12-01 10:00:01] Failed to get the IP address, using 0.0.0.0 by default. The value can be set by the environment variable SGLANG_HOST_IP or HOST_IP.',
    // git asked for a version outside a checkout
    'fatal: not a git repository (or any of the parent directories): .git',
  ])
    it(`is no crash: ${line.slice(0, 50)}`, () => {
      expect(diagnose([...ready, line]).category).toBe('none');
    });
  it("NCCL's WARN with its return trace stays an NCCL failure", () => {
    const d = diagnose([
      'node1:1234:1234 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45123> failed : Software caused connection abort',
      'node1:1234:1234 [0] NCCL INFO misc/socket.cc:565 -> 2',
      'node1:1234:1234 [0] NCCL INFO transport/net_socket.cc:338 -> 2',
    ]);
    expect(d.category).toBe('nccl_error');
  });
});

describe('two more wordings of families already read', () => {
  it("a parallel size that 'must divide' the heads is a setting refused", () => {
    const line = 'AssertionError: Tensor parallel size 3 must divide the number of attention heads 32';
    expect(diagnose([line]).category).toBe('backend_assertion');
  });
  it("vLLM's AutoWeightsLoader meeting a tensor the model has no parameter for is model_load_error", () => {
    const line =
      "ValueError: There is no module or parameter named 'model.layers.0.mlp.gate.e_score_correction_bias' in LlamaForCausalLM";
    expect(diagnose([line]).category).toBe('model_load_error');
  });
});

describe('a TensorRT engine built for another TensorRT version', () => {
  it('is model_load_error (the engine is the model)', () => {
    const d = diagnose([
      '[TensorRT-LLM][ERROR] 1: [stdArchiveReader.cpp::StdArchiveReader::42] Error Code 1: Serialization (Serialization assertion stdVersionRead == kSERIALIZATION_VERSION failed.Version tag does not match.)',
      '[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] Assertion failed: Failed to deserialize cuda engine. (/src/tensorrt_llm/runtime/tllmRuntime.cpp:239)',
    ]);
    expect(d.category).toBe('model_load_error');
  });
});

describe('the driver refusing a kernel image built for another architecture', () => {
  it('is unsupported_arch', () => {
    expect(diagnose(['RuntimeError: Triton Error [CUDA]: device kernel image is invalid']).category).toBe(
      'unsupported_arch',
    );
  });
});

describe("DeepEP's all-to-all giving up on its peers", () => {
  it('is nccl_error (a collective that timed out)', () => {
    expect(diagnose(['RuntimeError: DeepEP error: CPU recv timeout']).category).toBe('nccl_error');
    expect(diagnose(['RuntimeError: DeepEP error: timeout (dispatch CPU)']).category).toBe('nccl_error');
  });
});

describe('model hubs and architectures in other words', () => {
  it("ModelScope's hub saying the model does not exist is model_load_error", () => {
    const line = 'modelscope.hub.errors.NotExistError: The model: Qwen/Qwen3-8B at revision: master is not exist';
    expect(diagnose([line]).category).toBe('model_load_error');
  });
  it('the Transformers fallback finding no code for the architecture is model_load_error', () => {
    const line =
      "ValueError: Cannot find model module. 'UrsaForConditionalGeneration' is not a registered model in the Transformers library (only relevant if the model is meant to be in Transformers) and 'AutoModel' is not present in the model config's 'auto_map' (relevant if the model is custom).";
    expect(diagnose([line]).category).toBe('model_load_error');
    expect(
      diagnose([
        'ValueError: XForCausalLM has no SGlang implementation and the Transformers implementation is not compatible with SGLang.',
      ]).category,
    ).toBe('model_load_error');
  });
});
