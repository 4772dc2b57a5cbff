// Where `none` ends and a crash begins, decided by what the process does after the line (upstream source): ROCm's
// runtime aborts after a GPU memory access fault; PyTorch's build without the GPU's architecture fails at its first
// kernel; SGLang's router logs each failed health check of a worker it waits for and tries again.
import { describe, expect, it } from 'vitest';
import { diagnoseText } from '../../src/logs/classify/index.ts';
import { readPrefix } from '../../src/logs/classify/lineinfo.ts';
import { routineFailure } from '../../src/logs/classify/records.ts';

const classify = (lines: string[]) => diagnoseText(`${lines.join('\n')}\n`).classification;

describe('crashes that print no traceback', () => {
  it("ROCm's memory access fault is an illegal memory access (the runtime aborts after it)", () => {
    const c = classify([
      '[2026-02-17 23:52:12 TP7] [fused_moe] using 2stage default for (256, 1024, 6144)',
      'Memory access fault by GPU node-7 (Agent handle: 0x20916760) on address (nil). Reason: Unknown.',
    ]);
    expect([c.category, c.evidence[0]?.line]).toEqual(['illegal_memory_access', 2]);
  });

  it("PyTorch's warning that its build has no kernels for the GPU is no crash; the kernels' failure after it is", () => {
    const warn = [
      '/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:287: UserWarning: ',
      'NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.',
      'The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.',
    ];
    // a warning torch prints at import (torch/cuda/__init__.py, warnings.warn): no crash by itself
    expect(classify(warn).category).toBe('none');
    // the kernels' own failure, where it is printed, names the crash as before
    const later = classify([
      ...warn,
      'RuntimeError: CUDA error: no kernel image is available for execution on the device',
    ]);
    expect([later.category, later.evidence[0]?.line]).toEqual(['unsupported_arch', 4]);
    // a server that serves after it did not die of it
    const served = classify([
      ...warn,
      '[2025-01-01 10:00:00 TP0] Decode batch. #running-req: 1, #token: 64, token usage: 0.00, gen throughput (token/s): 84.39',
    ]);
    expect(served.category).toBe('none');
  });
});

describe('failures a program handles routinely', () => {
  const router = [
    '2025-10-07 23:31:33 DEBUG sglang_router_rs::grpc_client::sglang_scheduler: src/grpc_client/sglang_scheduler.rs:28: Connecting to SGLang scheduler at grpc://localhost:20001',
    '2025-10-07 23:31:33 ERROR sglang_router_rs::core::worker: src/core/worker.rs:517: Failed to connect gRPC client for worker grpc://localhost:20000: transport error',
    '2025-10-07 23:31:33 DEBUG sglang_router_rs::core::worker_manager: src/core/worker_manager.rs:1031: Worker grpc://localhost:20000 health check failed: Connection failed for worker grpc://localhost:20000: Failed to connect to gRPC server: transport error',
  ];

  it("a failure logged at DEBUG (the router's failed health check of a worker it waits for) is handled: no crash", () => {
    expect(routineFailure(readPrefix(router[2] as string), router[2] as string)).toBe(true);
    expect(routineFailure(readPrefix(router[1] as string), router[1] as string)).toBe(false);
    expect(classify(router).category).toBe('none');
  });

  it('a DEBUG failure of another target clears no record before it: only itself is no failure', () => {
    const c = classify([
      '2026-12-01 10:00:05 ERROR sglang_router::server: failed to start the router: worker grpc://10.0.0.2:30000 failed its start-up check',
      '2026-12-01 10:00:05 DEBUG sglang_router::core::worker: health check failed: connection refused, shutting down',
    ]);
    expect([c.category, c.evidence[0]?.line]).toEqual(['other', 1]);
    // a DEBUG failure alone is none
    expect(classify([router[2] as string]).category).toBe('none');
  });

  it('an ERROR record with nothing after it is still the crash', () => {
    const c = classify(router.slice(0, 2));
    expect([c.category, c.evidence[0]?.line]).toEqual(['other', 2]);
  });
});

describe('notices a host prints on every start, wherever they come in the log', () => {
  const ready = [
    '[2025-01-01 10:00:01] Load weight begin. avail mem=70.00 GB',
    '[2025-01-01 10:00:31] The server is fired up and ready to roll!',
  ];
  const notices = {
    // torch 2.5.0 on an arm64 CPU without SVE (pytorch/pytorch#138333)
    sve: 'Error in cpuinfo: prctl(PR_SVE_GET_VL) failed',
    // an RDMA provider for a NIC the host lacks (rdma-core, libibverbs/dynamic_driver.c)
    ibverbs:
      "libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': libvmw_pvrdma-rdmav34.so: cannot open shared object file: No such file or directory",
  };
  for (const [name, line] of Object.entries(notices)) {
    it(`${name}: no crash before the ready line, after it, or in a container's wrapper`, () => {
      expect(classify([line, ...ready]).category).toBe('none');
      expect(classify([...ready, line]).category).toBe('none');
      expect(classify([...ready, `sglang-1  | ${line}`]).category).toBe('none');
    });
  }
  it('a failure after such a notice is still told', () => {
    const c = classify([notices.sve, ...ready, 'RuntimeError: CUDA error: an illegal memory access was encountered']);
    expect(c.category).toBe('illegal_memory_access');
  });
});

