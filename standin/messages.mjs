// Crash and warning texts, copied from upstream SGLang / PyTorch / FlashInfer output. Each template names the
// public issue or source its wording and traceback shape come from. File paths use an SGLang checkout at
// $STANDIN_SGLANG_ROOT (default /sgl-workspace/sglang/python/sglang, the layout of the lmsysorg/sglang images seen in
// most issues) and Python 3.12 dist-packages. Line numbers are those of the cited tracebacks or of the reference
// page's [F] citations where known; elsewhere they are plausible, not authoritative.

const SITE = '/usr/local/lib/python3.12/dist-packages';

function sg() {
  return process.env.STANDIN_SGLANG_ROOT || '/sgl-workspace/sglang/python/sglang';
}

/**
 * One traceback frame as Python 3.12 prints it. `under` is the part of `code` the caret line marks (omitted when
 * the expression is the whole statement, as Python does).
 */
function fr(file, line, func, code, under) {
  const path = file.startsWith('/') || file.startsWith('<') ? file : `${sg()}/${file}`;
  let out = `  File "${path}", line ${line}, in ${func}\n`;
  if (code !== undefined) {
    out += `    ${code}\n`;
    if (under) {
      const at = code.indexOf(under);
      if (at >= 0) out += `    ${' '.repeat(at)}${'^'.repeat(under.length)}\n`;
    }
  }
  return out;
}

const site = (p) => `${SITE}/${p}`;

function traceback(frames) {
  return `Traceback (most recent call last):\n${frames.join('')}`;
}

const DURING = '\nDuring handling of the above exception, another exception occurred:\n\n';

// --- frame groups ---------------------------------------------------------------------------------------------

/** Scheduler construction down to ModelRunner.initialize (shape of issue #25118 / #4205 / #5285 tracebacks). */
function schedulerInitFrames() {
  return [
    fr('srt/managers/scheduler.py', 3141, 'run_scheduler_process', 'scheduler = Scheduler(', 'Scheduler('),
    fr('srt/managers/scheduler.py', 368, '__init__', 'self.init_model_worker()'),
    fr('srt/managers/scheduler.py', 553, 'init_model_worker', 'self.init_tp_model_worker()'),
    fr(
      'srt/managers/scheduler.py',
      517,
      'init_tp_model_worker',
      'self.tp_worker = TpModelWorker(**worker_kwargs)',
      'TpModelWorker(**worker_kwargs)',
    ),
    fr('srt/managers/tp_worker.py', 248, '__init__', 'self._init_model_runner()'),
    fr('srt/managers/tp_worker.py', 331, '_init_model_runner', 'self._model_runner = ModelRunner(', 'ModelRunner('),
    fr('srt/model_executor/model_runner.py', 371, '__init__', 'self.initialize(min_per_gpu_memory)'),
  ];
}

/** The overlap event loop down to ModelRunner.forward (shape of issues #12567, #10272, #32893). */
function eventLoopFrames(mode) {
  const fwd = mode === 'decode' ? 'forward_decode' : 'forward_extend';
  return [
    fr('srt/managers/scheduler.py', 3148, 'run_scheduler_process', 'scheduler.event_loop_overlap()'),
    fr(
      site('torch/utils/_contextlib.py'),
      120,
      'decorate_context',
      'return func(*args, **kwargs)',
      'func(*args, **kwargs)',
    ),
    fr(
      'srt/managers/scheduler.py',
      1089,
      'event_loop_overlap',
      'batch_result = self.run_batch(batch)',
      'self.run_batch(batch)',
    ),
    fr(
      'srt/managers/scheduler.py',
      2243,
      'run_batch',
      'batch_result = self.model_worker.forward_batch_generation(',
      'self.model_worker.forward_batch_generation(',
    ),
    fr(
      'srt/managers/tp_worker.py',
      457,
      'forward_batch_generation',
      'logits_output, can_run_cuda_graph = self.model_runner.forward(',
      'self.model_runner.forward(',
    ),
    fr('srt/model_executor/model_runner.py', 2463, 'forward', 'output = self._forward_raw(', 'self._forward_raw('),
    fr('srt/model_executor/model_runner.py', 2528, '_forward_raw', `ret = self.${fwd}(`, `self.${fwd}(`),
    fr(
      'srt/model_executor/model_runner.py',
      mode === 'decode' ? 2321 : 2364,
      fwd,
      'return self.model.forward(',
      'self.model.forward(',
    ),
  ];
}

/** CudaGraphRunner construction down to one captured forward (shape of issues #1751, #5285, #4205). */
function captureFrames() {
  return [
    ...schedulerInitFrames(),
    fr('srt/model_executor/model_runner.py', 539, 'initialize', 'self.init_device_graphs()'),
    fr(
      'srt/model_executor/model_runner.py',
      2146,
      'init_device_graphs',
      'self.graph_runner = graph_runners[self.device](self)',
      'graph_runners[self.device](self)',
    ),
  ];
}

function captureInnerFrames() {
  return [
    fr('srt/model_executor/cuda_graph_runner.py', 364, '__init__', 'self.capture()'),
    fr('srt/model_executor/cuda_graph_runner.py', 487, 'capture', '_capture_one_stream()'),
    fr(
      'srt/model_executor/cuda_graph_runner.py',
      474,
      '_capture_one_stream',
      ') = self.capture_one_batch_size(bs, forward, stream_idx)',
      'self.capture_one_batch_size(bs, forward, stream_idx)',
    ),
    fr('srt/model_executor/cuda_graph_runner.py', 679, 'capture_one_batch_size', 'run_once()'),
    fr(
      'srt/model_executor/cuda_graph_runner.py',
      666,
      'run_once',
      'logits_output_or_pp_proxy_tensors = forward(',
      'forward(',
    ),
  ];
}

