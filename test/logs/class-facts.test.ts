// Issue 11, the class from what generalises (the i- dev misses' kinds): what the CUDA compilers say when a GPU
// generation lacks what a kernel needs, a TPU core's on-chip memory, vLLM's free-memory check, a setting refused by
// the list of values it allows, MoE expert-parallel code, a multimodal processor's config, a hub download cut off at
// start-up, a Windows traceback's paths. Each log is built from the documented messages and modules the rules name.
import { describe, expect, it } from 'vitest';
import { diagnose, tb } from './diagnose.ts';

describe('the CUDA compilers refusing this GPU generation', () => {
  it("ptxas: a kernel's instruction that this target does not have is no kernel for the GPU", () => {
    const ptxas = "ptxas /tmp/k.ptx, line 12; error   : Feature '.bf16' requires .target sm_80 or higher";
    const d = diagnose([
      ...tb(
        [['/x/triton/backends/nvidia/compiler.py', 'make_cubin', 'raise PTXASError(f"{error}")']],
        'triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error',
      ),
      '`ptxas` stderr:',
      ptxas,
    ]);
    expect(d.category, d.reason).toBe('unsupported_arch');
    expect(d.root).toBe(ptxas);
  });

  it("ptxas's 'not supported on .target', cut by the excerpt inside the target's name", () => {
    const line = "ptxas /tmp/k.ptx, line 3; error   : Instruction 'cvt with .e4m3x2' not supported on .t";
    expect(diagnose([line]).category).toBe('unsupported_arch');
  });

  it('nvcc: a toolkit that does not know the architecture', () => {
    const d = diagnose([
      "nvcc fatal   : Unsupported gpu architecture 'compute_120a'",
      ...tb(
        [['/x/deep_gemm/__init__.py', '_fn', 'return getattr(torch.ops.deep_gemm, name)(*args, **kwargs)']],
        'RuntimeError: Assertion error (csrc/jit/compiler.hpp:150): exit_code == 0',
      ),
    ]);
    expect(d.category, d.reason).toBe('unsupported_arch');
  });
});

describe("a TPU core's on-chip memory is its scratchpad, not device memory", () => {
  it('VMEM exhausted is a kernel too big for the on-chip memory', () => {
    const d = diagnose(['jaxlib._jax.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem.']);
    expect(d.category, d.reason).toBe('shared_memory_exceeded');
  });

  it('SMEM exhausted at compile time too', () => {
    const line =
      'RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space smem. Used 1.02M of 1.00M smem.';
    expect(diagnose([line]).category).toBe('shared_memory_exceeded');
  });

  it('HBM exhausted is device memory: an OOM', () => {
    const line =
      'jaxlib._jax.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 17.2G of 15.75G hbm.';
    expect(diagnose([line]).category).toBe('cuda_oom');
  });
});

describe('memory and settings refused at start-up', () => {
  it("vLLM's check that the device has the free memory --gpu-memory-utilization asks for, wrapped by the paste", () => {
    const d = diagnose([
      'ValueError: Free memory on device npu:0 (8.0/64.0 GiB) on startup is less than desired',
      'GPU memory utilization (0.9, 57.6 GiB). Decrease GPU memory utilization or',
      'reduce GPU memory used by other processes.',
    ]);
    expect(d.category, d.reason).toBe('cuda_oom');
  });

  it('a value refused with the list of values allowed, whatever exception carries it (a KeyError here)', () => {
    const d = diagnose(["KeyError: 'invalid tool call parser: qwen25 (chose from { hermes,mistral,pythonic })'"]);
    expect(d.category, d.reason).toBe('backend_assertion');
  });

  it('a KeyError that is only a key is no setting refused', () => {
    expect(diagnose(["KeyError: 'lm_head.weight'"]).category).not.toBe('backend_assertion');
  });

  it('MoE expert-parallel load balancing that has no implementation of the configured mode', () => {
    const d = diagnose(
      tb(
        [
          ['/x/sglang/srt/model_executor/model_runner.py', 'initialize', 'ExpertDistributionRecorder.init_new('],
          ['/x/sglang/srt/eplb/expert_distribution.py', 'init_new', 'raise NotImplementedError'],
        ],
        'NotImplementedError',
      ),
    );
    expect(d.category, d.reason).toBe('backend_assertion');
  });
});

