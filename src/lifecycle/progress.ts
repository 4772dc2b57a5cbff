// What an attempt's log says about its progress, as one small state folded over milestones. The face shows
// `text` for notable steps; `summary()` is the one-line state for the attempt's message.
import type { Milestone } from '../logs/milestones.ts';

export interface Progress {
  stage: 'starting' | 'weights' | 'kv_cache' | 'cuda_graph' | 'warmup' | 'ready' | 'shutdown';
  shardsDone?: number;
  shardsTotal?: number;
  kvTokens?: number;
  graphSeconds?: number;
  port?: number;
}

export function initialProgress(): Progress {
  return { stage: 'starting' };
}

/** Folds one milestone in; returns the new state and, for a step worth telling a person, its text. */
export function advance(p: Progress, m: Milestone): { progress: Progress; text?: string } {
  switch (m.kind) {
    case 'weights_begin':
      return { progress: { ...p, stage: 'weights' }, text: 'loading weights' };
    case 'shards': {
      // Report every 10% so a person sees movement without a line per shard.
      const before = p.shardsDone && p.shardsTotal ? Math.floor((p.shardsDone / p.shardsTotal) * 10) : -1;
      const after = Math.floor((m.done / m.total) * 10);
      const next = { ...p, stage: 'weights' as const, shardsDone: m.done, shardsTotal: m.total };
      return after > before
        ? { progress: next, text: `loading weights ${m.done}/${m.total} shards (${m.percent}%)` }
        : { progress: next };
    }
    case 'weights_end':
      return {
        progress: { ...p, stage: 'kv_cache' },
        text: `weights loaded${m.memUsageGb ? ` (${m.memUsageGb} GB per GPU)` : ''}`,
      };
    case 'kv_allocated':
      return {
        progress: { ...p, stage: 'kv_cache', kvTokens: m.tokens },
        text: `KV cache allocated: ${m.tokens.toLocaleString('en-US')} tokens`,
      };
    case 'graph_begin':
      return { progress: { ...p, stage: 'cuda_graph' }, text: 'CUDA graph capture started' };
    case 'graph_end':
      return {
        progress: { ...p, stage: 'warmup', graphSeconds: m.seconds },
        text: `CUDA graph capture done${m.seconds !== undefined && !Number.isNaN(m.seconds) ? ` in ${m.seconds.toFixed(1)} s` : ''}`,
      };
    case 'uvicorn_running':
      return {
        progress: { ...p, stage: 'warmup', port: m.port },
        text: `HTTP server listening on port ${m.port}, warming up`,
      };
    case 'ready':
      return { progress: { ...p, stage: 'ready' }, text: 'ready line seen' };
    case 'shutdown':
      return { progress: { ...p, stage: 'shutdown' } };
    default:
      return { progress: p };
  }
}

export function summary(p: Progress): string {
  switch (p.stage) {
    case 'weights':
      return p.shardsTotal ? `loading ${p.shardsDone}/${p.shardsTotal} shards` : 'loading weights';
    case 'kv_cache':
      return 'allocating KV cache';
    case 'cuda_graph':
      return 'capturing CUDA graphs';
    case 'warmup':
      return 'warming up';
    default:
      return p.stage;
  }
}
