// Issue 11, the R3 review's inputs: lines a signature read as a crash though the program logs them as a warning, a
// retry or a notice (PyTorch's arch warning at import, a hub request retried, gloo's warning while serving, the
// heartbeat monitor after a stop), and a missing kernel header of an architecture the library ships. Each log is the
// reviewer's repro, line for line.
import { describe, expect, it } from 'vitest';
import { diagnose } from './diagnose.ts';

const ready = '[2026-12-01 10:00:00] The server is fired up and ready to roll!';
const loading = [
  '[2026-12-01 09:59:05 TP0] Load weight begin. avail mem=78.00 GB',
  '[2026-12-01 09:59:30 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.00 GB',
];

describe("PyTorch's warning at import that its build lacks the GPU's architecture", () => {
  const warn =
    '/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:235: UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.';

  it('is no crash on its own, nor when the server then reaches ready', () => {
    expect(diagnose([warn]).category).toBe('none');
    const d = diagnose([
      warn,
      '[2026-12-01 10:00:00 TP0] Load weight begin. avail mem=30.00 GB',
      '[2026-12-01 10:00:30 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=20.00 GB',
      '[2026-12-01 10:01:00] The server is fired up and ready to roll!',
    ]);
    expect(d.category, d.reason).toBe('none');
  });

  it('does not beat a later cause: an NCCL error after it is the crash', () => {
    const nccl =
      'torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5';
    const d = diagnose([
      warn,
      '[2026-12-01 10:00:00 TP0] Load weight begin. avail mem=30.00 GB',
      'Traceback (most recent call last):',
      '  File "/x/torch/distributed/distributed_c10d.py", line 12, in all_reduce',
      '    work = group.allreduce([tensor], opts)',
      nccl,
    ]);
    expect([d.category, d.root]).toEqual(['nccl_error', nccl]);
  });

  it('the kernels failing on it, where printed, name the unsupported architecture', () => {
    const noKernel = 'RuntimeError: CUDA error: no kernel image is available for execution on the device';
    const d = diagnose([warn, noKernel]);
    expect([d.category, d.root]).toEqual(['unsupported_arch', noKernel]);
  });
});

describe("a hub client's request error that it logs mildly or retries", () => {
  it('WARN with a retry, then the server loads and is ready: none', () => {
    const d = diagnose([
      '[2026-12-01 09:59:00] WARN nim_sdk::hub: error sending request for url (https://api.ngc.nvidia.com/v2/org/nim/models/x/files), retrying in 2s',
      ...loading,
      ready,
    ]);
    expect(d.category, d.reason).toBe('none');
  });

  it('INFO with a retry count: none', () => {
    const d = diagnose([
      '2026-12-01T09:59:00.123Z  INFO nim_sdk::hub: request failed: error sending request for url (https://huggingface.co/api/models/meta-llama/Llama-3.1-8B/revision/main): operation timed out; retrying (1/5)',
      ...loading,
      ready,
    ]);
    expect(d.category, d.reason).toBe('none');
  });

  it('ERROR that says it is retrying, then ready and serving: none', () => {
    const d = diagnose([
      '2026-12-01T09:59:00.123Z ERROR nim_sdk::hub: error sending request for url (https://huggingface.co/api/models/meta-llama/Llama-3.1-8B/revision/main): operation timed out; retrying (1/5)',
      ...loading,
      ready,
      '[2026-12-01 10:00:05] INFO:     127.0.0.1:5000 - "POST /generate HTTP/1.1" 200 OK',
    ]);
    expect(d.category, d.reason).toBe('none');
  });

  it('a WARN while the weights are still loading is no crash yet', () => {
    const d = diagnose([
      '2026-12-01T09:59:00.123Z  WARN hf_hub: error sending request for url (https://huggingface.co/api/models/x): operation timed out, retrying',
      '[2026-12-01 09:59:05 TP0] Load weight begin. avail mem=78.00 GB',
    ]);
    expect(d.category, d.reason).toBe('none');
  });

  it('a DEBUG record without a retry is no crash either', () => {
    const d = diagnose([
      '2026-12-01T09:59:00.123Z DEBUG hf_hub::api: error sending request for url (https://huggingface.co/api/models/x)',
    ]);
    expect(d.category, d.reason).toBe('none');
  });

  it('the final error, at ERROR and with no retry, is still the model not fetched', () => {
    const line =
      '2026-12-01T09:59:30.123Z ERROR hf_hub: error sending request for url (https://huggingface.co/api/models/x): operation timed out';
    expect(diagnose([line]).category).toBe('model_load_error');
  });
});

describe("gloo's warning while serving, and the heartbeat monitor after a stop", () => {
  it('a c10 warning-level gloo line with decode batches after it is no crash', () => {
    const d = diagnose([
      ready,
      '[2026-12-01 10:00:05] INFO:     127.0.0.1:5000 - "POST /generate HTTP/1.1" 200 OK',
      '[W1201 10:01:00.123456 4242 ProcessGroupGloo.cpp:143] Warning: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.2]:43125',
      '[2026-12-01 10:01:05 TP0] Decode batch. #running-req: 1, #token: 100, token usage: 0.00, gen throughput (token/s): 40.00, #queue-req: 0',
    ]);
    expect(d.category, d.reason).toBe('none');
  });

  it('the heartbeat monitor timing out after SIGTERM is that stop, no process-group crash', () => {
    const d = diagnose([
      ready,
      '[2026-12-01 10:05:00] SIGTERM received. signum=None frame=None. Draining requests and shutting down...',
      '[rank0]:[E1201 10:05:30.000 4242 ProcessGroupNCCL.cpp:1400] [PG ID 0 PG GUID 0(default_pg) Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=0',
    ]);
    // A record logged once the stop signal reached the server is its shutdown's (engine.ts, stopSignal).
    expect(d.category, d.reason).toBe('none');
    expect(d.reason).toMatch(/^a stop signal reached the server \(line 2\)/);
  });
});

describe("DeepGEMM's JIT missing a header of an architecture it ships", () => {
  const missing = (header: string) => [
    'Traceback (most recent call last):',
    '  File "/x/deep_gemm/jit/compiler.py", line 12, in build',
    '    return _C.build(name, code)',
    `RuntimeError: Assertion error (csrc/jit/include_parser.hpp:69): Failed to open: /usr/local/lib/python3.12/site-packages/deep_gemm/include/deep_gemm/impls/${header}`,
  ];

  it('an sm90 header (shipped) missing is a broken install, other', () => {
    const d = diagnose(missing('sm90_fp8_gemm_1d2d.cuh'));
    expect(d.category, d.reason).toBe('other');
  });

  it('so are the sm100 and sm120 headers it ships', () => {
    expect(diagnose(missing('sm100_fp8_gemm_1d1d.cuh')).category).toBe('other');
    expect(diagnose(missing('sm120_fp8_paged_mqa_logits.cuh')).category).toBe('other');
  });

  it('an architecture it has no header for is still one it does not support', () => {
    expect(diagnose(missing('sm121_fp8_mqa_logits.cuh')).category).toBe('unsupported_arch');
  });
});