describe('a model that cannot be loaded', () => {
  it("a multimodal model's processor config that transformers cannot resolve", () => {
    const d = diagnose(
      tb(
        [
          ['/x/app/serve.py', 'main', 'processor = load(args.model)'],
          ['/x/transformers/image_processing_base.py', 'get_image_processor_dict', 'f = resolved_files[0]'],
        ],
        "TypeError: 'NoneType' object is not subscriptable",
      ),
    );
    expect(d.category, d.reason).toBe('model_load_error');
  });

  it("a processor's error on one request's image, raised in its __call__, is no model that cannot be loaded", () => {
    const d = diagnose([
      '[2025-11-05 12:00:36] The server is fired up and ready to roll!',
      '[2025-11-05 12:01:00] Prefill batch. #new-seq: 1, #new-token: 2000, #cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: 0',
      ...tb(
        [
          [
            '/sgl/python/sglang/srt/managers/scheduler.py',
            'handle_generate_request',
            'mm_inputs = self.mm_processor.process(req)',
          ],
          ['/x/transformers/processing_utils.py', '__call__', 'image_inputs = self.image_processor(images, **kwargs)'],
          ['/x/transformers/image_processing_utils.py', '__call__', 'return self.preprocess(images, **kwargs)'],
        ],
        'ValueError: Unable to infer channel dimension format',
      ),
    ]);
    expect(d.category).not.toBe('model_load_error');
  });

  it("the hub download's connection cut while the server starts", () => {
    const d = diagnose(
      tb(
        [['/usr/lib/python3.11/ssl.py', 'do_handshake', 'self._sslobj.do_handshake()']],
        "urllib3.exceptions.ProtocolError: ('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))",
      ),
    );
    expect(d.category, d.reason).toBe('model_load_error');
  });

  it('a connection error that names neither the hub nor runs through its clients is no download', () => {
    // a probe of the server from another host, timed out
    const probe = diagnose(
      tb(
        [
          ['/home/u/bench/probe.py', '<module>', 'r = requests.post(url, json=payload, timeout=600)'],
          ['/usr/lib/python3/dist-packages/requests/adapters.py', 'send', 'raise ReadTimeout(e, request=request)'],
        ],
        "requests.exceptions.ReadTimeout: HTTPConnectionPool(host='gpu-node-3', port=30000): Read timed out. (read timeout=600)",
      ),
    );
    expect(probe.category).not.toBe('model_load_error');
    // a disaggregated decode server that cannot reach its prefill peer's bootstrap server
    const peer = diagnose([
      "[2025-11-05 12:00:00] server_args=ServerArgs(model_path='/models/DeepSeek-V3', disaggregation_mode='decode')",
      ...tb(
        [
          [
            '/sgl/python/sglang/srt/disaggregation/mooncake/conn.py',
            '_get_prefill_parallel_info_from_server',
            'response = requests.get(url, timeout=5)',
          ],
          ['/x/requests/adapters.py', 'send', 'raise ConnectionError(e, request=request)'],
        ],
        "requests.exceptions.ConnectionError: HTTPConnectionPool(host='10.0.0.2', port=8998): Max retries exceeded with url: /route?engine_rank=-1 (Caused by NewConnectionError('Failed to establish a new connection: [Errno 113] No route to host'))",
      ),
    ]);
    expect(peer.category).not.toBe('model_load_error');
  });

  it('the same errors naming the hub, a mirror, or raised in the hub client, are the download', () => {
    const named = (host: string) =>
      diagnose(
        tb(
          [['/x/requests/adapters.py', 'send', 'raise ConnectionError(e, request=request)']],
          `requests.exceptions.ConnectionError: HTTPConnectionPool(host='${host}', port=80): Max retries exceeded with url: /Qwen/Qwen2.5-7B/resolve/main/config.json`,
        ),
      ).category;
    expect(named('huggingface.co')).toBe('model_load_error');
    expect(named('hf-mirror.com')).toBe('model_load_error');
    const inHub = diagnose(
      tb(
        [
          ['/x/huggingface_hub/file_download.py', 'hf_hub_download', 'return _hf_hub_download_to_cache_dir('],
          ['/x/requests/adapters.py', 'send', 'raise ReadTimeout(e, request=request)'],
        ],
        "requests.exceptions.ReadTimeout: HTTPConnectionPool(host='10.1.2.3', port=80): Read timed out.",
      ),
    );
    expect(inHub.category).toBe('model_load_error');
  });

  it('a client refused by a local server is no download', () => {
    const d = diagnose(
      tb(
        [['/x/bench.py', 'main', 'requests.post(url, json=payload)']],
        "requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=30000): Max retries exceeded with url: /generate (Caused by NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))",
      ),
    );
    expect(d.category).not.toBe('model_load_error');
  });

  it("a Windows traceback's backslash paths name the same modules (vLLM's model registry)", () => {
    const d = diagnose(
      tb(
        [
          [
            'D:\\envs\\x\\lib\\site-packages\\vllm\\model_executor\\models\\registry.py',
            '_run_in_subprocess',
            'returned.check_returncode()',
          ],
          [
            'D:\\envs\\x\\lib\\subprocess.py',
            'check_returncode',
            'raise CalledProcessError(self.returncode, self.args)',
          ],
        ],
        "subprocess.CalledProcessError: Command '['python.exe', '-m', 'vllm.model_executor.models.registry']' returned non-zero exit status 1.",
      ),
    );
    expect(d.category, d.reason).toBe('model_load_error');
    expect(d.reason).toContain('(registry.py)');
  });
});