/** DeepSeek-family model forward down to the attention backend (shape of issues #40558, #14691). */
function modelToAttentionFrames(mode) {
  return [
    fr(
      site('torch/utils/_contextlib.py'),
      120,
      'decorate_context',
      'return func(*args, **kwargs)',
      'func(*args, **kwargs)',
    ),
    fr('srt/models/deepseek_v2.py', 3466, 'forward', 'hidden_states = self.model(', 'self.model('),
    fr(
      site('torch/nn/modules/module.py'),
      1775,
      '_wrapped_call_impl',
      'return self._call_impl(*args, **kwargs)',
      'self._call_impl(*args, **kwargs)',
    ),
    fr(
      site('torch/nn/modules/module.py'),
      1786,
      '_call_impl',
      'return forward_call(*args, **kwargs)',
      'forward_call(*args, **kwargs)',
    ),
    fr('srt/models/deepseek_v2.py', 3213, 'forward', 'hidden_states, residual = layer(', 'layer('),
    fr(
      site('torch/nn/modules/module.py'),
      1775,
      '_wrapped_call_impl',
      'return self._call_impl(*args, **kwargs)',
      'self._call_impl(*args, **kwargs)',
    ),
    fr(
      site('torch/nn/modules/module.py'),
      1786,
      '_call_impl',
      'return forward_call(*args, **kwargs)',
      'forward_call(*args, **kwargs)',
    ),
    fr('srt/models/deepseek_v2.py', 2871, 'forward', 'hidden_states = self.self_attn(', 'self.self_attn('),
    fr(
      site('torch/nn/modules/module.py'),
      1775,
      '_wrapped_call_impl',
      'return self._call_impl(*args, **kwargs)',
      'self._call_impl(*args, **kwargs)',
    ),
    fr(
      site('torch/nn/modules/module.py'),
      1786,
      '_call_impl',
      'return forward_call(*args, **kwargs)',
      'forward_call(*args, **kwargs)',
    ),
    fr('srt/models/deepseek_v2.py', 1581, 'forward', 'return self.forward_core(s)', 'self.forward_core(s)'),
    fr(
      'srt/models/deepseek_v2.py',
      1668,
      'forward_core',
      'return self.forward_absorb_core(*inner_state)',
      'self.forward_absorb_core(*inner_state)',
    ),
    fr('srt/models/deepseek_v2.py', 2011, 'forward_absorb_core', 'attn_output = self.attn_mqa(', 'self.attn_mqa('),
    fr(
      site('torch/nn/modules/module.py'),
      1775,
      '_wrapped_call_impl',
      'return self._call_impl(*args, **kwargs)',
      'self._call_impl(*args, **kwargs)',
    ),
    fr(
      site('torch/nn/modules/module.py'),
      1786,
      '_call_impl',
      'return forward_call(*args, **kwargs)',
      'forward_call(*args, **kwargs)',
    ),
    fr(
      'srt/layers/radix_attention.py',
      124,
      'forward',
      'return forward_batch.attn_backend.forward(',
      'forward_batch.attn_backend.forward(',
    ),
    fr(
      'srt/layers/attention/base_attn_backend.py',
      mode === 'decode' ? 88 : 101,
      'forward',
      `return self.forward_${mode}(`,
      `self.forward_${mode}(`,
    ),
  ];
}

function withCapture(pre, innerFrames, errLine, flavor) {
  // RuntimeErrors inside capture are re-raised as `Exception: Capture cuda graph failed: ...` with SGLang's list of
  // possible solutions (cuda_graph_runner.py:373 and :935-942 in [F]; wording per docs/sglang.md §4,
  // traceback shape of https://github.com/sgl-project/sglang/issues/5285 and #4205).
  const first = `${traceback([...captureInnerFrames(), ...innerFrames])}${errLine}\n`;
  const msg = errLine.replace(/^[\w.]+: /, '');
  const second = `${traceback([
    ...captureFrames(),
    fr('srt/model_executor/cuda_graph_runner.py', 373, '__init__', 'raise Exception('),
  ])}Exception: Capture cuda graph failed: ${msg}\n${possibleSolutions(flavor)}`;
  return `${pre}${first}${DURING}${second}`;
}

export function possibleSolutions(flavor) {
  if (flavor === 'j') {
    return (
      'Possible solutions:\n' +
      '1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n' +
      '2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n' +
      '3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. (Not recommended. Huge performance loss)\n' +
      'Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n'
    );
  }
  return (
    'Possible solutions:\n' +
    '1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n' +
    '2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n' +
    '3. disable torch compile by not using --enable-torch-compile\n' +
    '4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n' +
    'Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n'
  );
}

// torch>=2.8 raises torch.AcceleratorError (a RuntimeError subclass) for CUDA errors, as in
// https://github.com/sgl-project/sglang/issues/21460; older torch prints RuntimeError (issue #1274, PR #3730).
// The default follows the brief (RuntimeError); STANDIN_TORCH_ACCELERATOR_ERROR=1 gives the torch 2.9 spelling.
function cudaErrorClass() {
  return process.env.STANDIN_TORCH_ACCELERATOR_ERROR === '1' ? 'torch.AcceleratorError' : 'RuntimeError';
}

function cudaErrorTail(what, cudaErr) {
  const cls = cudaErrorClass();
  // The "Search for `cudaError...'" hint came with torch.AcceleratorError (torch 2.8+).
  const search =
    cls === 'RuntimeError'
      ? ''
      : `Search for \`${cudaErr}' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n`;
  return (
    `${cls}: CUDA error: ${what}\n${search}` +
    'CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n' +
    'For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n' +
    'Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n\n'
  );
}

