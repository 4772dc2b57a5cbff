// Issue 11, the class from what generalises (the j- dev misses' kinds): what kernel libraries raise when the GPU
// generation is wrong, other devices' out-of-memory words, the process group's store and gloo transport, a weight name
// the model has no parameter for, the engine's bound on one step, kernel libraries' own checks, a failed CUDA runtime
// call. Each log is built from the documented messages, functions and modules the rules name (catalog/signatures.yaml).
import { describe, expect, it } from 'vitest';
import { diagnose, tb } from './diagnose.ts';

const CT = '/x/vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py';

describe('a backend that needs another GPU generation', () => {
  it("a quantization scheme's minimum capability, its tuple message cut after 'RuntimeError: ('", () => {
    const d = diagnose(
      tb(
        [
          [CT, 'get_scheme', 'self._check_scheme_supported(scheme.get_min_capability())'],
          [CT, '_check_scheme_supported', 'raise RuntimeError('],
        ],
        'RuntimeError: (',
      ),
    );
    expect(d.category, d.reason).toBe('unsupported_arch');
  });

  it("the scheme's refusal in full, wherever it was raised", () => {
    const d = diagnose([
      "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current capability: 75.')",
    ]);
    expect(d.category, d.reason).toBe('unsupported_arch');
  });

  it("FlashInfer's JIT finding no architecture of the majors a module has kernels for", () => {
    const d = diagnose(
      tb(
        [
          [
            '/x/flashinfer/jit/gemm/core.py',
            'gen_gemm_sm100_module',
            'nvcc_flags = current_compilation_context.get_nvcc_flags_list(',
          ],
          ['/x/flashinfer/compilation_context.py', 'get_nvcc_flags_list', 'raise RuntimeError('],
        ],
        'RuntimeError: No supported CUDA architectures found for major versions [10].',
      ),
    );
    expect(d.category, d.reason).toBe('unsupported_arch');
  });

  it("DeepGEMM's JIT missing the kernel header named for this GPU's architecture (its path wrapped)", () => {
    const d = diagnose([
      'RuntimeError: Assertion error (include_parser.hpp:69):',
      'Failed to open: /usr/local/lib/python3.12/dist-packages/deep_gemm/',
      'include/deep_gemm/impls/sm121_fp8_mqa_logits.cuh',
    ]);
    expect(d.category, d.reason).toBe('unsupported_arch');
  });

  it('a header that names no architecture is no arch fact', () => {
    const d = diagnose([
      'RuntimeError: Assertion error (include_parser.hpp:69): Failed to open: /x/deep_gemm/include/deep_gemm/common/utils.cuh',
    ]);
    expect(d.category, d.reason).not.toBe('unsupported_arch');
  });

  it("Triton's MMA lowering asserting that the compute capability is not supported", () => {
    const line =
      'python: ../../../lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp:36: int mlir::triton::gpu::(anonymous namespace)::getMMAVersionSafe(int, DotOp): Assertion `false && "computeCapability not supported"\' failed.';
    const d = diagnose([line]);
    expect(d.category, d.reason).toBe('unsupported_arch');
    expect(d.root).toBe(line);
  });

  it('another Triton assertion names no GPU generation', () => {
    const line =
      'python: /x/lib/Conversion/TritonGPUToLLVM/ConvertLayoutOpToLLVM.cpp:100: LogicalResult f(): Assertion `!(srcMmaLayout && dstMmaLayout) && "Unexpected mma -> mma layout conversion"\' failed.';
    expect(diagnose([line]).category).not.toBe('unsupported_arch');
  });
});