describe("a kernel library's own invariant vs a setting it refuses", () => {
  it("TensorRT-LLM's check of a member's own state (mCamelCase) is no configuration refused", () => {
    const line =
      '[TensorRT-LLM][ERROR] Assertion failed: mFreeBlocks.empty() (/src/tensorrt_llm/cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp:412)';
    const d = diagnose([line]);
    expect(d.category, d.reason).toBe('other');
    expect(d.reason).toContain('cpp-host-invariant');
  });

  it('a check that names a setting and the limit it allows still is', () => {
    const line =
      '[TensorRT-LLM][ERROR] Assertion failed: Invalid max_beam_width (8). max_beam_width must be smaller than mMaxBeamWidth (4) (/src/cpp/runtime/x.cpp:88)';
    expect(diagnose([line]).category).toBe('backend_assertion');
  });
});

describe("vLLM's worker refusing a parallel layout the node's devices cannot hold", () => {
  it('the data-parallel rank offset past the visible devices', () => {
    const d = diagnose([
      '    assert self.local_rank < torch.accelerator.device_count(), (',
      'AssertionError: DP adjusted local rank 2 is out of bounds for 2 devices.',
    ]);
    expect(d.category, d.reason).toBe('backend_assertion');
  });

  it('an index out of bounds in a tensor op is no layout refused', () => {
    const d = diagnose(['IndexError: index 32000 is out of bounds for dimension 0 with size 32000']);
    expect(d.category).not.toBe('backend_assertion');
  });
});

describe("a server's minimum GPU generation", () => {
  it("SGLang's refusal of a GPU below sm75, quoted without its exception type", () => {
    const d = diagnose(['SGLang only supports sm 75 and above']);
    expect(d.category, d.reason).toBe('unsupported_arch');
  });

  it('a notice that a kernel needs a newer GPU and the server falls back is no crash', () => {
    const d = diagnose(['[2026-01-05 10:00:00] FlashMLA only supports sm90 or newer, falling back to triton']);
    expect(d.category, d.reason).toBe('none');
  });

  it('and with it', () => {
    expect(diagnose(['RuntimeError: SGLang only supports sm 75 and above.']).category).toBe('unsupported_arch');
  });

  it("a minimum logged at warning or info level is a notice, the line's end a full stop", () => {
    const warned = '[2025-11-05 12:00:00] WARNING server_args.py:900: FlashAttention3 only supports sm90 and above.';
    expect(diagnose([warned]).category).toBe('none');
    expect(diagnose(['INFO 03-04 10:00:01 [cuda.py:12] FlashMLA only supports sm90 or newer']).category).toBe('none');
    // an error record stating it is still the refusal
    expect(diagnose(['[2025-11-05 12:00:00] ERROR: SGLang only supports sm75 and above.']).category).toBe(
      'unsupported_arch',
    );
  });

  it('a server that reaches ready and runs batches after the line did not die of it', () => {
    const served = [
      '[2025-11-05 12:00:00] FlashAttention3 only supports sm90 and above.',
      '[2025-11-05 12:00:01] Load weight begin. avail mem=78.00 GB',
      '[2025-11-05 12:00:36] The server is fired up and ready to roll!',
      '[2025-11-05 12:01:00] Decode batch. #running-req: 1, #token: 100, token usage: 0.00, gen throughput (token/s): 50.00',
    ];
    expect(diagnose(served).category).toBe('none');
    expect(diagnose(served.slice(0, 2)).category).toBe('unsupported_arch');
  });
});