// --- the crash kinds --------------------------------------------------------------------------------------------

/**
 * A crash: what each scheduler rank logs after "Scheduler hit an exception: ", and what goes to stdout first
 * (CUDA device-side printf).
 * @typedef {{rankText: (rank: number) => string, stdout?: (rank: number) => string}} Crash
 */

/**
 * `assert not self.nsa_kv_cache_store_fp8` in MLATokenToKVPool.set_kv_buffer (memory_pool.py:1498 [F]): a DSA
 * model with an fp8_e4m3 KV pool written through a generic (non-NSA) attention backend. Bare AssertionError, no
 * message. Source: https://github.com/sgl-project/sglang/issues/14691 (DeepSeek-V3.2 + fp8 KV, flashmla backend,
 * older form `assert not (self.use_nsa and self.nsa_kv_cache_store_fp8)`); the seeds' attempt 3 (triton).
 * @param {'capture'|'extend'} where
 * @param {string} backend attention backend name (triton, flashmla, ...)
 */
export function nsaFp8Assert(where, backend) {
  const file =
    backend === 'flashmla' ? 'flashmla_backend' : backend === 'triton' ? 'triton_backend' : `${backend}_backend`;
  const mode = where === 'capture' ? 'decode' : 'extend';
  const inner = [
    ...modelToAttentionFrames(mode),
    fr(
      `srt/layers/attention/${file}.py`,
      mode === 'decode' ? 827 : 743,
      `forward_${mode}`,
      'forward_batch.token_to_kv_pool.set_kv_buffer(',
    ),
    fr('srt/mem_cache/memory_pool.py', 1498, 'set_kv_buffer', 'assert not self.nsa_kv_cache_store_fp8'),
  ];
  // Not a RuntimeError, so the capture wrapper does not catch it: the bare AssertionError reaches the scheduler.
  const frames =
    where === 'capture'
      ? [
          ...captureFrames(),
          fr('srt/model_executor/cuda_graph_runner.py', 364, '__init__', 'self.capture()'),
          ...captureInnerFrames().slice(1),
          ...inner,
        ]
      : [...eventLoopFrames('extend'), ...inner];
  return { rankText: () => `${traceback(frames)}AssertionError\n` };
}

/**
 * torch.OutOfMemoryError during CUDA graph capture, wrapped by SGLang. Sources:
 * https://github.com/sgl-project/sglang/issues/5285 ("Exception: Capture cuda graph failed: CUDA out of memory.
 * Tried to allocate 448.00 MiB. GPU 7 has a total capacity of 95.00 ..."), PyTorch's OOM message as quoted in
 * https://github.com/vllm-project/vllm/issues/15598; seeds' attempt 1 (OOM during capture, 96 GB cards).
 * @param {{flavor: string, totalGb: number, inCapture: boolean}} o
 */
export function oomCapture({ flavor, totalGb, inCapture }) {
  const oom = (rank) =>
    `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU ${rank} has a total capacity of ` +
    `${totalGb.toFixed(2)} GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has ` +
    `${(totalGb - 1.03).toFixed(2)} GiB memory in use. Of the allocated memory 86.51 GiB is allocated by PyTorch, ` +
    'with 2.13 GiB allocated in private pools (e.g., CUDA Graphs), and 1.16 GiB is reserved by PyTorch but ' +
    'unallocated. If reserved but unallocated memory is large try setting ' +
    'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory ' +
    'Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)';
  const moeFrames = [
    ...modelToAttentionFrames('decode').slice(0, 7),
    fr('srt/models/deepseek_v2.py', 2895, 'forward', 'hidden_states = self.mlp(', 'self.mlp('),
    fr(
      site('torch/nn/modules/module.py'),
      1775,
      '_wrapped_call_impl',
      'return self._call_impl(*args, **kwargs)',
      'self._call_impl(*args, **kwargs)',
    ),
    fr(
      site('torch/nn/modules/module.py'),
      1786,
      '_call_impl',
      'return forward_call(*args, **kwargs)',
      'forward_call(*args, **kwargs)',
    ),
    fr('srt/models/deepseek_v2.py', 781, 'forward', 'return self.forward_normal(', 'self.forward_normal('),
    fr(
      'srt/models/deepseek_v2.py',
      853,
      'forward_normal',
      'final_hidden_states = self.experts(hidden_states, topk_output)',
      'self.experts(hidden_states, topk_output)',
    ),
    fr(
      site('torch/nn/modules/module.py'),
      1775,
      '_wrapped_call_impl',
      'return self._call_impl(*args, **kwargs)',
      'self._call_impl(*args, **kwargs)',
    ),
    fr(
      site('torch/nn/modules/module.py'),
      1786,
      '_call_impl',
      'return forward_call(*args, **kwargs)',
      'forward_call(*args, **kwargs)',
    ),
    fr(
      'srt/layers/moe/fused_moe_triton/layer.py',
      1013,
      'forward',
      'combine_input = self.run_moe_core(',
      'self.run_moe_core(',
    ),
    fr(
      'srt/layers/moe/fused_moe_triton/layer.py',
      1036,
      'run_moe_core',
      'return self.quant_method.apply(',
      'self.quant_method.apply(',
    ),
    fr(
      'srt/layers/quantization/modelopt_quant.py',
      1587,
      'apply',
      'output = torch.empty_like(x)',
      'torch.empty_like(x)',
    ),
  ];
  if (!inCapture) {
    return { rankText: (r) => `${traceback([...eventLoopFrames('extend'), ...moeFrames])}${oom(r)}\n` };
  }
  return { rankText: (r) => withCapture('', moeFrames, oom(r), flavor) };
}

