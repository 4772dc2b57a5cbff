// The class decision on the n- round's dev misses: the documented messages of the libraries and servers that print
// them (pydantic, c10d, ggml, Ray, systemd, TGI, vLLM's pynccl wrapper, the custom-op modules' import warnings), each
// in a small log built for the test.
import { describe, expect, it } from 'vitest';
import { diagnose, tb } from './diagnose.ts';

describe("the custom-op modules' warning that an optional extension is missing", () => {
  it('is no crash when the module is not there (ModuleNotFoundError), even with no level on the line', () => {
    const d = diagnose([
      '[2026-01-05 09:00:01 TP0] Init torch distributed begin.',
      `[2026-01-05 09:00:02 TP0] Failed to import from custom_ar with ModuleNotFoundError("No module named 'some_kernel'")`,
      '[2026-01-05 09:00:03 TP0] Init torch distributed ends. mem usage=0.00 GB',
    ]);
    expect(d.category).toBe('none');
  });
  it('stays an import error when the extension is there but does not load (ImportError: undefined symbol)', () => {
    const line =
      "WARNING 01-05 09:00:02 _custom_ops.py:14] Failed to import from vllm._C with ImportError('/x/vllm/_C.abi3.so: undefined symbol: _ZN3c104impl3fooEv')";
    expect(diagnose([line]).category).toBe('import_error');
  });
});

describe("a logger's name that holds a failure word", () => {
  it("uvicorn's `uvicorn.error` logger at INFO states no failure", () => {
    const d = diagnose([
      '2026-01-05 10:00:00,001 myserver.api 4242 INFO     Starting the API at endpoint: http://0.0.0.0:8000',
      '2026-01-05 10:00:00,101 uvicorn.error 4242 INFO     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)',
    ]);
    expect(d.category).toBe('none');
  });
});

describe("pydantic's rendering of a validator's ValueError", () => {
  it('`Value error, <message>` alone is that ValueError: a refused setting is backend_assertion', () => {
    const line =
      'Value error, max_num_seqs (2048) must be less than or equal to max_num_batched_tokens (1024). [type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]';
    expect(diagnose([line])).toMatchObject({ category: 'backend_assertion', root: line });
  });
});

describe('a check that lists the values it allows', () => {
  it('`Only {...} backends are supported ... Got x` is backend_assertion', () => {
    const line =
      "AssertionError: Only {'triton', 'fa3'} backends are supported for sliding-window models on this platform. Got attention_backend=torch_native.";
    expect(diagnose([line])).toMatchObject({ category: 'backend_assertion', root: line });
  });
});

describe("TGI's checkpoint reader", () => {
  it('a tensor no file holds (utils/weights.py get_filename) is model_load_error', () => {
    const exc = 'RuntimeError: weight model.layers.5.mlp.up_proj.weight does not exist';
    const lines = tb(
      [
        [
          '/opt/x/text_generation_server/models/custom_modeling/flash_llama_modeling.py',
          '__init__',
          'self.up = load(prefix)',
        ],
        [
          '/opt/x/text_generation_server/utils/weights.py',
          'get_sharded',
          'filename, tensor_name = self.get_filename(tensor_name)',
        ],
        [
          '/opt/x/text_generation_server/utils/weights.py',
          'get_filename',
          'raise RuntimeError(f"weight {tensor_name} does not exist")',
        ],
      ],
      exc,
    );
    expect(diagnose(lines)).toMatchObject({ category: 'model_load_error', root: exc });
  });
});

describe('the host out of memory while a checkpoint is mapped', () => {
  it("mmap's ENOMEM under the weights iterator is no model load error (the file is fine): other", () => {
    const exc =
      'RuntimeError: unable to mmap 4294967296 bytes from file </data/models/m/model-00001-of-00004.safetensors>: Cannot allocate memory (12)';
    const lines = tb(
      [
        [
          '/x/vllm/model_executor/model_loader/default_loader.py',
          'get_all_weights',
          'yield from self._get_weights_iterator(source)',
        ],
        [
          '/x/vllm/model_executor/model_loader/weight_utils.py',
          'safetensors_weights_iterator',
          'with safe_open(st_file, framework="pt") as f:',
        ],
      ],
      exc,
    );
    expect(diagnose(lines)).toMatchObject({ category: 'other', root: exc });
  });
});