describe('a wait that timed out is no watchdog by itself', () => {
  it("Python's TimeoutError from a wait that bounds no engine step names no watchdog or health check", () => {
    // (the engine's own bound on a model step is its watchdog: test/logs/class-facts-j.test.ts)
    const d = diagnose(
      tb(
        [
          ['/x/app/rollout.py', 'collect', 'return fut.result(timeout=30)'],
          ['/x/concurrent/futures/_base.py', 'result', 'raise TimeoutError()'],
        ],
        'TimeoutError',
      ),
    );
    expect(d.category, d.reason).toBe('other');
  });

  it("a client's HTTP read of the server that timed out is the server not answering", () => {
    const d = diagnose(
      tb(
        [['/x/requests/adapters.py', 'send', 'raise ReadTimeout(e, request=request)']],
        "requests.exceptions.ReadTimeout: HTTPConnectionPool(host='localhost', port=30000): Read timed out. (read timeout=600)",
      ),
    );
    expect(d.category, d.reason).toBe('watchdog_timeout');
  });
});

describe("the Marlin kernel's shape check", () => {
  it("a layer not divisible by Marlin's thread tile is refused by the backend, in a traceback or re-logged alone", () => {
    const msg =
      'Weight output_size_per_partition = 10944 is not divisible by min_thread_n = 64. Consider reducing tensor_parallel_size or running with --quantization gptq.';
    const raised = diagnose(
      tb(
        [
          [
            '/x/vllm/model_executor/layers/quantization/gptq_marlin.py',
            'create_weights',
            'verify_marlin_supports_shape(',
          ],
          [
            '/x/vllm/model_executor/layers/quantization/utils/marlin_utils.py',
            'verify_marlin_supports_shape',
            'raise ValueError(',
          ],
        ],
        `ValueError: ${msg}`,
      ),
    );
    expect([raised.category, raised.root], raised.reason).toEqual(['backend_assertion', `ValueError: ${msg}`]);
    // an application that embeds the engine and re-logs only the message, at its own warning level
    const relogged = `[2024-08-02 08:16:02,424] [WARN] /srv/api/chat.py(115):__init__: ${msg}`;
    expect(diagnose([relogged]).category).toBe('backend_assertion');
  });
});

describe('a model the server has no code or reader for', () => {
  it("a KeyError whose key is an architecture's class name is the model table lacking it", () => {
    const d = diagnose(
      tb(
        [
          [
            '/x/ktransformers/server/backend/interfaces/ktransformers.py',
            '__init__',
            'self.model = custom_models[config.architectures[0]](config)',
          ],
        ],
        "KeyError: 'Qwen2ForCausalLM'",
      ),
    );
    expect([d.category, d.phase], d.reason).toEqual(['model_load_error', 'weight_load']);
    // a key that is no architecture's name is a plain KeyError
    expect(diagnose(tb([['/x/app/cache.py', 'get', 'return self.items[key]']], "KeyError: 'Qwen2'")).category).toBe(
      'other',
    );
  });

  it("a tensor's dotted path the loader does not recognise is a checkpoint it cannot read", () => {
    const d = diagnose(
      tb(
        [['/x/exllama/model.py', '_layer_dtype_size', 'raise ValueError("Unrecognized layer: " + key)']],
        'ValueError: Unrecognized layer: lm_head.q_groups',
      ),
    );
    expect(d.category, d.reason).toBe('model_load_error');
    expect(diagnose(['ValueError: Unrecognized layer type: Conv3d']).category).toBe('other');
  });
});

describe('torch.compile on a GPU without native bfloat16', () => {
  it("inductor's SkipFrame 'BF16 is not supported' is the GPU generation", () => {
    const d = diagnose(
      tb(
        [['/x/torch/_inductor/compile_fx.py', 'warn_and_skip', 'raise SkipFrame("BF16 is not supported")']],
        'torch._dynamo.exc.SkipFrame: BF16 is not supported',
      ),
    );
    expect(d.category, d.reason).toBe('unsupported_arch');
  });
});