/**
 * FlashInfer TRT-LLM-gen attention on SM120: `TllmGenFmhaRunner` only accepts SM100/SM103. Sources:
 * https://github.com/flashinfer-ai/flashinfer/issues/3263 ("RuntimeError: Error in function 'TllmGenFmhaRunner' at
 * /workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:30: Unsupported architecture", RTX PRO 6000 via
 * SGLang's TRTLLM MLA path), https://github.com/sgl-project/sglang/issues/37105 and #40558 (SM120, DSA trtllm).
 * @param {'capture'|'prefill'|'decode'} where capture = decode graph capture; prefill/decode = an eager forward
 */
export function tllmUnsupportedArch(where, flavor) {
  const err =
    "RuntimeError: Error in function 'TllmGenFmhaRunner' at /workspace/include/flashinfer/trtllm/fmha/fmhaRunner.cuh:30: Unsupported architecture";
  const backend = flavor === 'j' ? 'dsa_backend' : 'nsa_backend';
  const mode = where === 'prefill' ? 'extend' : 'decode';
  const kernel =
    mode === 'decode'
      ? [
          fr(
            `srt/layers/attention/${backend}.py`,
            1184,
            'forward_decode',
            'return self._forward_trtllm(',
            'self._forward_trtllm(',
          ),
          fr(
            `srt/layers/attention/${backend}.py`,
            1521,
            '_forward_trtllm',
            'o = flashinfer.decode.trtllm_batch_decode_with_kv_cache_mla(',
            'flashinfer.decode.trtllm_batch_decode_with_kv_cache_mla(',
          ),
          fr(site('flashinfer/decode.py'), 2607, 'trtllm_batch_decode_with_kv_cache_mla', 'run_func('),
        ]
      : [
          fr(
            `srt/layers/attention/${backend}.py`,
            1002,
            'forward_extend',
            'return self._forward_trtllm_prefill(',
            'self._forward_trtllm_prefill(',
          ),
          fr(
            `srt/layers/attention/${backend}.py`,
            1462,
            '_forward_trtllm_prefill',
            'flashinfer.prefill.trtllm_ragged_attention_deepseek(',
          ),
          fr(site('flashinfer/prefill.py'), 3391, 'trtllm_ragged_attention_deepseek', 'run_func('),
        ];
  const tail = [
    fr(site('torch/_ops.py'), 1255, '__call__', 'return self._op(*args, **kwargs)', 'self._op(*args, **kwargs)'),
  ];
  const inner = [...modelToAttentionFrames(mode), ...kernel, ...tail];
  if (where === 'capture') return { rankText: () => withCapture('', inner, err, flavor) };
  return { rankText: () => `${traceback([...eventLoopFrames(mode), ...inner])}${err}\n` };
}

/**
 * FA3 from sgl-kernel is built for Hopper only; on SM120 sgl_kernel.flash_attn raises NotImplementedError (a
 * RuntimeError subclass, so capture wraps it). Wording of sgl-kernel's flash_attn.py is_fa3_supported() guard.
 */
export function fa3Unsupported(where, flavor) {
  const err = 'NotImplementedError: flash_attn at sgl-kernel is only supported on sm90 and above';
  const mode = where === 'prefill' ? 'extend' : 'decode';
  const backend = flavor === 'j' ? 'dsa_backend' : 'nsa_backend';
  const inner = [
    ...modelToAttentionFrames(mode),
    fr(
      `srt/layers/attention/${backend}.py`,
      mode === 'decode' ? 1176 : 994,
      `forward_${mode}`,
      'return self._forward_fa3(',
      'self._forward_fa3(',
    ),
    fr(
      `srt/layers/attention/${backend}.py`,
      1398,
      '_forward_fa3',
      'o = flash_attn_with_kvcache(',
      'flash_attn_with_kvcache(',
    ),
    fr(site('sgl_kernel/flash_attn.py'), 158, 'flash_attn_with_kvcache', 'raise NotImplementedError('),
  ];
  if (where === 'capture') return { rankText: () => withCapture('', inner, err, flavor) };
  return { rankText: () => `${traceback([...eventLoopFrames(mode), ...inner])}${err}\n` };
}

/**
 * tilelang DSA kernels on CUDA read a bf16 KV cache only; with fp8_e4m3 KV the server boots and fails at decode
 * graph capture. Wording from https://github.com/sgl-project/sglang/pull/31346 ("kernel main input KV dtype
 * expected bfloat16, but got float8_e4m3fn"); the exception class is UNVERIFIED (ValueError assumed).
 */
export function tilelangFp8(where, flavor) {
  const err = 'ValueError: kernel main input KV dtype expected bfloat16, but got float8_e4m3fn';
  const mode = where === 'prefill' ? 'extend' : 'decode';
  const backend = flavor === 'j' ? 'dsa_backend' : 'nsa_backend';
  const inner = [
    ...modelToAttentionFrames(mode),
    fr(
      `srt/layers/attention/${backend}.py`,
      mode === 'decode' ? 1180 : 998,
      `forward_${mode}`,
      'return self._forward_tilelang(',
      'self._forward_tilelang(',
    ),
    fr(
      `srt/layers/attention/${backend}.py`,
      1436,
      '_forward_tilelang',
      'return tilelang_sparse_fwd(',
      'tilelang_sparse_fwd(',
    ),
    fr('srt/layers/attention/nsa/tilelang_kernel.py', 882, 'tilelang_sparse_fwd', 'return kernel(', 'kernel('),
    fr(site('tilelang/jit/adapter/tvm_ffi.py'), 240, '__call__', 'self._check_args(*args)'),
  ];
  const frames =
    where === 'capture'
      ? [
          ...captureFrames(),
          fr('srt/model_executor/cuda_graph_runner.py', 364, '__init__', 'self.capture()'),
          ...captureInnerFrames().slice(1),
          ...inner,
        ]
      : [...eventLoopFrames(mode), ...inner];
  return { rankText: () => `${traceback(frames)}${err}\n` };
}