describe("other devices' words for a kernel's bad access and for memory exhausted", () => {
  it("ROCm's runtime reporting a GPU memory access fault is an illegal access", () => {
    const d = diagnose([
      '[aiter] [fused_moe] using 2stage default for (256, 1024)',
      'Memory access fault by GPU node-7 (Agent handle: 0x20916760) on address (nil). Reason: Unknown.',
    ]);
    expect(d.category, d.reason).toBe('illegal_memory_access');
  });

  it('the same line with an ECC reason is the memory failing, no access', () => {
    const d = diagnose([
      'Memory access fault by GPU node-2 (Agent handle: 0x5577) on address 0x7f00. Reason: DRAM ECC failure.',
    ]);
    expect(d.category, d.reason).toBe('other');
  });

  it("torch_npu's workspace allocator out of memory, its PTA error code after it", () => {
    const oom =
      '[rank0]:[E1204 11:18:17.728425480 compiler_depend.ts:444] NPU out of memory. NPUWorkspaceAllocator tried to allocate 187.54 MiB(NPU 0; 60.96 GiB total capacity; 61.91 MiB free).';
    const d = diagnose([
      oom,
      '',
      '[ERROR] 2025-12-04-11:18:17 (PID:186138, Device:0, RankID:0) ERR00006 PTA memory error',
      'Exception raised from malloc at build/CMakeFiles/torch_npu.dir/compiler_depend.ts:426 (most recent call first):',
    ]);
    expect(d.category, d.reason).toBe('cuda_oom');
    expect(d.root).toBe(oom);
  });

  it("ROCm PyTorch's allocator words it HIP out of memory", () => {
    const d = diagnose([
      '[rank1]:[E1204 11:18:17.728425480 HIPCachingAllocator.cpp:1100] HIP out of memory. Tried to allocate 2.00 GiB.',
    ]);
    expect(d.category, d.reason).toBe('cuda_oom');
  });
});

describe("the process group's store and gloo's transport", () => {
  it("c10d's store client timing out (two ranks' lines interleaved), then torchrun's report of the child", () => {
    const d = diagnose([
      'torch.distributed.DistNetworkErrortorch.distributed: .The client socket has timed out after 600000ms while trying to connect to (10.0.0.1, 29500).DistNetworkError',
      ': The client socket has timed out after 600000ms while trying to connect to (10.0.0.1, 29500).',
      'E1026 17:31:34.002000 139984755545088 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) local_rank: 0 (pid: 167240) of binary: /usr/bin/python',
    ]);
    expect(d.category, d.reason).toBe('nccl_error');
  });

  it('a gloo transport error printed on its own', () => {
    const d = diagnose([
      '[E ProcessGroupGloo.cpp:138] [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.2]:4981',
    ]);
    expect(d.category, d.reason).toBe('nccl_error');
  });
});

describe('a weight the model has no parameter for', () => {
  it('a KeyError for a dotted parameter name, the excerpt keeping only that line', () => {
    const d = diagnose(["KeyError: 'layers.22.mlp.gate_up_proj.weight'"]);
    expect(d.category, d.reason).toBe('model_load_error');
  });

  it("a quantized expert's scale", () => {
    expect(diagnose(["KeyError: 'model.layers.3.mlp.experts.w2_weight_scale_inv'"]).category).toBe('model_load_error');
  });

  it("a KeyError for a request's id or a number is no weight", () => {
    expect(diagnose(["KeyError: 'dc49ad867dc144249f59f4e85c7229cd'"]).category).toBe('other');
    expect(diagnose(['KeyError: 37']).category).toBe('other');
  });
});

const V0 = '/x/vllm/engine/async_llm_engine.py';
const SHM = '/x/vllm/distributed/device_communicators/shm_broadcast.py';

describe("the engine's bound on one model step is its watchdog", () => {
  it("vLLM V0's engine loop timing out an engine step", () => {
    const d = diagnose(
      tb(
        [
          [V0, 'run_engine_loop', 'has_requests_in_progress = await asyncio.wait_for('],
          ['/usr/lib/python3.10/asyncio/tasks.py', 'wait_for', 'raise exceptions.TimeoutError() from exc'],
        ],
        'asyncio.exceptions.TimeoutError',
      ),
    );
    expect(d.category, d.reason).toBe('watchdog_timeout');
  });

  it("vLLM V1's executor timing out the workers' step on its shared-memory queue", () => {
    const d = diagnose([
      ...tb([[SHM, 'acquire_read', 'raise TimeoutError']], 'TimeoutError'),
      '',
      'The above exception was the direct cause of the following exception:',
      '',
      ...tb(
        [
          ['/x/vllm/v1/engine/core.py', 'run_busy_loop', 'self._process_engine_step()'],
          [
            '/x/vllm/v1/executor/multiproc_executor.py',
            'collective_rpc',
            'raise TimeoutError(f"RPC call to {method} timed out.") from e',
          ],
        ],
        'TimeoutError: RPC call to execute_model timed out.',
      ),
    ]);
    expect(d.category, d.reason).toBe('watchdog_timeout');
  });

  it('the same queue timing out while the weights load is no step', () => {
    const d = diagnose([
      'INFO 08-07 19:01:00 [gpu_model_runner.py:1800] Starting to load model /models/x...',
      ...tb([[SHM, 'acquire_read', 'raise TimeoutError']], 'TimeoutError'),
    ]);
    expect(d.category, d.reason).not.toBe('watchdog_timeout');
  });

  it('any other wait that timed out is not by itself', () => {
    const d = diagnose(
      tb([['/x/app/client.py', 'fetch', 'return await asyncio.wait_for(f, 5)']], 'asyncio.exceptions.TimeoutError'),
    );
    expect(d.category, d.reason).not.toBe('watchdog_timeout');
  });
});