describe('a shared library that cannot be loaded, in every OS loader’s words', () => {
  it("macOS dyld's `Library not loaded` through ctypes, and llama-cpp-python's search for libllama", () => {
    const dyld = diagnose(
      tb(
        [['/x/python3.11/ctypes/__init__.py', '__init__', 'self._handle = _dlopen(self._name, mode)']],
        'OSError: dlopen(/x/mlc_llm/libmlc_llm_module.dylib, 0x0006): Library not loaded: @rpath/libtvm.dylib',
      ),
    );
    expect(dyld.category, dyld.reason).toBe('import_error');
    const llama = diagnose(
      tb(
        [['/x/llama_cpp/llama_cpp.py', '_load_shared_library', 'raise FileNotFoundError(']],
        "FileNotFoundError: Shared library with base name 'llama' not found",
      ),
    );
    expect(llama.category, llama.reason).toBe('import_error');
    // a missing file of another kind is no library
    expect(diagnose(["FileNotFoundError: [Errno 2] No such file or directory: 'prompts.json'"]).category).not.toBe(
      'import_error',
    );
  });
});

describe("Gradio's port search", () => {
  it('finding no free port in its range is a port in use', () => {
    const d = diagnose(
      tb(
        [['/x/gradio/networking.py', 'start_server', 'raise OSError(']],
        'OSError: Cannot find empty port in range: 7860-7860. You can specify a different port by setting the GRADIO_SERVER_PORT environment variable',
      ),
    );
    expect(d.category, d.reason).toBe('port_in_use');
  });
});

describe("TensorRT-LLM's kernels refusing the GPU generation", () => {
  it("'Arch unsupported' and 'cannot be enabled except on <generations>' are the architecture", () => {
    expect(
      diagnose([
        'RuntimeError: [TensorRT-LLM Error][CutlassFp4GemmRunner][GEMM Dispatch] Arch unsupported for CUTLASS FP4 GEMM',
      ]).category,
    ).toBe('unsupported_arch');
    const d = diagnose([
      "terminate called after throwing an instance of 'tensorrt_llm::common::TllmException'",
      '  what():  [TensorRT-LLM][ERROR] Assertion failed: FP8 FMHA cannot be enabled except on Ada or Hopper or Blackwell Arch. (/code/tensorrt_llm/cpp/tensorrt_llm/common/attentionOp.cpp:2357)',
    ]);
    expect([d.category, d.line], d.reason).toEqual(['unsupported_arch', 2]);
    // a host check that names no GPU generation stays the backend's refusal
    expect(diagnose(['[TensorRT-LLM][ERROR] Assertion failed: mMaxNumTokens must be positive']).category).toBe(
      'backend_assertion',
    );
  });
});

describe("Ascend's collective library (HCCL), NCCL's counterpart", () => {
  it("torch_npu's HCCL check and CANN's HCCL error codes are a collective failure", () => {
    const check = diagnose([
      'RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:148 HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 1',
    ]);
    expect(check.category, check.reason).toBe('nccl_error');
    const transport = diagnose([
      '[rank1]: EI0009: [PID: 2225827] 2025-09-24-20:59:48.119.066 Transport init error. Reason: [Create][DestLink]Create Dest error!',
    ]);
    expect(transport.category, transport.reason).toBe('nccl_error');
  });
});

describe("vLLM's attention kernels' own checks", () => {
  it('a bare assert in vllm/attention/ops/ is the backend refusing a head size, through a bracketed log format', () => {
    const front = '[2024-04-17 20:07:13,727] [ERROR] [MainThread] [asyncio] >>> ';
    const d = diagnose(
      [
        '  File "/x/vllm/attention/ops/prefix_prefill.py", line 639, in context_attention_fwd',
        '    assert Lk in {16, 32, 64, 128}',
        'AssertionError',
      ].map((l) => `${front}${l}`),
    );
    expect([d.category, d.line], d.reason).toEqual(['backend_assertion', 3]);
  });
});

describe("a loader's list of the ways it tried", () => {
  it("sgl-kernel's import attempts: the extension that did not link is the root, not the fallback's missing module", () => {
    const undefinedSymbol =
      '- ImportError: /x/sgl_kernel/sm100/common_ops.abi3.so: undefined symbol: _ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib';
    const d = diagnose([
      'Error details from previous import attempts:',
      undefinedSymbol,
      "- ModuleNotFoundError: No module named 'common_ops'",
    ]);
    expect([d.category, d.line], d.reason).toEqual(['import_error', 2]);
  });
});