/** aiter is ROCm-only; selecting it on CUDA fails when the attention backend is created. */
export function aiterImport() {
  const frames = [
    ...schedulerInitFrames(),
    fr('srt/model_executor/model_runner.py', 533, 'initialize', 'self.init_attention_backend()'),
    fr(
      'srt/model_executor/model_runner.py',
      1922,
      'init_attention_backend',
      'self.attn_backend = self._get_attention_backend()',
      'self._get_attention_backend()',
    ),
    fr(
      'srt/model_executor/model_runner.py',
      1961,
      '_get_attention_backend',
      'return attn_backend_wrapper(self, full_attention_backend)',
      'attn_backend_wrapper(self, full_attention_backend)',
    ),
    fr(
      'srt/layers/attention/attention_registry.py',
      49,
      'create_nsa_backend',
      'from sglang.srt.layers.attention.nsa_backend import NativeSparseAttnBackend',
    ),
    fr('srt/layers/attention/nsa_backend.py', 71, '<module>', 'from aiter import dtypes'),
  ];
  return { rankText: () => `${traceback(frames)}ModuleNotFoundError: No module named 'aiter'\n` };
}

/** `--attention-backend nsa` on a non-DSA model (nsa_backend.py:301 [F]). */
export function nsaOnNonDsa() {
  const frames = [
    ...schedulerInitFrames(),
    fr('srt/model_executor/model_runner.py', 533, 'initialize', 'self.init_attention_backend()'),
    fr(
      'srt/model_executor/model_runner.py',
      1922,
      'init_attention_backend',
      'self.attn_backend = self._get_attention_backend()',
      'self._get_attention_backend()',
    ),
    fr(
      'srt/layers/attention/attention_registry.py',
      51,
      'create_nsa_backend',
      'return NativeSparseAttnBackend(runner)',
      'NativeSparseAttnBackend(runner)',
    ),
    fr(
      'srt/layers/attention/nsa_backend.py',
      301,
      '__init__',
      'assert model_runner.use_nsa, "NSA backend only supports DeepSeek NSA"',
    ),
  ];
  return { rankText: () => `${traceback(frames)}AssertionError: NSA backend only supports DeepSeek NSA\n` };
}

/**
 * The NaN in sampling, as the seeds saw it: device-side assert in torch.multinomial during the first decode step,
 * surfacing at the next synchronisation of the overlap scheduler. Sources: CUDA assert line of
 * https://github.com/zai-org/GLM-4/issues/637 and https://github.com/kvcache-ai/ktransformers/issues/465
 * (TensorCompare.cu:110 _assert_async_cuda_kernel); SGLang sampler/sync frames of
 * https://github.com/sgl-project/sglang/issues/21460 and #22692; "Scheduler hit an exception" + sigquit order of
 * https://github.com/sgl-project/sglang/issues/10272.
 */
export function nanInSampling() {
  const frames = [
    fr('srt/managers/scheduler.py', 3148, 'run_scheduler_process', 'scheduler.event_loop_overlap()'),
    fr(
      site('torch/utils/_contextlib.py'),
      120,
      'decorate_context',
      'return func(*args, **kwargs)',
      'func(*args, **kwargs)',
    ),
    fr('srt/managers/scheduler.py', 1106, 'event_loop_overlap', 'self.process_batch_result(tmp_batch, tmp_result)'),
    fr('srt/managers/scheduler.py', 2316, 'process_batch_result', 'self.process_batch_result_decode(batch, result)'),
    fr(
      'srt/managers/scheduler_output_processor_mixin.py',
      311,
      'process_batch_result_decode',
      'result.copy_done.synchronize()',
    ),
    fr(site('torch/cuda/streams.py'), 231, 'synchronize', 'super().synchronize()'),
  ];
  return {
    stdout: () =>
      '/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:110: _assert_async_cuda_kernel: block: [0,0,0], thread: [0,0,0] ' +
      'Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.\n',
    rankText: () => `${traceback(frames)}${cudaErrorTail('device-side assert triggered', 'cudaErrorAssert')}`,
  };
}

/** An illegal memory access in the first decode step (same synchronisation point as the NaN). */
export function illegalMemoryAccess() {
  const frames = [
    fr('srt/managers/scheduler.py', 3148, 'run_scheduler_process', 'scheduler.event_loop_overlap()'),
    fr(
      site('torch/utils/_contextlib.py'),
      120,
      'decorate_context',
      'return func(*args, **kwargs)',
      'func(*args, **kwargs)',
    ),
    fr('srt/managers/scheduler.py', 1106, 'event_loop_overlap', 'self.process_batch_result(tmp_batch, tmp_result)'),
    fr('srt/managers/scheduler.py', 2316, 'process_batch_result', 'self.process_batch_result_decode(batch, result)'),
    fr(
      'srt/managers/scheduler_output_processor_mixin.py',
      311,
      'process_batch_result_decode',
      'result.copy_done.synchronize()',
    ),
    fr(site('torch/cuda/streams.py'), 231, 'synchronize', 'super().synchronize()'),
  ];
  return {
    rankText: () =>
      `${traceback(frames)}${cudaErrorTail('an illegal memory access was encountered', 'cudaErrorIllegalAddress')}`,
  };
}

/**
 * Weight loading fails: GLM ModelOpt-FP4 checkpoints whose shared experts are BF16, loaded with shared-expert
 * fusion on. Wording from https://github.com/sgl-project/sglang/pull/29580 ("RuntimeError: The size of tensor a
 * (3072) must match the size of tensor b (6144)"; workaround --disable-shared-experts-fusion).
 */
