// The nodes of an attempt: one for a plain launch, several for a multi-node one (node 0, the head, is the attempt row;
// workers are in attempt_nodes). Watching, stopping and reconciling work on nodes, so one code path serves both.
import type { Attempt } from '../ledger/attempts.ts';
import type { Diagnosis } from '../logs/diagnosis.ts';
import type { Engine } from './engine.ts';
import { runIdFor } from './remote-state.ts';

export interface NodeRef {
  attemptId: number;
  rank: number;
  host: string;
  runId: string;
  logPath: string | null;
  pgid: number | null;
  pgidStart: string | null;
  logOffset: number;
  /** The scheduler job every node of the attempt runs in (Slurm); null for a process group started over SSH. */
  jobId: string | null;
}

export function headNode(a: Attempt): NodeRef {
  return {
    attemptId: a.id,
    rank: 0,
    host: a.host,
    runId: runIdFor(a),
    logPath: a.logPath,
    pgid: a.pgid,
    pgidStart: a.pgidStart,
    logOffset: a.logOffset,
    jobId: a.jobId,
  };
}

/** Every node of the attempt, head first, as the ledger has them now. */
export function nodesOf(engine: Pick<Engine, 'attempts'>, a: Attempt): NodeRef[] {
  const workers = engine.attempts.nodes(a.id).map((n) => ({
    attemptId: a.id,
    rank: n.rank,
    host: n.host,
    runId: runIdFor(a, n.rank),
    logPath: n.logPath,
    pgid: n.pgid,
    pgidStart: n.pgidStart,
    logOffset: n.logOffset,
    jobId: a.jobId,
  }));
  return [headNode(a), ...workers];
}

export function saveOffset(engine: Pick<Engine, 'attempts'>, node: NodeRef, offset: number): void {
  if (node.rank === 0) engine.attempts.update(node.attemptId, { logOffset: offset });
  else engine.attempts.updateNode(node.attemptId, node.rank, { logOffset: offset });
}

/** The node's offset as the ledger has it now (a requeue resets it; a NodeRef taken before keeps the old run's). */
export function savedOffset(engine: Pick<Engine, 'attempts'>, node: NodeRef): number {
  if (node.rank === 0) return engine.attempts.get(node.attemptId)?.logOffset ?? node.logOffset;
  return engine.attempts.nodes(node.attemptId).find((n) => n.rank === node.rank)?.logOffset ?? node.logOffset;
}

/** How a node is named in messages: `node 1 (gpu-b)`. */
export function nodeLabel(node: Pick<NodeRef, 'rank' | 'host'>): string {
  return `node ${node.rank} (${node.host})`;
}

/**
 * A node's failure that losing a peer explains (a worker its head, a head its worker): gloo's "Connection closed by
 * peer", an NCCL or collective error, a watchdog, an exit or death with nothing named, a connection to a peer lost
 * (ConnectionResetError, BrokenPipeError, EOFError). A node with a cause of its own (out of memory, an illegal access,
 * an assertion) crashed whatever its peers did.
 */
export function peerLoss(d: Diagnosis): boolean {
  if (PEER_LOSS.has(d.category)) return true;
  return d.category === 'other' && (d.evidence.length === 0 || PEER_LOSS_WORDS.test(d.summary));
}
const PEER_LOSS = new Set(['node_lost', 'nccl_error', 'watchdog_timeout']);
const PEER_LOSS_WORDS =
  /ConnectionResetError|ConnectionAbortedError|BrokenPipeError|EOFError|IncompleteReadError|Connection (?:reset|closed|aborted)|connection lost|peer/i;