describe("c10d's collective check (TORCH_DISTRIBUTED_DEBUG=DETAIL)", () => {
  it('ranks that ran different collectives are nccl_error', () => {
    const exc =
      'RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=8, OpType=ALLREDUCE), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=8, OpType=BROADCAST).';
    expect(diagnose([exc])).toMatchObject({ category: 'nccl_error', root: exc });
  });
});

describe('a shared library that cannot be loaded, in a record', () => {
  it("vLLM's pynccl wrapper naming the NCCL library it could not load is import_error", () => {
    const line =
      'ERROR 01-05 11:00:00 pynccl_wrapper.py:80] Failed to load NCCL library from libnccl.so.2. It is expected if you are not running on NVIDIA/AMD GPUs.';
    expect(diagnose([line])).toMatchObject({ category: 'import_error', root: line });
  });
  it("an error record carrying dlopen's message is import_error", () => {
    const line =
      '2026-01-05 11:00:00,123 someapp.api 7 ERROR    [pid=7] libcublasLt.so.12: cannot open shared object file: No such file or directory';
    expect(diagnose([line])).toMatchObject({ category: 'import_error', root: line });
  });
});

describe("Ray's control plane losing a node", () => {
  it('a node marked dead for missed heartbeats is a crash (other)', () => {
    const line =
      '(raylet) The node with node id: abc123 and address: 10.1.2.3 and node name: 10.1.2.3 has been marked dead because the detector has missed too many heartbeats from it.';
    expect(diagnose(['2026-01-05 12:00:00,000\tINFO worker.py:1 -- Connected to Ray cluster.', line])).toMatchObject({
      category: 'other',
      root: line,
    });
  });
});

describe("ggml's CUDA buffer allocation failing", () => {
  it("is cuda_oom, whatever the wrapper's exception after it says", () => {
    const oom =
      'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 512.00 MiB on device 1: cudaMalloc failed: out of memory';
    const d = diagnose([
      oom,
      'llama_init_from_model: failed to allocate compute buffers',
      ...tb(
        [['/home/u/app.py', '<module>', 'llm = Llama(model_path=p)']],
        'ValueError: Failed to create llama_context',
      ),
    ]);
    expect(d).toMatchObject({ category: 'cuda_oom', root: oom });
  });
});

describe("a supervisor's failed health check of the server it runs", () => {
  it('`Error checking <x> health: ...` at ERROR is watchdog_timeout', () => {
    const line =
      "ERROR:myorch.worker.manager:Error checking model instance health: HTTPConnectionPool(host='127.0.0.1', port=41000): Max retries exceeded with url: /health";
    expect(diagnose([line, 'INFO:myorch.worker.manager:Stopped model instance m-1 with pid 77.'])).toMatchObject({
      category: 'watchdog_timeout',
      root: line,
    });
  });
});

describe('an assert that holds the parallel size against the visible devices', () => {
  it('is backend_assertion, even when a warning naming the compute capability follows', () => {
    const exc = 'AssertionError: not enough GPUs for the shards';
    const lines = [
      ...tb(
        [
          [
            '/opt/x/server/utils/dist.py',
            'initialize_distributed',
            'assert world_size <= torch.cuda.device_count(), "not enough GPUs for the shards"',
          ],
        ],
        exc,
      ),
      'WARNING: Compute capability < 7.5 detected! Only slow 8-bit matmul is supported for your GPU!',
    ];
    expect(diagnose(lines)).toMatchObject({ category: 'backend_assertion', root: exc });
  });
});

describe("systemd's report of a service's process killed with a core dump", () => {
  it('is a crash (other), that line its root', () => {
    const line = 'Jan 05 13:00:01 host1 systemd[1]: myllm.service: Main process exited, code=dumped, status=6/ABRT';
    expect(
      diagnose([
        'Jan 05 13:00:00 host1 systemd[1]: Started My LLM Service.',
        line,
        "Jan 05 13:00:01 host1 systemd[1]: myllm.service: Failed with result 'core-dump'.",
      ]),
    ).toMatchObject({ category: 'other', root: line });
  });
});