describe("kernel libraries' own checks, and a CUDA call that failed", () => {
  it("an assert in vLLM's FlashInfer FP4 GEMM wrapper is the kernel refusing its operands", () => {
    const d = diagnose(
      tb(
        [['/x/vllm/utils/flashinfer.py', 'flashinfer_scaled_fp4_mm', 'assert a.shape[1] == b.shape[1]']],
        'AssertionError',
      ),
    );
    expect(d.category, d.reason).toBe('backend_assertion');
  });

  it("AITER's dispatch refusing a kernel it has no implementation of", () => {
    const d = diagnose(
      tb(
        [
          [
            '/x/aiter/ops/flydsl/moe_kernels.py',
            'get_kernel',
            'raise ValueError(f"Invalid FlyDSL kernel name: {kernelName}")',
          ],
        ],
        'ValueError: Invalid FlyDSL kernel name: flydsl_moe1_afp4_wfp4_bf16_t16x128x256',
      ),
    );
    expect(d.category, d.reason).toBe('backend_assertion');
  });

  it("a CUDA runtime call's error string ('operation not supported') is no setting refused", () => {
    const d = diagnose([
      'RuntimeError: [TM][ERROR] CUDA runtime error: operation not supported /lmdeploy/src/turbomind/utils/allocator.h:197',
    ]);
    expect(d.category, d.reason).toBe('other');
  });

  it('a device the configuration names that the node does not have is refused', () => {
    const d = diagnose(['ValueError: The requested device for vllm (cuda:1) is not available.']);
    expect(d.category, d.reason).toBe('backend_assertion');
  });
});

describe("a model hub's request and NCCL's result codes in other programs' words", () => {
  it("a Rust hub client's request to NGC that failed is the model not fetched", () => {
    const d = diagnose([
      '[09-25 19:03:45.989 ERROR  nim_sdk::hub::repo  rust/nim-sdk/src/hub/repo.rs:119] error sending request for url (https://api.ngc.nvidia.com/v2/org/nim/team/meta/models/llama-3_1-70b-instruct/files)',
      'Traceback (most recent call last):',
      '  File "/opt/nim/llm/vllm_nvext/entrypoints/args.py", line 155, in prepare_environment',
    ]);
    expect(d.category, d.reason).toBe('model_load_error');
  });

  it('a request to any other host is no hub download', () => {
    const d = diagnose(['ERROR  x::client] error sending request for url (http://10.0.0.5:8000/v1/models)']);
    expect(d.category, d.reason).not.toBe('model_load_error');
  });

  it("NCCL's result code rendered in title case after a C++ exception's what()", () => {
    const d = diagnose([
      'When I run offline inference it returns an error: the actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR',
      'The actor never ran - it was cancelled before it started running.',
      '',
      'Unhandled exception: St13runtime_error. what(): NCCL Error 5: invalid usage',
    ]);
    expect(d.category, d.reason).toBe('nccl_error');
  });
});

