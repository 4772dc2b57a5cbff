// The stand-in's performance model: how fast a simulated server answers, from the knobs a tuner turns. It is the
// stand-in's own closed-form surface, documented in README.md ("Performance model"), not a measurement of SGLang:
// each knob moves throughput and latency the way its SGLang counterpart is known to in direction, with a cost on
// the other side, so that a search has a real optimum and real boundaries to find. Deterministic: the noise comes
// from a PRNG seeded by the configuration, so the same configuration under the same load measures the same.

import { createHash } from 'node:crypto';

/** Base latencies (ms, wall time: not scaled by STANDIN_TIME_SCALE) of one request alone on a tuned server. */
export const BASE = { ttftMs: 20, tpotMs: 5 };

/** Per-step cost of the tree-walking policies when requests share no prefix (a random-prompt load). */
const POLICY = { fcfs: 1, lof: 1.01, priority: 1.01, random: 1.02, lpm: 1.03, 'dfs-weight': 1.04 };

/** Decode without a captured CUDA graph (disabled, or a batch above the largest captured size). */
export const EAGER = 1.6;

/** Activation memory of the largest prefill chunk, GB per GPU per 8192 tokens (MoE models, others). */
const ACT_PER_8K = { moe: 2.5, dense: 0.3 };

/** The prefill chunk the server really runs (`-1` disables chunking: the whole prefill budget at once). */
const chunkOf = (cfg) => (cfg.chunked > 0 ? cfg.chunked : cfg.maxPrefillTokens);

export function activationGb(cfg) {
  return ((cfg.profile.moe ? ACT_PER_8K.moe : ACT_PER_8K.dense) * chunkOf(cfg)) / 8192;
}

/**
 * Memory that does not fit: the static pool (mem_fraction_static of the card), the CUDA graphs and the largest
 * prefill chunk's activations against what the card has after the CUDA context. null when it fits.
 */
export function memoryOverflow(cfg) {
  const m = cfg.mem;
  const needGb = cfg.mfs * m.totalGb + m.graphGb + activationGb(cfg);
  const limitGb = m.totalGb - m.ctxGb;
  return needGb > limitGb ? { needGb, limitGb } : null;
}

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The knobs the model reads, as one string: the noise seed and what `/server_info` would show. */
export function knobKey(cfg) {
  return JSON.stringify([
    cfg.modelPath,
    cfg.graphEnabled,
    cfg.maxCaptureBs,
    cfg.mfs,
    chunkOf(cfg),
    cfg.maxRunning,
    cfg.schedulePolicy,
    cfg.conservativeness,
    cfg.prefillBackend,
    cfg.decodeBackend,
  ]);
}

/** Step-cost factor of schedule_conservativeness: less reserved room packs more decode work per step, until
 * requests have to be retracted and recomputed (below 0.5). */
function conservativenessFactor(s) {
  return s >= 0.5 ? 0.9 + 0.1 * Math.min(s, 2) : 0.95 + (0.5 - s) * 2;
}

/**
 * @param {object} cfg resolved config (resolve.mjs)
 * @param {{ttftMs?: number, tpotMs?: number}} fixed STANDIN_TTFT_MS / STANDIN_TPOT_MS: set, they pace every
 *   request exactly (the load tests measure against them) and the model is off.
 */
export function perfModel(cfg, fixed = {}) {
  const seed = Number.parseInt(createHash('sha256').update(knobKey(cfg)).digest('hex').slice(0, 8), 16);
  const rand = mulberry32(seed);
  const noise = () => 1 + 0.02 * (2 * rand() - 1);
  const isFixed = fixed.ttftMs !== undefined || fixed.tpotMs !== undefined;
  const chunk = chunkOf(cfg);
  const kMem = 1 + 2.5 * Math.max(0, 0.93 - cfg.mfs);
  const kChunk = 1 + chunk / 32768;
  const kPolicy = POLICY[cfg.schedulePolicy] ?? 1;
  const kCons = conservativenessFactor(cfg.conservativeness);
  return {
    modelled: !isFixed,
    /** Most requests decoded at once; the rest wait for a slot (their TTFT includes the wait). */
    maxRunning: cfg.maxRunning,
    /** Time to first token once admitted: a fixed cost, the prompt, and a pass per prefill chunk. */
    ttftMs(promptTokens) {
      if (isFixed) return fixed.ttftMs ?? BASE.ttftMs;
      const passes = Math.max(1, Math.ceil(promptTokens / chunk));
      return (BASE.ttftMs + 0.02 * promptTokens + 6 * (passes - 1)) * noise();
    },
    /** Time per output token at a decode batch of `batch` requests. */
    itlMs(batch) {
      if (isFixed) return fixed.tpotMs ?? BASE.tpotMs;
      const graph = cfg.graphEnabled && batch <= cfg.maxCaptureBs ? 1 : EAGER;
      return BASE.tpotMs * (1 + (batch - 1) / 32) * graph * kMem * kChunk * kPolicy * kCons * noise();
    },
  };
}