export function modelLoadError() {
  const frames = [
    ...schedulerInitFrames(),
    fr('srt/model_executor/model_runner.py', 515, 'initialize', 'self.load_model()'),
    fr(
      'srt/model_executor/model_runner.py',
      1001,
      'load_model',
      'self.model = self.loader.load_model(',
      'self.loader.load_model(',
    ),
    fr(
      'srt/model_loader/loader.py',
      675,
      'load_model',
      'self.load_weights_and_postprocess(',
      'self.load_weights_and_postprocess(',
    ),
    fr('srt/model_loader/loader.py', 683, 'load_weights_and_postprocess', 'model.load_weights(weights)'),
    fr('srt/models/deepseek_v2.py', 3733, 'load_weights', 'weight_loader(', 'weight_loader('),
    fr(
      'srt/layers/moe/fused_moe_triton/layer.py',
      704,
      'weight_loader',
      'self._weight_loader_impl(',
      'self._weight_loader_impl(',
    ),
    fr('srt/layers/moe/fused_moe_triton/layer.py', 880, '_weight_loader_impl', 'self._load_w13(', 'self._load_w13('),
    fr(
      'srt/layers/moe/fused_moe_triton/layer.py',
      468,
      '_load_w13',
      'expert_data.copy_(loaded_weight)',
      'expert_data.copy_(loaded_weight)',
    ),
  ];
  return {
    rankText: () =>
      `${traceback(frames)}RuntimeError: The size of tensor a (3072) must match the size of tensor b (6144) at non-singleton dimension 0\n`,
  };
}

/**
 * An NCCL failure while torch.distributed initialises (custom all-reduce / first collective). Shape of PyTorch's
 * DistBackendError text ("NCCL error in: .../ProcessGroupNCCL.cpp:..., unhandled system error (run with
 * NCCL_DEBUG=INFO for details), NCCL version ...").
 */
export function ncclError() {
  const frames = [
    ...schedulerInitFrames(),
    fr(
      'srt/model_executor/model_runner.py',
      509,
      'initialize',
      'min_per_gpu_memory = self.init_torch_distributed()',
      'self.init_torch_distributed()',
    ),
    fr(
      'srt/model_executor/model_runner.py',
      812,
      'init_torch_distributed',
      'initialize_model_parallel(',
      'initialize_model_parallel(',
    ),
    fr(
      'srt/distributed/parallel_state.py',
      1611,
      'initialize_model_parallel',
      '_TP = init_model_parallel_group(',
      'init_model_parallel_group(',
    ),
    fr(
      'srt/distributed/parallel_state.py',
      1390,
      'init_model_parallel_group',
      'return GroupCoordinator(',
      'GroupCoordinator(',
    ),
    fr(
      'srt/distributed/parallel_state.py',
      300,
      '__init__',
      'self.pynccl_comm = PyNcclCommunicator(',
      'PyNcclCommunicator(',
    ),
    fr('srt/distributed/device_communicators/pynccl.py', 120, '__init__', 'self.all_reduce(data)'),
    fr(
      site('torch/distributed/c10d_logger.py'),
      81,
      'wrapper',
      'return func(*args, **kwargs)',
      'func(*args, **kwargs)',
    ),
    fr(
      site('torch/distributed/distributed_c10d.py'),
      2935,
      'all_reduce',
      'work = group.allreduce([tensor], opts)',
      'group.allreduce([tensor], opts)',
    ),
  ];
  return {
    rankText: () =>
      `${traceback(frames)}torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3690, ` +
      'unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.5\n' +
      'ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n' +
      'Last error:\nsocketPollConnect: connect returned Connection refused, exceeded error retry count (35)\n',
  };
}

/** The KV pool got no memory (model_runner_kv_cache_mixin.py:417 [F]). */
export function notEnoughMemory(mfs) {
  const frames = [
    ...schedulerInitFrames(),
    fr('srt/model_executor/model_runner.py', 528, 'initialize', 'self.init_memory_pool(', 'self.init_memory_pool('),
    fr('srt/model_executor/model_runner_kv_cache_mixin.py', 417, 'init_memory_pool', 'raise RuntimeError('),
  ];
  return {
    rankText: () =>
      `${traceback(frames)}RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: self.server_args.mem_fraction_static=${mfs}\n`,
  };
}

/** A crash of no known class, injected on purpose (STANDIN_SCENARIO=crash_at_phase:<phase>). */
export function genericCrash(phase) {
  const frames =
    phase === 'prefill' || phase === 'decode'
      ? eventLoopFrames(phase === 'decode' ? 'decode' : 'extend')
      : schedulerInitFrames();
  return {
    rankText: () =>
      `${traceback(frames)}RuntimeError: simulated failure injected by the SGLang stand-in at phase '${phase}' (crash_at_phase)\n`,
  };
}

/** Scheduler watchdog (utils/watchdog.py:150-160 [F]): a forward batch made no progress for --watchdog-timeout. */
export function watchdogLines(timeout) {
  return {
    debug: 'Scheduler debug info:\n#running-req: 1, #queue-req: 0, last forward mode: DECODE\n',
    timeout: `Scheduler watchdog timeout (self.watchdog_timeout=${timeout}, self.soft=False)`,
  };
}

// --- main-process failures (printed by Python itself, exit status 1) --------------------------------------------

const RUNPY = [fr('<frozen runpy>', 198, '_run_module_as_main'), fr('<frozen runpy>', 88, '_run_code')];