// NumPy 2's guard for an extension built against NumPy 1.x (numpy/core/_multiarray_umath.py, __getattr__): the banner,
// then `Traceback (most recent call last):` with the importing stack written right after it (format_stack, so the
// first frame shares the header's line), then the old extension's import_array() prints `AttributeError: _ARRAY_API
// not found`. The importer decides: torch warns and goes on; another extension's import fails with its own traceback.
describe("NumPy's notice for an extension built against NumPy 1.x", () => {
  const banner = [
    '',
    'A module that was compiled using NumPy 1.x cannot be run in',
    'NumPy 2.1.3 as it may crash. To support both 1.x and 2.x',
    'versions of NumPy, modules must be compiled with NumPy 2.0.',
    "Some module may need to rebuild instead e.g. with 'pybind11>=2.12'.",
    '',
    'If you are a user of the module, the easiest solution will be to',
    "downgrade to 'numpy<2' or try to upgrade the affected module.",
    'We expect that some modules will need time to support NumPy 2.',
    '',
  ];
  const stack = [
    'Traceback (most recent call last):  File "<frozen runpy>", line 198, in _run_module_as_main',
    '  File "<frozen runpy>", line 88, in _run_code',
    '  File "/usr/local/lib/python3.11/site-packages/sglang/launch_server.py", line 6, in <module>',
    '    from sglang.srt.server_args import prepare_server_args',
    '  File "/usr/local/lib/python3.11/site-packages/torch/functional.py", line 9, in <module>',
    '    import torch.nn.functional as F',
  ];
  const torchGoesOn = [
    '/usr/local/lib/python3.11/site-packages/torch/_subclasses/functional_tensor.py:258: UserWarning: Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at ../torch/csrc/utils/tensor_numpy.cpp:84.)',
    '  cpu = _conversion_method_template(device=torch.device("cpu"))',
  ];
  const ready = [
    '[2025-03-01 10:00:05 TP0] Load weight begin. avail mem=78.50 GB',
    '[2025-03-01 10:00:32] The server is fired up and ready to roll!',
  ];

  it('its banner and stack are no crash: under torch, cut where the excerpt ends, or with the bare exception line', () => {
    expect(classify([...banner, ...stack, ...torchGoesOn, ...ready]).category).toBe('none');
    expect(classify([...banner, ...stack, ...torchGoesOn]).category).toBe('none');
    expect(classify([...banner, ...stack]).category).toBe('none');
    expect(classify([...banner, ...stack, 'AttributeError: _ARRAY_API not found', ...ready]).category).toBe('none');
    expect(classify([...banner, 'AttributeError: _ARRAY_API not found']).category).toBe('none');
    expect(classify(banner.map((l) => `sglang-1  | ${l}`)).category).toBe('none');
  });

  it("the importer's own failure after it is the crash", () => {
    const lines = [
      ...banner,
      ...stack,
      'AttributeError: _ARRAY_API not found',
      'Traceback (most recent call last):',
      '  File "/usr/local/lib/python3.11/site-packages/cv2/__init__.py", line 181, in bootstrap',
      '    native_module = importlib.import_module("cv2")',
      'ImportError: numpy.core.multiarray failed to import',
    ];
    const c = classify(lines);
    expect([c.category, c.evidence[0]?.line]).toEqual(['import_error', lines.length]);
  });

  it('only the stack right after the banner is its own: a traceback later on is a crash again', () => {
    // (the banner ends in a blank line; its stack starts on the next one, or one later in a paste)
    const c = classify([
      ...banner,
      "[2025-03-01 10:00:01] server_args=ServerArgs(model_path='Qwen/Qwen2.5-7B-Instruct', tp_size=1)",
      ...ready.slice(0, 1),
      'Traceback (most recent call last):',
      '  File "/usr/local/lib/python3.11/site-packages/sglang/srt/model_executor/model_runner.py", line 300, in load_model',
      '    self.model = get_model(model_config=self.model_config)',
      'RuntimeError: CUDA error: an illegal memory access was encountered',
    ]);
    expect(c.category).toBe('illegal_memory_access');
    // a second stack after the first one was read is no longer the notice's
    const twice = classify([
      ...banner,
      ...stack,
      'Traceback (most recent call last):',
      '  File "/app/serve.py", line 3, in <module>',
      'RuntimeError: CUDA error: an illegal memory access was encountered',
    ]);
    expect(twice.category).toBe('illegal_memory_access');
  });

  it('a server that then exits with a failing status is no `none`', () => {
    const c = diagnoseText(`${[...banner, ...stack].join('\n')}\n`, { exit: { code: 1, signal: null } });
    expect(c.classification.category).not.toBe('none');
  });
});

// xformers logs a failed `import triton` with exc_info=True (xformers/__init__.py, _is_triton_available) and goes on.
describe("xformers' notice that no matching Triton is available", () => {
  const notice = [
    'A matching Triton is not available, some optimizations will not be enabled',
    'Traceback (most recent call last):',
    '  File "/usr/local/lib/python3.10/dist-packages/xformers/__init__.py", line 57, in _is_triton_available',
    '    import triton  # noqa',
    "ModuleNotFoundError: No module named 'triton'",
  ];
  const loads = '[2025-03-01 10:00:05 TP0] Load weight begin. avail mem=78.50 GB';

  it("is no crash, with no level (no logging configured) or under a logger's prefix", () => {
    expect(classify([...notice, loads]).category).toBe('none');
    expect(classify(notice).category).toBe('none');
    expect(classify([`WARNING:xformers:${notice[0]}`, ...notice.slice(1), loads]).category).toBe('none');
  });

  it('the same missing module raised later, outside the notice, is still a crash', () => {
    const c = classify([
      ...notice,
      loads,
      'Traceback (most recent call last):',
      '  File "/app/serve.py", line 3, in <module>',
      '    import triton',
      "ModuleNotFoundError: No module named 'triton'",
    ]);
    expect([c.category, c.evidence[0]?.line]).toEqual(['import_error', 10]);
  });
});