describe("Triton's endpoint that cannot bind", () => {
  it("the root is Triton's one-line statement, not gRPC's status tree before it", () => {
    const d = diagnose([
      'E1221 09:27:15.346696872     166 chttp2_server.cc:1080]      UNKNOWN:No address added out of total 1 resolved for \'0.0.0.0:8001\' {created_time:"2023-12-21T09:27:15.346653273+00:00", children:[UNKNOWN:Address already in use {syscall:"bind"}]}',
      "E1221 09:27:15.346824 166 main.cc:244] failed to start GRPC service: Unavailable - Socket '0.0.0.0:8001' already in use",
    ]);
    expect([d.category, d.line], d.reason).toEqual(['port_in_use', 2]);
  });
});

describe('the y- dev misses: a wrapped error, a bare message, a wrapped assert line, a multi-line statement', () => {
  it("a pydantic ValidationError is read by the validator's error it carries (an architecture no model code has)", () => {
    const d = diagnose([
      ...tb(
        [['/x/vllm/config/model.py', '__post_init__', 'self._architecture = self._get_arch()']],
        'pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig',
      ),
      "  Value error, Model architectures ['FooForCausalLM'] are not supported for now. Supported architectures: dict_keys(['LlamaForCausalLM'])",
    ]);
    expect([d.category, d.phase], d.reason).toEqual(['model_load_error', 'weight_load']);
    // the validator's line names the cause; the ValidationError's own line only says a validation failed
    expect(d.root).toMatch(/^ {2}Value error, Model architectures \['FooForCausalLM'\] are not supported/);
  });

  it('a ValidationError whose validator says nothing more specific stays a configuration rejected', () => {
    const d = diagnose([
      ...tb(
        [['/x/vllm/config/cache.py', '__post_init__', 'self._verify()']],
        'pydantic_core._pydantic_core.ValidationError: 1 validation error for CacheConfig',
      ),
      '  Value error, block_size must be a multiple of 16, got 7 [type=value_error, input_value=ArgsKwargs(()), input_type=ArgsKwargs]',
    ]);
    expect(d.category, d.reason).toBe('backend_assertion');
  });

  it("load_state_dict's message logged without its type is a checkpoint that does not fit", () => {
    const d = diagnose([
      'Loading text encoder',
      'Error(s) in loading state_dict for T5EncoderModel:',
      '\tsize mismatch for shared.weight: copying a param with shape torch.Size([32128, 512]) from checkpoint, the shape in current model is torch.Size([32128, 768]).',
    ]);
    expect([d.category, d.line, d.phase], d.reason).toEqual(['model_load_error', 2, 'weight_load']);
  });

  it("a device assert wrapped after its function's name: the block/thread line with the assertion is the root", () => {
    const d = diagnose([
      '/pytorch/aten/src/ATen/native/cuda/ScatterGatherKernel.cu:367: operator():',
      '  block: [3,0,0], thread: [17,0,0] Assertion `idx_dim >= 0 && idx_dim < index_size && "index out of bounds"` failed.',
      ...tb(
        [['/x/model_runner.py', 'sync', 'torch.cuda.synchronize()']],
        'RuntimeError: CUDA error: device-side assert triggered',
      ),
    ]);
    expect(d.line, d.reason).toBe(2);
  });

  it('a source line that opens with the brackets closing a statement over several lines is source, not the exception', () => {
    // a traceback whose indentation a paste took off: the Cython frame shows no source, so its exception follows it
    const d = diagnose([
      'File "/x/ray/_private/worker.py", line 1001, in get_objects',
      '] = self.core_worker.get_objects(',
      '^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
      'File "python/ray/includes/common.pxi", line 123, in ray._raylet.check_status',
      'ray.exceptions.RayChannelTimeoutError: System error: Timed out waiting for object available to read.',
    ]);
    expect(d.line, d.reason).toBe(5);
  });

  it("an exception's repr logged with its traceback (logger.exception(repr(e))) is the root when the excerpt cuts the end", () => {
    const front = 'ERROR 04-21 06:02:08 [engine.py:161] ';
    const d = diagnose(
      [
        'AssertionError()',
        'Traceback (most recent call last):',
        '  File "/x/vllm/engine/multiprocessing/engine.py", line 159, in start',
        '    self.run_engine_loop()',
        '  File "/x/vllm/engine/multiprocessing/engine.py", line 222, in run_engine_loop',
      ].map((l) => `${front}${l}`),
    );
    expect([d.category, d.line], d.reason).toEqual(['other', 1]);
  });

  it("SGLang's PD disaggregation KV sender thread runs while requests are served", () => {
    const d = diagnose([
      'Unexpected transfer worker error for room 42',
      ...tb(
        [
          ['/x/sglang/srt/disaggregation/mooncake/conn.py', 'transfer_worker', 'self.send_kvcache(req)'],
          ['/x/sglang/srt/disaggregation/mooncake/conn.py', 'send_kvcache', 'raise KVTransferError(room)'],
        ],
        'RuntimeError: KV transfer failed for room 42',
      ),
    ]);
    expect(d.phase, d.reason).toBe('runtime');
  });
});

