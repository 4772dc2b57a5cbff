// Turning what the engine found into the public Classification: summary line, bounded evidence, stable dedup key
// and a confidence that says how directly the log names the cause.

import { createHash } from 'node:crypto';
import { displayText, normaliseForKey, statesNothing } from './lineinfo.ts';
import type { Frame } from './phase.ts';
import type { Category, Classification, Evidence, Phase } from './types.ts';

export const MAX_EVIDENCE = 8;
const MAX_FRAMES_SHOWN = 4;

const LABEL: Record<Category, string> = {
  nan_in_sampling: 'NaN in sampling',
  cuda_oom: 'CUDA out of memory',
  cuda_graph_capture_failed: 'CUDA graph capture failed',
  shared_memory_exceeded: 'Shared memory exceeded',
  unsupported_arch: 'Unsupported GPU architecture',
  illegal_memory_access: 'Illegal memory access',
  backend_assertion: 'Backend assertion',
  nccl_error: 'NCCL error',
  model_load_error: 'Model load error',
  import_error: 'Import error',
  port_in_use: 'Port in use',
  watchdog_timeout: 'Watchdog timeout',
  other: 'Crash of unknown cause',
  none: 'No crash',
};

export function shortHash(text: string): string {
  return createHash('sha1').update(text).digest('hex').slice(0, 10);
}

export function dedupKey(category: Category, signatureId: string, rootLine: string): string {
  return `${category}/${signatureId}/${shortHash(normaliseForKey(rootLine))}`;
}

export function summarise(category: Category, phase: Phase, rank: number | null, detail: string): string {
  const where = `${phase === 'unknown' ? '' : ` during ${phase}`}${rank === null ? '' : ` on TP${rank}`}`;
  return `${LABEL[category]}${where}: ${detail}`;
}

/**
 * The root line among candidates, best first: the first that states something (statesNothing), else the first
 * there is (a crash always shows a line).
 */
export function chooseRoot(candidates: ReadonlyArray<Evidence | null | undefined>): Evidence | null {
  const present = candidates.filter((c): c is Evidence => c !== null && c !== undefined);
  return present.find((c) => !statesNothing(c.text)) ?? present[0] ?? null;
}

export function evidenceLine(line: number, text: string): Evidence {
  const t = text.trimEnd();
  return { line, text: t.length > 500 ? `${t.slice(0, 499)}…` : t };
}

/**
 * Root line(s) first, then the traceback header and a few key frames: the innermost SGLang frames say where it
 * broke, the innermost frame overall says in which library.
 */
export function buildEvidence(roots: Evidence[], header: Evidence | null, frames: readonly Frame[]): Evidence[] {
  const out: Evidence[] = [...roots];
  const seen = new Set(out.map((e) => e.line));
  const add = (e: Evidence) => {
    if (out.length < MAX_EVIDENCE && !seen.has(e.line)) {
      out.push(e);
      seen.add(e.line);
    }
  };
  if (header) add(header);
  const own = frames.filter((f) => f.file.includes('/sglang/'));
  const picked = own.slice(-(MAX_FRAMES_SHOWN - 1));
  const innermost = frames[frames.length - 1];
  if (innermost && !picked.includes(innermost)) picked.push(innermost);
  for (const f of picked) add({ line: f.line, text: f.text.trim() });
  return out;
}

export function classification(
  category: Category,
  phase: Phase,
  rank: number | null,
  detail: string,
  evidence: Evidence[],
  key: string,
  confidence: number,
): Classification {
  return {
    category,
    phase,
    summary: summarise(category, phase, rank, detail),
    evidence,
    rank,
    dedupKey: key,
    confidence: Math.round(confidence * 100) / 100,
  };
}

/**
 * A server that exited non-zero (or by a signal) with no cause in its log: never `none`, at worst `other`, with its
 * status and the last line it printed. Used by the classifier when it is told the exit, and by the lifecycle when
 * it learns the exit after the log was classified.
 */
export function exitedClassification(
  phase: Phase,
  exit: { code: number | null; signal: string | null },
  lastLine: Evidence | null,
): Classification & { reason: string } {
  const status = exit.signal !== null ? `signal ${exit.signal}` : `status ${exit.code}`;
  return {
    ...classification(
      'other',
      phase,
      null,
      `exited with ${status}${lastLine ? `; last line: ${detailOf(lastLine.text)}` : ''}`,
      lastLine ? [lastLine] : [],
      dedupKey('other', 'exit', status),
      0.4,
    ),
    reason: `the process exited with ${status} and the log names no cause${lastLine ? '; the last line is shown' : ''} (confidence 0.4)`,
  };
}

export function detailOf(line: string, max = 120): string {
  return displayText(line, max);
}

export function formatDuration(ms: number): string {
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 1000)} s`;
}
