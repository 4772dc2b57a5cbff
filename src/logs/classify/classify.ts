// Public entry points: a streaming classifier for a log follower, and whole-log helpers for text, files and stdin.

import { createReadStream } from 'node:fs';
import { readableLine } from '../lines.ts';
import { type Catalog, loadCatalog } from './catalog.ts';
import { ClassifierEngine, type ProcessExit } from './engine.ts';
import { FastScanner } from './scan.ts';
import type { Classification, Diagnosis, Phase } from './types.ts';

export interface ClassifierOptions {
  /** Defaults to the built-in catalog (`loadCatalog()`). */
  catalog?: Catalog;
  /**
   * Per-phase stall limits for `checkStall`, in ms; `null` turns detection off for that phase. Defaults: 10 min
   * (unknown, startup, kv_alloc, cuda_graph_capture), 20 min (weight_load), 15 min (warmup, prefill, decode), none
   * for runtime and shutdown (an idle server prints nothing).
   */
  stallMs?: Partial<Record<Phase, number | null>>;
  /** Injected clock for stall detection (ms). */
  clock?: () => number;
  /** How the process ended, when known: an exit other than 0 is a crash even when the log names no cause. */
  exit?: ProcessExit;
  /**
   * The reader starts after the server's ready line (a smoke test's bytes since a mark, a follow resumed after a bot
   * restart): read as if that line had been read, so what a serving server survives (one client's bad request) is
   * judged as it is when the whole log is read.
   */
  serving?: boolean;
}

export interface Classifier {
  /** Feed one cleaned line (see lines.ts) with its 1-based line number. */
  push(line: string, lineNo: number): void;
  /** The classification so far. */
  result(): Classification;
  /** The classification plus the deciding signature's meaning, next steps and upstream issues. */
  diagnosis(): Diagnosis;
  /** True once a root cause or a process-death consequence has been seen (alert now). */
  crashed(): boolean;
  /**
   * Stall detection: when no line arrived for longer than the current phase allows, returns a
   * `watchdog_timeout` classification with a "(hang)" summary (and `result()` returns it until the next line);
   * otherwise null. Never reports a hang once the log shows a crash.
   */
  checkStall(nowMs: number): Classification | null;
}

function engineFor(opts: ClassifierOptions): ClassifierEngine {
  return new ClassifierEngine({
    catalog: opts.catalog ?? loadCatalog(),
    ...(opts.stallMs !== undefined && { stallMs: opts.stallMs }),
    ...(opts.clock !== undefined && { clock: opts.clock }),
    ...(opts.exit !== undefined && { exit: opts.exit }),
    ...(opts.serving !== undefined && { serving: opts.serving }),
  });
}

export function createClassifier(opts: ClassifierOptions = {}): Classifier {
  const engine = engineFor(opts);
  return {
    push: (line, lineNo) => engine.push(line, lineNo),
    result: () => engine.result(),
    diagnosis: () => engine.diagnosis(),
    crashed: () => engine.crashed(),
    checkStall: (nowMs) => engine.checkStall(nowMs),
  };
}

/** Classify a whole log held in memory, line by line (the reference behaviour the fast paths must match). */
export function diagnoseText(text: string, opts: ClassifierOptions = {}): Diagnosis {
  const c = createClassifier(opts);
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((raw, i) => {
    c.push(readableLine(raw), i + 1);
  });
  return c.diagnosis();
}

export function classifyText(text: string, opts: ClassifierOptions = {}): Classification {
  return diagnoseText(text, opts).classification;
}

/** Classify a byte stream (a file, stdin) with the fast block scan; memory stays bounded whatever its size. */
export async function diagnoseStream(
  source: AsyncIterable<Buffer | string>,
  opts: ClassifierOptions = {},
): Promise<Diagnosis> {
  const engine = engineFor(opts);
  const scanner = new FastScanner(engine);
  for await (const chunk of source) scanner.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  scanner.end();
  return engine.diagnosis();
}

export function diagnoseFile(path: string, opts: ClassifierOptions = {}): Promise<Diagnosis> {
  return diagnoseStream(createReadStream(path, { highWaterMark: 4 << 20 }), opts);
}

export async function classifyFile(path: string, opts: ClassifierOptions = {}): Promise<Classification> {
  return (await diagnoseFile(path, opts)).classification;
}