describe('distributed init as a start-up step', () => {
  const nccl = (body: string) => `node1:5893:5893 [0] NCCL INFO ${body}`;

  it("NCCL's communicator set-up lines are start-up milestones: a failure after only them is at startup", () => {
    const d = diagnose([
      nccl('Bootstrap : Using eth0:10.0.0.1<0>'),
      nccl('NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>'),
      'NCCL version 2.21.5+cuda12.4',
      'node1:5893:5920 [0] transport/net_ib.cc:1181 NCCL WARN NET/IB : Got completion from peer with error 12',
    ]);
    expect([d.category, d.phase], d.reason).toEqual(['nccl_error', 'startup']);
  });

  it('its channel lines are no such step: a communicator made later prints them again', () => {
    const d = diagnose([
      nccl('Channel 00/02 :    0   1'),
      nccl('Connected all rings'),
      'node1:5893:5920 [0] transport/net_ib.cc:1181 NCCL WARN NET/IB : Got completion from peer with error 12',
    ]);
    expect(d.phase, d.reason).toBe('unknown');
  });
});

describe('the z- dev misses: general facts they showed', () => {
  it("an excerpt that starts at a frame's `raise X(...)` line: the statement is code, the exception after it the root", () => {
    const d = diagnose([
      '(Actor pid=1)     raise RuntimeError(f"NCCL error: {error_str}") [repeated 4x across cluster]',
      '(Actor pid=1) RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)',
    ]);
    expect([d.category, d.line], d.reason).toEqual(['nccl_error', 2]);
  });

  it("a traceback whose exception line the excerpt garbled yields to a later one's that reads as an exception", () => {
    const d = diagnose([
      '  File "/x/ray/_private/worker.py", line 2771, in get',
      '    values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)',
      'py:1140] Model loading took 40.3 GB and 42.6 seconds',
      '  File "/x/ray/_private/worker.py", line 919, in get_objects',
      '    raise value.as_instanceof_cause()',
      'ray.exceptions.RayTaskError(ValueError): ray::RayWorkerWrapper.execute_method() (pid=10529)',
    ]);
    expect(d.line, d.reason).toBe(6);
  });

  it('vLLM before 0.9 says its weights are loaded in GB: `Model loading took 40.3172 GB and 42.6 seconds`', () => {
    const d = diagnose([
      'INFO 03-25 08:34:50 [gpu_model_runner.py:1140] Model loading took 40.3172 GB and 42.642502 seconds',
      'Traceback (most recent call last):',
      '  File "/x/app.py", line 1, in <module>',
      '    main()',
      'ValueError: too many values to unpack (expected 2)',
    ]);
    expect(d.phase, d.reason).toBe('kv_alloc');
  });

  it('a GPU required by its capability alone is an architecture requirement', () => {
    const d = diagnose([
      ...tb(
        [
          [
            '/x/text_generation_server/models/__init__.py',
            'get_model',
            'raise NotImplementedError(FLASH_ATT_ERROR_MESSAGE.format("Sharded Llama"))',
          ],
        ],
        'NotImplementedError: Sharded Llama requires a CUDA device with capability 7.5, > 8.0 or 9.0. No compatible CUDA device found.',
      ),
    ]);
    expect(d.category, d.reason).toBe('unsupported_arch');
  });
});