/** `ServerArgs.__post_init__` rejects a DSA kv dtype (server_args.py:1154 [F]). */
export function dsaKvDtypeFatal() {
  return `${traceback([
    ...RUNPY,
    fr(
      'launch_server.py',
      29,
      '<module>',
      'server_args = prepare_server_args(sys.argv[1:])',
      'prepare_server_args(sys.argv[1:])',
    ),
    fr(
      'srt/server_args.py',
      5601,
      'prepare_server_args',
      'return ServerArgs.from_cli_args(raw_args)',
      'ServerArgs.from_cli_args(raw_args)',
    ),
    fr(
      'srt/server_args.py',
      5571,
      'from_cli_args',
      'return cls(**{attr: getattr(args, attr) for attr in attrs})',
      'cls(**{attr: getattr(args, attr) for attr in attrs})',
    ),
    fr('<string>', 318, '__init__'),
    fr('srt/server_args.py', 652, '__post_init__', 'self._handle_model_specific_adjustments()'),
    fr(
      'srt/server_args.py',
      1203,
      '_handle_model_specific_adjustments',
      'self._set_default_nsa_kv_cache_dtype(major, quantization_config)',
    ),
    fr('srt/server_args.py', 1154, '_set_default_nsa_kv_cache_dtype', 'assert self.kv_cache_dtype in ['),
  ])}AssertionError: DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype\n`;
}

/** The import of sglang's entrypoints fails before anything is parsed. */
export function importErrorFatal() {
  return `${traceback([
    ...RUNPY,
    fr('launch_server.py', 7, '<module>', 'from sglang.srt.entrypoints.http_server import launch_server'),
    fr(
      'srt/entrypoints/http_server.py',
      54,
      '<module>',
      'from sglang.srt.entrypoints.engine import _launch_subprocesses',
    ),
    fr('srt/entrypoints/engine.py', 44, '<module>', 'from sglang.srt.managers.data_parallel_controller import ('),
    fr(
      'srt/managers/data_parallel_controller.py',
      34,
      '<module>',
      'from sglang.srt.managers.scheduler import run_scheduler_process',
    ),
    fr(
      'srt/managers/scheduler.py',
      61,
      '<module>',
      'from sglang.srt.layers.attention.nsa.nsa_indexer import NSAIndexer',
    ),
    fr(
      'srt/layers/attention/nsa/nsa_indexer.py',
      11,
      '<module>',
      'from sglang.srt.layers.linear import ReplicatedLinear',
    ),
    fr('srt/layers/linear.py', 26, '<module>', 'from sglang.srt.layers.parameter import ('),
    fr('srt/layers/parameter.py', 10, '<module>', 'from sglang.srt.layers.quantization.int8_utils import ('),
    fr('srt/layers/quantization/int8_utils.py', 4, '<module>', 'from sgl_kernel import int8_scaled_mm'),
  ])}ModuleNotFoundError: No module named 'sgl_kernel'\n`;
}

/** crash_at_phase:startup: a failure in the main process after the arguments were resolved. */
export function startupFatal() {
  return `${traceback([
    ...RUNPY,
    fr('launch_server.py', 32, '<module>', 'launch_server(server_args)'),
    fr(
      'srt/entrypoints/http_server.py',
      1824,
      'launch_server',
      'tokenizer_manager, template_manager, scheduler_info, port_args = _launch_subprocesses(',
      '_launch_subprocesses(',
    ),
  ])}RuntimeError: simulated failure injected by the SGLang stand-in at phase 'startup' (crash_at_phase)\n`;
}

// --- warnings that never cause a crash ------------------------------------------------------------------------

/** configs/model_config.py:956 [F]; fires on SM 10/11/12 ("Blackwell") when DeepGEMM JIT is enabled. */
export const DEEPGEMM_UE8M0 =
  'DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0. This might cause accuracy degradation on Blackwell.';

/** fused_moe_triton_config.py:130 [F]; text as in the SGLang logs quoted by PR descriptions (2025-10, 2026-08). */
export function moeDefaultConfig(shape, dtype) {
  const file = `${shape},device_name=NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition${dtype ? `,dtype=${dtype}` : ''}${dtype === 'fp8_w8a8' ? ',block_shape=[128, 128]' : ''}.json`;
  return (
    `Using default MoE kernel config. Performance might be sub-optimal! Config file not found at ${sg()}/srt/layers/moe/fused_moe_triton/configs/triton_3_5_1/${file}, ` +
    'you can create them with https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton'
  );
}

/**
 * torch.distributed rendezvous failures of a multi-node launch (TCPStore on --dist-init-addr). Wording of
 * PyTorch's c10d TCPStore errors ("Timed out after N seconds waiting for clients. a/b clients joined.", "The client
 * socket has timed out after Nms while trying to connect to (host, port).").
 */
export function distInitFailure(errLine) {
  const frames = [
    ...schedulerInitFrames(),
    fr(
      'srt/model_executor/model_runner.py',
      509,
      'initialize',
      'min_per_gpu_memory = self.init_torch_distributed()',
      'self.init_torch_distributed()',
    ),
    fr(
      'srt/model_executor/model_runner.py',
      794,
      'init_torch_distributed',
      'init_distributed_environment(',
      'init_distributed_environment(',
    ),
    fr(
      'srt/distributed/parallel_state.py',
      1513,
      'init_distributed_environment',
      'torch.distributed.init_process_group(',
      'torch.distributed.init_process_group(',
    ),
    fr(
      site('torch/distributed/c10d_logger.py'),
      81,
      'wrapper',
      'return func(*args, **kwargs)',
      'func(*args, **kwargs)',
    ),
    fr(
      site('torch/distributed/c10d_logger.py'),
      95,
      'wrapper',
      'func_return = func(*args, **kwargs)',
      'func(*args, **kwargs)',
    ),
    fr(
      site('torch/distributed/distributed_c10d.py'),
      1714,
      'init_process_group',
      'store, rank, world_size = next(rendezvous_iterator)',
      'next(rendezvous_iterator)',
    ),
    fr(
      site('torch/distributed/rendezvous.py'),
      206,
      '_tcp_rendezvous_handler',
      'store = _create_c10d_store(',
      '_create_c10d_store(',
    ),
    fr(site('torch/distributed/rendezvous.py'), 177, '_create_c10d_store', 'return TCPStore(', 'TCPStore('),
  ];
  return `${traceback(frames)}${errLine}\n`;
}

