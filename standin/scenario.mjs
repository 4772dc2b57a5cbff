// Decides what a run does: serve, crash at a phase (and how), or stall. From the flags (the seeds' story for GLM-5
// on SM120) unless STANDIN_SCENARIO forces an outcome; a STANDIN_CONTROL file, re-read at every phase boundary and
// before every request, overrides both while the server runs.

import fs from 'node:fs';
import { gpuCount } from './gpu.mjs';
import { memoryOverflow } from './perf.mjs';

/** Startup phases in order, then 'request' for anything after the server is up. */
export const PHASES = ['startup', 'dist_init', 'weight_load', 'kv_alloc', 'cuda_graph_capture', 'warmup', 'request'];

const SIMPLE = [
  'ready',
  'oom_graph_capture',
  'nsa_fp8_assert',
  'nan_decode',
  'unsupported_arch',
  'illegal_memory_access',
  'model_load_error',
  'import_error',
  'watchdog_timeout',
  'nccl_error',
  'exit_quietly',
  'thread_traceback',
];
const CRASH_PHASES = [
  'startup',
  'dist_init',
  'weight_load',
  'kv_alloc',
  'cuda_graph_capture',
  'warmup',
  'prefill',
  'decode',
  'runtime',
];
const STALL_PHASES = ['dist_init', 'weight_load', 'kv_alloc', 'cuda_graph_capture', 'warmup', 'prefill', 'decode'];

/** Every scenario word the stand-in understands (for the README and the tests). */
export const SCENARIO_WORDS = [
  ...SIMPLE,
  ...CRASH_PHASES.map((p) => `crash_at_phase:${p}`),
  ...STALL_PHASES.map((p) => `stall:${p}`),
];

export function validScenario(word) {
  return SCENARIO_WORDS.includes(word);
}

/** The word in the control file, or null when there is no file, it is empty, or it says nothing we know. */
export function readControl() {
  const file = process.env.STANDIN_CONTROL;
  if (!file) return null;
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const word = text.trim().split(/\s+/)[0] ?? '';
  if (!word) return null;
  return validScenario(word) ? word : null;
}

/**
 * An event: where it fires and what it is.
 * @typedef {{phase: string, kind: string, where?: string, sub?: string}} Event
 * kind: crash kinds (nsa_fp8_assert, oom, tllm_arch, fa3_arch, tilelang_fp8, aiter_import, nsa_non_dsa, nan_decode,
 * illegal_memory_access, model_load_error, import_error, watchdog_timeout, nccl_error, not_enough_memory, generic)
 * or 'stall'. For phase 'request', `sub` is 'prefill' or 'decode'.
 */

/** Events the flags lead to, in the order they would fire. @returns {Event[]} */
export function flagEvents(cfg) {
  const ev = [];
  const vis = process.env.CUDA_VISIBLE_DEVICES;
  const visible = vis !== undefined && vis.trim() !== '' ? vis.split(',').length : gpuCount();
  if (cfg.tp / Math.max(1, cfg.nnodes) > visible) ev.push({ phase: 'dist_init', kind: 'invalid_device' });
  const fits = cfg.mem.weightsGb < cfg.mem.totalGb - cfg.mem.ctxGb - 0.5;
  if (!fits) ev.push({ phase: 'weight_load', kind: 'weights_oom' });
  else if (cfg.mem.kvGb <= 0 || cfg.mem.tokens <= 0) ev.push({ phase: 'kv_alloc', kind: 'not_enough_memory' });
  // The static pool, the graphs and the largest prefill chunk's activations must fit: else the warmup prefill OOMs.
  else if (memoryOverflow(cfg)) ev.push({ phase: 'warmup', kind: 'oom', where: 'prefill' });
  if (!cfg.dsa) {
    if (cfg.userAttentionBackend === 'nsa' || cfg.userAttentionBackend === 'dsa') {
      ev.push({ phase: 'kv_alloc', kind: 'nsa_non_dsa' });
    }
    return ev;
  }
  const graph = cfg.graphEnabled;
  const fp8 = cfg.kvIsFp8;
  if (cfg.genericPath) {
    if (fp8)
      ev.push({
        phase: graph ? 'cuda_graph_capture' : 'warmup',
        kind: 'nsa_fp8_assert',
        where: graph ? 'capture' : 'extend',
      });
    return ev;
  }
  const p = cfg.prefillBackend;
  const d = cfg.decodeBackend;
  if (p === 'aiter' || d === 'aiter') ev.push({ phase: 'kv_alloc', kind: 'aiter_import' });
  const kernelKind = (b) => {
    if (b === 'trtllm') return 'tllm_arch';
    if (b === 'fa3') return 'fa3_arch';
    if (b === 'tilelang' && fp8) return 'tilelang_fp8';
    return null;
  };
  if (graph && kernelKind(d)) ev.push({ phase: 'cuda_graph_capture', kind: kernelKind(d), where: 'capture' });
  if (graph && cfg.maxCaptureBs > 256) ev.push({ phase: 'cuda_graph_capture', kind: 'oom', where: 'capture' });
  if (kernelKind(p)) ev.push({ phase: 'warmup', kind: kernelKind(p), where: 'prefill' });
  if (!graph && kernelKind(d)) ev.push({ phase: 'warmup', kind: kernelKind(d), where: 'decode' });
  if (cfg.decodeIsFlashmla) ev.push({ phase: 'request', kind: 'nan_decode', sub: 'decode' });
  return ev;
}