describe('a refusal worded as `X does not support Y` (or an unknown method) raised under capture or loading frames', () => {
  // corpus/README's precedence: the cause the log names (a setting refused) beats the phase it was raised in
  const capture: [string, string, string][] = [
    ['/x/sglang/srt/model_executor/cuda_graph_runner.py', 'capture', 'self.capture_one_batch_size(bs)'],
    ['/x/sglang/srt/model_executor/cuda_graph_runner.py', 'capture_one_batch_size', 'run_once()'],
  ];
  const loading: [string, string, string][] = [
    ['/x/vllm/model_executor/model_loader/default_loader.py', 'load_model', 'self.load_weights(model, cfg)'],
    ['/x/vllm/model_executor/models/mymodel.py', 'load_weights', 'param.weight_loader(param, w)'],
  ];
  it('is a configuration rejected, as the same check worded `is not supported` is', () => {
    for (const exc of [
      'NotImplementedError: The chosen kernel does not support a page size above 1.',
      'ValueError: Unknown quantization method: fancyq',
    ]) {
      expect(diagnose(tb(capture, exc)).category, exc).toBe('backend_assertion');
      expect(diagnose(tb(loading, exc)).category, exc).toBe('backend_assertion');
    }
  });
  it('leaves a capture-time message and a checkpoint that does not fit to their frame rules', () => {
    expect(diagnose(tb(capture, 'RuntimeError: this op does not support stream capture')).category).toBe(
      'cuda_graph_capture_failed',
    );
    expect(
      diagnose(tb(loading, 'AssertionError: param shape (64, 32) does not match the loaded (32, 32)')).category,
    ).toBe('model_load_error');
  });
});

describe('review of the n- round rules', () => {
  const weights: [string, string, string][] = [
    ['/x/vllm/model_executor/model_loader/loader.py', 'load_model', 'model.load_weights(weights)'],
    ['/x/vllm/model_executor/model_loader/weight_utils.py', 'safetensors_weights_iterator', 'torch.load(f, mmap=True)'],
  ];

  it('an mmap that fails for a reason of the file (a device that cannot map it) is still the checkpoint', () => {
    const exc =
      'RuntimeError: unable to mmap 4976698672 bytes from file </mnt/fuse/m/pytorch_model-00001-of-00002.bin>: No such device (19)';
    expect(diagnose(tb(weights, exc)).category).toBe('model_load_error');
  });

  it("TGI's upper-case WORLD_SIZE checked against the device count is a parallel layout refused", () => {
    const exc = 'AssertionError: Each process is one gpu';
    const frames: [string, string, string][] = [
      [
        '/opt/conda/lib/python3.11/site-packages/text_generation_server/utils/dist.py',
        'initialize_torch_distributed',
        'assert WORLD_SIZE <= torch.cuda.device_count(), "Each process is one gpu"',
      ],
    ];
    expect(diagnose(tb(frames, exc)).category).toBe('backend_assertion');
  });

  it("a network device that does not support a feature is no GPU's generation", () => {
    const exc =
      'RuntimeError: NCCL error: unhandled system error. Last error: the InfiniBand device does not support GPUDirect RDMA';
    expect(diagnose([exc]).category).toBe('nccl_error');
  });

  it("a supervisor's failed health poll while the server loads is past once it is ready; never ready, it is the cause", () => {
    const poll =
      "2025-03-10T10:00:21+00:00 - gpustack.worker.serve_manager - ERROR - Error checking model instance health: HTTPConnectionPool(host='127.0.0.1', port=40001): Max retries exceeded with url: /v1/models";
    const loading = 'INFO 03-10 10:00:20 [model_runner.py:1110] Starting to load model Qwen/Qwen2.5-7B-Instruct...';
    const ready = [
      'INFO 03-10 10:00:45 [api_server.py:1090] Starting vLLM API server on http://0.0.0.0:40001',
      'INFO:     Application startup complete.',
    ];
    expect(diagnose([loading, poll, poll, ...ready]).category).toBe('none');
    expect(diagnose([loading, poll, poll]).category).toBe('watchdog_timeout');
  });

  it("Ray's node-dead notice with vLLM's engine generating after it is survived; at the log's end it is the crash", () => {
    const ready = [
      'INFO 03-10 10:00:45 [api_server.py:1090] Starting vLLM API server on http://0.0.0.0:8000',
      'INFO:     Application startup complete.',
    ];
    const dead =
      'WARNING 03-10 11:15:30 [worker.py:1866] The node with node id: 9426f4 and address: 10.1.0.3 and node name: 10.1.0.3 has been marked dead because the detector has missed too many heartbeats from it.';
    const stats = (gen: string) =>
      `INFO 03-10 11:16:00 [metrics.py:455] Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: ${gen} tokens/s, Running: 1 reqs`;
    expect(diagnose([...ready, dead, stats('50.0')]).category).toBe('none');
    // a hung engine logs its requests still running and nothing generated
    expect(diagnose([...ready, dead, stats('0.0')]).category).toBe('other');
  });
});