/** The weights do not fit on the GPUs (e.g. GLM-5 at tp 4 on 96 GB cards): CUDA OOM while loading. */
export function weightsOom(totalGb) {
  const frames = [
    ...schedulerInitFrames(),
    fr('srt/model_executor/model_runner.py', 515, 'initialize', 'self.load_model()'),
    fr(
      'srt/model_executor/model_runner.py',
      1001,
      'load_model',
      'self.model = self.loader.load_model(',
      'self.loader.load_model(',
    ),
    fr(
      'srt/model_loader/loader.py',
      675,
      'load_model',
      'self.load_weights_and_postprocess(',
      'self.load_weights_and_postprocess(',
    ),
    fr('srt/model_loader/loader.py', 683, 'load_weights_and_postprocess', 'model.load_weights(weights)'),
    fr('srt/models/deepseek_v2.py', 3733, 'load_weights', 'weight_loader(', 'weight_loader('),
    fr(
      'srt/layers/moe/fused_moe_triton/layer.py',
      468,
      '_load_w13',
      'expert_data.copy_(loaded_weight)',
      'expert_data.copy_(loaded_weight)',
    ),
  ];
  return {
    rankText: (rank) =>
      `${traceback(frames)}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU ${rank} has a total capacity of ` +
      `${totalGb.toFixed(2)} GiB of which 312.00 MiB is free. Including non-PyTorch memory, this process has ` +
      `${(totalGb - 0.31).toFixed(2)} GiB memory in use. Of the allocated memory ${(totalGb - 0.9).toFixed(2)} GiB is allocated by PyTorch, and ` +
      '181.25 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting ' +
      'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory ' +
      'Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n',
  };
}

/** More TP ranks on a node than it has GPUs: torch.cuda.set_device fails in every extra rank. */
export function invalidDeviceOrdinal(visible) {
  const frames = [
    fr('srt/managers/scheduler.py', 3141, 'run_scheduler_process', 'scheduler = Scheduler(', 'Scheduler('),
    fr('srt/managers/scheduler.py', 368, '__init__', 'self.init_model_worker()'),
    fr('srt/managers/scheduler.py', 553, 'init_model_worker', 'self.init_tp_model_worker()'),
    fr(
      'srt/managers/scheduler.py',
      517,
      'init_tp_model_worker',
      'self.tp_worker = TpModelWorker(**worker_kwargs)',
      'TpModelWorker(**worker_kwargs)',
    ),
    fr('srt/managers/tp_worker.py', 248, '__init__', 'self._init_model_runner()'),
    fr('srt/managers/tp_worker.py', 331, '_init_model_runner', 'self._model_runner = ModelRunner(', 'ModelRunner('),
    fr('srt/model_executor/model_runner.py', 371, '__init__', 'self.initialize(min_per_gpu_memory)'),
    fr(
      'srt/model_executor/model_runner.py',
      509,
      'initialize',
      'min_per_gpu_memory = self.init_torch_distributed()',
      'self.init_torch_distributed()',
    ),
    fr(
      'srt/model_executor/model_runner.py',
      741,
      'init_torch_distributed',
      'torch.get_device_module(self.device).set_device(self.gpu_id)',
    ),
    fr(site('torch/cuda/__init__.py'), 567, 'set_device', 'torch._C._cuda_setDevice(device)'),
  ];
  return {
    rankText: (rank) =>
      rank < visible ? '' : `${traceback(frames)}${cudaErrorTail('invalid device ordinal', 'cudaErrorInvalidDevice')}`,
  };
}

/**
 * A helper thread of the main process dies while the server serves on: CPython's threading.excepthook prints
 * `Exception in thread NAME (TARGET):` and the traceback to stderr, without the logging prefix (Lib/threading.py,
 * _make_invoke_excepthook; the `(TARGET)` suffix since Python 3.10). The thread here pushes metrics to a collector
 * over urllib and the collector refuses the connection; the thread and its target are illustrative (no upstream issue
 * is copied), the frames are Python 3.12's own (Lib/threading.py, Lib/urllib/request.py). The main process, its
 * schedulers and /health are untouched: the log reads like a crash, the server is not one.
 */
export function helperThreadTraceback() {
  const py = (p) => `/usr/lib/python3.12/${p}`;
  return (
    'Exception in thread Thread-3 (push_metrics):\n' +
    traceback([
      fr(py('urllib/request.py'), 1344, 'do_open', 'h.request(req.get_method(), req.selector, req.data, headers,'),
      fr(py('socket.py'), 852, 'create_connection', 'sock.connect(sa)'),
    ]) +
    'ConnectionRefusedError: [Errno 111] Connection refused\n' +
    '\nDuring handling of the above exception, another exception occurred:\n\n' +
    traceback([
      fr(py('threading.py'), 1075, '_bootstrap_inner', 'self.run()'),
      fr(py('threading.py'), 1012, 'run', 'self._target(*self._args, **self._kwargs)'),
      fr(py('urllib/request.py'), 215, 'urlopen', 'return opener.open(url, data, timeout)'),
      fr(py('urllib/request.py'), 1347, 'do_open', 'raise URLError(err)'),
    ]) +
    'urllib.error.URLError: <urlopen error [Errno 111] Connection refused>\n'
  );
}