/** Events a scenario word forces. @returns {Event[]} */
export function forcedEvents(word, cfg) {
  const graph = cfg.graphEnabled;
  if (word === 'ready') return [];
  if (word.startsWith('stall:')) {
    const ph = word.slice(6);
    if (ph === 'prefill' || ph === 'decode') return [{ phase: 'request', kind: 'stall', sub: ph }];
    return [{ phase: ph, kind: 'stall' }];
  }
  if (word.startsWith('crash_at_phase:')) {
    const ph = word.slice('crash_at_phase:'.length);
    if (ph === 'prefill' || ph === 'decode') return [{ phase: 'request', kind: 'generic', sub: ph }];
    if (ph === 'runtime') return [{ phase: 'request', kind: 'generic', sub: 'decode' }];
    return [{ phase: ph, kind: 'generic' }];
  }
  switch (word) {
    case 'oom_graph_capture':
      return [
        graph
          ? { phase: 'cuda_graph_capture', kind: 'oom', where: 'capture' }
          : { phase: 'warmup', kind: 'oom', where: 'prefill' },
      ];
    case 'nsa_fp8_assert':
      return [
        graph
          ? { phase: 'cuda_graph_capture', kind: 'nsa_fp8_assert', where: 'capture' }
          : { phase: 'warmup', kind: 'nsa_fp8_assert', where: 'extend' },
      ];
    case 'unsupported_arch':
      return [
        graph
          ? { phase: 'cuda_graph_capture', kind: 'tllm_arch', where: 'capture' }
          : { phase: 'warmup', kind: 'tllm_arch', where: 'decode' },
      ];
    case 'nan_decode':
      return [{ phase: 'request', kind: 'nan_decode', sub: 'decode' }];
    case 'illegal_memory_access':
      return [{ phase: 'request', kind: 'illegal_memory_access', sub: 'decode' }];
    case 'model_load_error':
      return [{ phase: 'weight_load', kind: 'model_load_error' }];
    case 'import_error':
      return [{ phase: 'startup', kind: 'import_error' }];
    case 'watchdog_timeout':
      return [{ phase: 'request', kind: 'watchdog_timeout', sub: 'decode' }];
    case 'nccl_error':
      return [{ phase: 'dist_init', kind: 'nccl_error' }];
    case 'thread_traceback':
      // Logged, not fatal: the request is answered as always (http.mjs).
      return [{ phase: 'request', kind: 'thread_traceback', sub: 'log' }];
    default:
      return [];
  }
}

/**
 * Current events: control file word > STANDIN_SCENARIO > flags. An event whose phase has already passed moves to
 * the next request (a test can turn a healthy server bad), except for those that only exist at startup.
 * @param {object} cfg resolved config
 * @param {string|null} envWord STANDIN_SCENARIO
 * @param {string} currentPhase
 * @returns {Event[]}
 */
export function currentEvents(cfg, envWord, currentPhase) {
  const control = readControl();
  const word = control ?? envWord;
  const origin = control ? 'control' : envWord ? 'env' : 'flags';
  const events = (word ? forcedEvents(word, cfg) : flagEvents(cfg)).map((e) => ({ ...e, origin }));
  if (!control) return events;
  const now = PHASES.indexOf(currentPhase);
  return events
    .map((e) => {
      const at = PHASES.indexOf(e.phase);
      if (at >= now || e.phase === 'request') return e;
      if (['import_error', 'model_load_error'].includes(e.kind)) return null;
      if (e.kind === 'stall') return { phase: 'request', kind: 'stall', sub: 'prefill' };
      return {
        ...e,
        phase: 'request',
        sub: e.kind === 'nan_decode' || e.kind === 'illegal_memory_access' ? 'decode' : 'prefill',
        where: 'prefill',
      };
    })
    .filter((e) => e !== null);
}

/** The first event at `phase`, or null. */
export function eventAt(events, phase) {
  return events.find((e) => e.phase === phase) ?? null;
}