describe("the runtimes' own names for the same failures (no dev case moves: upstream's documented words)", () => {
  it("Triton refusing an fp8 type the GPU generation lacks, inside the kernel's CompilationError", () => {
    const d = diagnose([
      'triton.compiler.errors.CompilationError: at 1:0:',
      'def fused_moe_kernel(',
      '^',
      "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")",
    ]);
    expect(d.category, d.reason).toBe('unsupported_arch');
  });

  it("HIP's no code object for this GPU is no kernel image", () => {
    const d = diagnose([
      'RuntimeError: HIP error: hipErrorNoBinaryForGpu: Unable to find code object for all current devices!',
    ]);
    expect(d.category, d.reason).toBe('unsupported_arch');
  });

  it("cuDNN's architecture mismatch status", () => {
    expect(diagnose(['RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH']).category).toBe(
      'unsupported_arch',
    );
  });

  it("the runtimes' enum names for an allocation that failed, outside any exception", () => {
    expect(diagnose(['hipErrorOutOfMemory: out of memory at /x/ck/device_memory.hpp:31']).category).toBe('cuda_oom');
  });

  it("the process group's heartbeat monitor finding its watchdog stuck is a collective that hung", () => {
    // the monitor's own line says how the process ends; the watchdog stuck, printed after it, says why
    const stuck =
      "[rank1]:[E1104 10:00:00.000000000 ProcessGroupNCCL.cpp:1377] [PG ID 0 PG GUID 0(default_pg) Rank 1] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.";
    const d = diagnose([
      '[rank1]:[E1104 10:00:00.000000000 ProcessGroupNCCL.cpp:1375] [PG ID 0 PG GUID 0(default_pg) Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1',
      stuck,
    ]);
    expect(d.category, d.reason).toBe('nccl_error');
    expect(d.root).toBe(stuck);
  });

  it("load_state_dict's size mismatch is a checkpoint that does not fit the model", () => {
    const d = diagnose([
      'RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:',
      '\tsize mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([32000, 4096]) from checkpoint, the shape in current model is torch.Size([32001, 4096]).',
    ]);
    expect(d.category, d.reason).toBe('model_load_error');
  });
});

describe('words that a refusal rule must not read as a setting refused', () => {
  it("transformers refusing to run a repository's own code names a model that cannot be loaded", () => {
    const d = diagnose([
      'ValueError: Loading /models/x requires you to execute the configuration file in that repo on your local machine. Make sure you have read the code there to avoid malicious use, then set the option `trust_remote_code=True` to remove this error.',
    ]);
    expect(d.category, d.reason).toBe('model_load_error');
  });

  it("autograd's 'requires grad' is no requirement of a setting", () => {
    const d = diagnose(['RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.']);
    expect(d.category, d.reason).toBe('other');
  });
});

describe('where a check sits and what memory ran out', () => {
  it("a layer's weight loader finding a tensor that does not fit is the checkpoint, not a backend refusing a setting", () => {
    const d = diagnose(
      tb(
        [
          ['/x/vllm/model_executor/models/llama.py', 'load_weights', 'weight_loader(param, loaded_weight)'],
          [
            '/x/vllm/model_executor/layers/linear.py',
            'weight_loader',
            'assert param_data.shape == loaded_weight.shape',
          ],
        ],
        'AssertionError',
      ),
    );
    expect(d.category, d.reason).toBe('model_load_error');
  });

  it('a quantized layer refusing the tensor parallel size when it creates its weights stays a setting refused', () => {
    const d = diagnose(
      tb(
        [
          [
            '/x/vllm/model_executor/model_loader/loader.py',
            'load_model',
            'model = _initialize_model(vllm_config=vllm_config)',
          ],
          ['/x/vllm/model_executor/layers/quantization/gptq_marlin.py', 'create_weights', 'raise ValueError(msg)'],
        ],
        'ValueError: The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size.',
      ),
    );
    expect(d.category, d.reason).toBe('backend_assertion');
  });

  it("PyTorch's CPU allocator running out is the host's memory, no GPU's", () => {
    const d = diagnose([
      'RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate 8589934592 bytes.',
    ]);
    expect(d.category, d.reason).toBe('other');
  });

  it("torch elastic's rendezvous that timed out is the ranks never forming their group", () => {
    expect(diagnose(['torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError']).category).toBe('nccl_error');
  });

  it("init_process_group's store-based barrier timing out", () => {
    const d = diagnose([
      'RuntimeError: Timed out initializing process group in store based barrier on rank: 1, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)',
    ]);
    expect(d.category, d.reason).toBe('nccl_error');
  });
});

describe("XLA's device allocator", () => {
  it('an HBM buffer that could not be allocated is device memory exhausted', () => {
    const d = diagnose([
      'jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 1.00G. That was not possible. There are 500.00M free.',
    ]);
    expect(d.category, d.reason).toBe('cuda_oom');
  });
});