describe('code and progress bars a cut or a join leaves', () => {
  it('a call with an f-string whose start the excerpt cut is code, not the error its template names', () => {
    const d = diagnose([
      'r(f"NCCL error: {error_str}") [repeated 4x across cluster]',
      'RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)',
    ]);
    expect([d.category, d.line], d.reason).toEqual(['nccl_error', 2]);
  });

  it("tqdm's bar past an hour (`[1:12:34<24:31:08, 66.57s/it]`) ends a line of a joined log", () => {
    const bar = (n: number) => `  5%|▌         | ${n}/1398 [1:12:34<24:31:08, 66.57s/it]`;
    const assert =
      '../aten/src/ATen/native/cuda/Indexing.cu:1284: indexSelectLargeIndex: block: [134,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.';
    const d = diagnose([`${bar(72)} ${bar(73)} ${bar(74)}${assert}`]);
    expect(d.root, d.reason).toBe(assert);
  });
});

describe('the aa- dev misses: general facts they showed', () => {
  it("a ValidationError split off its line still reads its validator's error on the next line", () => {
    const j = 'Nov 13 01:50:23 gpu-box vllm[62501]: (APIServer pid=62501) ';
    const d = diagnose([
      `${j}pydantic_core._pydantic_core. ValidationError: 1 validation error for ModelConfig`,
      `${j}  Value error, Model architectures ['FooForCausalLM'] are not supported for now. Supported architectures: dict_keys([...])`,
    ]);
    expect([d.category, d.line], d.reason).toEqual(['model_load_error', 2]);
  });

  it('a RoPE scaling type the server has no code for is a model it cannot load', () => {
    const d = diagnose(
      tb(
        [
          ['/x/vllm/model_executor/models/llama.py', '__init__', 'self.rotary_emb = get_rope('],
          [
            '/x/vllm/model_executor/layers/rotary_embedding.py',
            'get_rope',
            'raise ValueError(f"Unknown RoPE scaling type {scaling_type}")',
          ],
        ],
        'ValueError: Unknown RoPE scaling type extended',
      ),
    );
    expect([d.category, d.phase], d.reason).toEqual(['model_load_error', 'weight_load']);
  });

  it("HCCL's failure to listen on its port is a port in use", () => {
    const d = diagnose([
      '[ERROR] HCCL(2717288,python3):2025-07-23-03:47:57.070.463 [hccl_socket.cc:100] [2717288][HcclSocket][Listen] socket type[1], listen on ip[10.0.0.1] and specific port[16666] fail. Please check the port status and whether the port is been using by other process.',
      '[ERROR] HCCL(2717288,python3):2025-07-23-03:49:57.177.194 [hccl_socket_manager.cc:778] [2734049][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]',
    ]);
    expect([d.category, d.line], d.reason).toEqual(['port_in_use', 1]);
  });

  it('a launcher that gives up waiting for the server it started is a health check that gave up', () => {
    const d = diagnose(
      tb(
        [
          ['/x/areal/infra/remote_inf_engine.py', 'launch_server', 'self._wait_for_server(address)'],
          ['/x/areal/infra/remote_inf_engine.py', '_wait_for_server', 'raise TimeoutError("server launch failed")'],
        ],
        'TimeoutError: server launch failed',
      ),
    );
    expect(d.category, d.reason).toBe('watchdog_timeout');
  });

  it("an indented exception line after a source line's carets is the exception, not more source", () => {
    const d = diagnose([
      'File "sglang/srt/managers/schedule_batch.py", line 2695, in prepare',
      '      n = _force_track_h(n)',
      '  File "sglang/srt/managers/schedule_batch.py", line 2654, in _force_track_h',
      '      assert i % chunk_size == 0',
      '             ^^^^^^^^^^^^^^^^^^^',
      '  AssertionError',
    ]);
    expect(d.line, d.reason).toBe(6);
  });
});

describe('the ab- dev misses: general facts they showed', () => {
  it("huggingface_hub's missing cache directory, logged as a record before its traceback, is a model that cannot load", () => {
    const d = diagnose([
      'INFO 06-24 15:31:45 loader.py:423] Loading weights on hpu...',
      'ERROR 06-24 15:31:46 engine.py:389] Cache directory not found: /data/hf. Please use `cache_dir` argument or set `HF_HUB_CACHE` environment variable.',
      'ERROR 06-24 15:31:46 engine.py:389] Traceback (most recent call last):',
      'ERROR 06-24 15:31:46 engine.py:389]   File "/x/vllm/engine/multiprocessing/engine.py", line 380, in run_mp_engine',
    ]);
    expect([d.category, d.line], d.reason).toEqual(['model_load_error', 2]);
  });
});
