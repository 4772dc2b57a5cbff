// `python -m sglang.check_env` (python/sglang/check_env.py [F]): `key: value` lines on stdout, in its order, for
// the simulated host. Versions are those of the team's host (PyTorch 2.9.1 / CUDA 12.8, transformers 5.2.0,
// flashinfer 0.6.3); the last line says the GPUs are simulated.

import { COMPUTE_CAP, DRIVER_VERSION, GPU_NAME, gpuCount, topoMatrix } from './gpu.mjs';
import { writeOut } from './log.mjs';

export function checkEnvText(sglangVersion, flavor) {
  const ids = Array.from({ length: gpuCount() }, (_, i) => i).join(',');
  const j = flavor === 'j';
  const packages = [
    ['sglang', sglangVersion],
    [j ? 'sglang-kernel' : 'sgl_kernel', '0.3.21'],
    ['flashinfer_python', '0.6.3'],
    ['flashinfer_cubin', '0.6.3'],
    ['flashinfer_jit_cache', 'Module Not Found'],
    ['triton', '3.5.1'],
    ['transformers', '5.2.0'],
    ['torchao', '0.9.0'],
    ['numpy', '2.3.5'],
    ['aiohttp', '3.13.2'],
    ['fastapi', '0.121.1'],
    ...(j ? [] : [['hf_transfer', '0.1.9']]),
    ['huggingface_hub', '1.1.4'],
    ['interegular', '0.3.3'],
    ['modelscope', '1.31.0'],
    ['orjson', '3.11.4'],
    ['outlines', '0.1.11'],
    ['packaging', '25.0'],
    ['psutil', '7.1.3'],
    ['pydantic', '2.12.4'],
    ['python-multipart', '0.0.20'],
    ['pyzmq', '27.1.0'],
    ['uvicorn', '0.38.0'],
    ['uvloop', '0.22.1'],
    ['vllm', 'Module Not Found'],
    ['xgrammar', '0.1.27'],
    ['openai', '2.6.1'],
    ['tiktoken', '0.12.0'],
    ['anthropic', '0.72.0'],
    ['litellm', 'Module Not Found'],
    [j ? 'torchcodec' : 'decord2', j ? '0.8.1' : '2.0.0'],
  ];
  const lines = [
    'Python: 3.12.3 (main, Jan 17 2025, 18:03:48) [GCC 13.3.0]',
    'CUDA available: True',
    `GPU ${ids}: ${GPU_NAME}`,
    `GPU ${ids} Compute Capability: ${COMPUTE_CAP}`,
    'CUDA_HOME: /usr/local/cuda',
    'NVCC: Cuda compilation tools, release 12.8, V12.8.93',
    `CUDA Driver Version: ${DRIVER_VERSION}`,
    'PyTorch: 2.9.1+cu128',
    ...packages.map(([k, v]) => `${k}: ${v}`),
    `NVIDIA Topology: \n${topoMatrix().replace(/\n$/, '')}`,
    '',
    'ulimit soft: 1048576',
    'Simulated: True (SGLang stand-in; no GPU on this host, the GPUs above are simulated)',
  ];
  return `${lines.join('\n')}\n`;
}

export async function checkEnv(sglangVersion, flavor) {
  const scale = Number.parseFloat(process.env.STANDIN_TIME_SCALE ?? '1');
  // It imports torch, so it takes a moment (kept short: ~1.5 s at scale 1).
  await new Promise((r) => setTimeout(r, 1500 * (Number.isFinite(scale) && scale >= 0 ? scale : 1)));
  writeOut(checkEnvText(sglangVersion, flavor));
}
