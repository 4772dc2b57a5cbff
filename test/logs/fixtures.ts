// Shared by the classifier tests: the real crash logs in test/fixtures/logs and what each must classify as.

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Category, Phase } from '../../src/logs/classify/index.ts';

export const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/logs/', import.meta.url));

export interface Expected {
  category: Category;
  phase: Phase;
  rank: number | null;
  /** 1-based line of the root cause; null for `none`. */
  rootLine: number | null;
  /** Text the root line contains. */
  rootText?: string;
  signature?: string;
}

export const EXPECTED: Record<string, Expected> = {
  'nan_in_sampling_kimi_cp.log': {
    category: 'nan_in_sampling',
    phase: 'decode',
    rank: 7,
    rootLine: 4,
    rootText: 'probability tensor contains either `inf`, `nan` or element < 0',
    signature: 'nan-probability-tensor',
  },
  'cuda_oom_graph_capture_deepep.log': {
    category: 'cuda_oom',
    phase: 'cuda_graph_capture',
    rank: null,
    rootLine: 18,
    rootText: 'Capture cuda graph failed: CUDA out of memory. Tried to allocate 448.00 MiB',
    signature: 'cuda-oom',
  },
  'cuda_oom_runtime_overlap.log': {
    category: 'cuda_oom',
    phase: 'unknown',
    rank: null,
    rootLine: 14,
    rootText: 'RuntimeError: CUDA error: out of memory',
    signature: 'cuda-error-out-of-memory',
  },
  'cuda_graph_capture_failed_gloo.log': {
    category: 'cuda_graph_capture_failed',
    phase: 'cuda_graph_capture',
    rank: null,
    rootLine: 18,
    rootText: 'Exception: Capture cuda graph failed: [../third_party/gloo',
    signature: 'cuda-graph-capture-failed',
  },
  'shared_memory_glm45_air_decode.log': {
    category: 'shared_memory_exceeded',
    // The traceback shows forward_extend: a new request's extend pass failed, among decode lines.
    phase: 'prefill',
    rank: null,
    rootLine: 26,
    rootText: 'out of resource: shared memory, Required: 147456, Hardware limit: 101376',
    signature: 'triton-out-of-shared-memory',
  },
  'shared_memory_graph_capture_mi300.log': {
    category: 'shared_memory_exceeded',
    phase: 'cuda_graph_capture',
    rank: 3,
    rootLine: 2,
    rootText: 'Required: 131072, Hardware limit: 65536',
    signature: 'triton-out-of-shared-memory',
  },
  'unsupported_arch_sm75_flashinfer.log': {
    category: 'unsupported_arch',
    phase: 'prefill',
    rank: null,
    rootLine: 1,
    rootText: 'no kernel image is available for execution on the device',
    signature: 'no-kernel-image',
  },
  'unsupported_arch_deepgemm_sm120.log': {
    category: 'unsupported_arch',
    phase: 'unknown',
    rank: null,
    rootLine: 1,
    rootText: 'attention.hpp:219): Unsupported architecture',
    signature: 'deepgemm-unsupported-arch',
  },
  'illegal_memory_access_kimi_marlin.log': {
    category: 'illegal_memory_access',
    phase: 'unknown',
    rank: 6,
    rootLine: 1,
    rootText: 'CUDA error: an illegal memory access was encountered',
    signature: 'illegal-memory-access',
  },
  'illegal_memory_access_graph_capture_r1.log': {
    category: 'illegal_memory_access',
    phase: 'cuda_graph_capture',
    rank: null,
    rootLine: 3,
    rootText: 'Capture cuda graph failed: RuntimeError: CUDA error: an illegal memory access',
    signature: 'illegal-memory-access',
  },
  'backend_assertion_nsa_fp8_kv.log': {
    category: 'backend_assertion',
    phase: 'prefill',
    rank: null,
    rootLine: 7,
    rootText: 'assert not (self.use_nsa and self.nsa_kv_cache_store',
    signature: 'nsa-kv-fp8-store-assert',
  },
  'nccl_error_collective_timeout.log': {
    category: 'nccl_error',
    phase: 'unknown',
    rank: null,
    rootLine: 7,
    rootText: 'Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9141',
    signature: 'nccl-collective-timeout',
  },
  'model_load_glm_moe_dsa_keyerror.log': {
    category: 'model_load_error',
    // Nothing in this excerpt places it (no milestone, no init frame): a model config that cannot be read fails
    // at model loading (corpus/README.md, phase rule 3).
    phase: 'weight_load',
    rank: null,
    rootLine: 7,
    rootText: "KeyError: 'glm_moe_dsa'",
    signature: 'unknown-model-type',
  },
  'model_load_glm_moe_dsa_launch.log': {
    category: 'model_load_error',
    phase: 'startup',
    rank: null,
    rootLine: 7,
    rootText: "KeyError: 'glm_moe_dsa'",
    signature: 'unknown-model-type',
  },
  'import_error_sgl_kernel_symbol.log': {
    category: 'import_error',
    phase: 'startup',
    rank: null,
    rootLine: 7,
    rootText: 'undefined symbol: cuGreenCtxStreamCreate',
    signature: 'import-error',
  },
  'port_in_use_runtime_sgl.log': {
    category: 'port_in_use',
    phase: 'startup',
    rank: null,
    rootLine: 1,
    rootText: '[Errno 98] error while attempting',
    signature: 'address-in-use',
  },
  'port_in_use_uvicorn_bind.log': {
    category: 'port_in_use',
    // uvicorn's `Application startup complete` is the ready line of corpus/README.md's phase rule 1 and nothing is
    // served after it: runtime (the label was startup, written before the rule; the corpus's cases of the same lines
    // are labelled runtime)
    phase: 'runtime',
    rank: null,
    rootLine: 4,
    rootText: "bind on address ('0.0.0.0', 44319): [errno 98] address already in use",
    signature: 'address-in-use',
  },
  'watchdog_timeout_qwq.log': {
    category: 'watchdog_timeout',
    phase: 'unknown',
    rank: 0,
    rootLine: 2,
    rootText: 'Watchdog timeout (self.watchdog_timeout=300)',
    signature: 'scheduler-watchdog-timeout',
  },
  'watchdog_timeout_dp_attention.log': {
    category: 'watchdog_timeout',
    phase: 'unknown',
    rank: 4,
    rootLine: 4,
    rootText: 'Watchdog timeout (self.watchdog_timeout=300)',
    signature: 'scheduler-watchdog-timeout',
  },
  'other_warmup_502.log': {
    category: 'other',
    phase: 'warmup',
    rank: null,
    rootLine: 14,
    rootText: "AssertionError: res=<Response [502]>, res.text=''",
  },
  'none_startup_red_herrings.log': { category: 'none', phase: 'runtime', rank: null, rootLine: null },
  'none_runtime_retraction.log': { category: 'none', phase: 'decode', rank: null, rootLine: null },
};

export function fixtureNames(): string[] {
  return readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.log'))
    .sort();
}

export function readFixture(name: string): string {
  return readFileSync(`${FIXTURE_DIR}${name}`, 'utf8');
}

/** The fixture's lines as the classifier numbers them (1-based index = array index + 1). */
export function fixtureLines(name: string): string[] {
  const lines = readFixture(name).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
