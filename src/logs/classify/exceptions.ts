// Layer 3 of the classifier: when no signature names the cause, decide the class from what generalises: the
// exception's type and message and the modules and functions it was raised from. A KeyError inside transformers'
// config code is a model that this transformers cannot load, whatever the key; an ImportError is an import error,
// whatever the module. Rules are data (catalog/signatures.yaml, `exceptions:`), ranked by priority against the
// signatures and each other, so the precedence between classes is written once.

import { z } from 'zod';
import type { Frame } from './phase.ts';
import { CATEGORIES, type Category, PHASES, type Phase } from './types.ts';

/** `module.ExcType: message`, `ExcType`, C++ `c10::Error` (from `terminate called after throwing ...`). */
export interface RaisedException {
  /** The full name as printed (`torch.OutOfMemoryError`, `c10::DistBackendError`). */
  type: string;
  /** The last component (`OutOfMemoryError`, `DistBackendError`). */
  short: string;
  message: string;
}

// Python prints `Type: message` or just `Type`; names end in Error/Exception/... or are one of the few builtins that
// do not. `raise ...` source lines never reach here: only the line after a traceback's frames is read.
// Ray names a remote task's exception with its cause: `ray.exceptions.RayTaskError(EngineDeadError): ray::f()`.
const EXC_LINE = /^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?:\([A-Za-z_]\w*\))?(?::(?: (.*))?)?$/;
// Warnings are left out on purpose: a warning printed with its type is not a crash.
// A bare `Error:` is how Rust and Go programs (a launcher, a router) start a message, not a Python exception.
const EXC_NAME =
  /^(?:Exception|StopIteration|OutOfResources|\w+(?:Error|Exception|Exit|Interrupt|Failure|Timeout|OutOfResources))$/;

// FlashInfer's C++ checks throw `flashinfer::Error`, whose message is `Error in function 'F' at file:line: message`
// (include/flashinfer/exception.h); its Python bindings raise it as a RuntimeError, which a wrapper that prints only
// the message (`Capture cuda graph failed: Error in function ...`) leaves without its type.
const FLASHINFER_ERROR = /^Error in function '[^']{1,200}' at [^\s:]{1,400}:\d+: (.*)$/;

export function parseExceptionLine(text: string): RaisedException | null {
  const fi = FLASHINFER_ERROR.exec(text.trim());
  if (fi) return { type: 'RuntimeError', short: 'RuntimeError', message: fi[1] ?? '' };
  const m = EXC_LINE.exec(text.trim());
  if (!m) return null;
  const type = m[1] ?? '';
  const short = type.slice(type.lastIndexOf('.') + 1);
  if (!EXC_NAME.test(short)) return null;
  return { type, short, message: (m[2] ?? '').trim() };
}

// Where Python prints a traceback's exception (the first line after its frames), any class name is one, whatever
// it ends in: `pkg_resources.DistributionNotFound: ...`, `concurrent.futures.process.BrokenProcessPool: ...`. Class
// names are CapWords (PEP 8); a module path may lead.
const CLASS_NAME = /^(?:[A-Za-z_]\w*\.)*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$/;

/** An exception line read where a traceback's frames end: parseExceptionLine's, or any CapWords class name. */
export function parseExceptionAtEnd(text: string): RaisedException | null {
  const named = parseExceptionLine(text);
  if (named) return named;
  const m = EXC_LINE.exec(text.trim());
  const type = m?.[1] ?? '';
  if (!m || !CLASS_NAME.test(type) || (!m[2] && !type.includes('.'))) return null;
  return { type, short: type.slice(type.lastIndexOf('.') + 1), message: (m[2] ?? '').trim() };
}

// pydantic (v2) prints each error of a ValidationError as its type's message template with the validator's own
// exception in it: a ValueError or AssertionError raised in a validator becomes `Value error, <message>` or `Assertion
// failed, <message>` (pydantic-core src/errors/types.rs, ErrorType::ValueError / AssertionError), then ` [type=
// value_error, input_value=..., input_type=...]` (an excerpt can cut it). The line alone is that exception.
const PYDANTIC_ERROR = /^\s*(Value error|Assertion failed), (.{1,4000}?)(?: \[type=(?:value|assertion)_error\b.*)?$/;

/** The validator's exception a pydantic error line carries (`Value error, <message>`), or null. */
export function pydanticError(text: string): RaisedException | null {
  const pyd = PYDANTIC_ERROR.exec(text);
  if (!pyd) return null;
  const type = pyd[1] === 'Value error' ? 'ValueError' : 'AssertionError';
  return { type, short: type, message: pyd[2] ?? '' };
}

const TERMINATE = /terminate called after throwing an instance of '([^']+)'/;
const WHAT = /^\s*what\(\):\s*(.*)$/;

/** A C++ exception type from `terminate called after throwing an instance of 'c10::Error'`. */
export function cppExceptionType(text: string): string | null {
  return TERMINATE.exec(text)?.[1] ?? null;
}

// The type and its `what():` message on one line: libstdc++'s verbose terminate handler prints them on two
// (libstdc++-v3/libsupc++/vterminate.cc: `terminate called after throwing an instance of 'T'`, then `  what():  msg`),
// which a paste or a log collector can join; Ray's TerminateHandler logs one line, `Unhandled exception: <typeid
// name>. what(): msg` (src/ray/util/logging.cc). Bounded runs: read on any line that names a terminate.
const WHAT_SAME_LINE =
  /(?:terminate called after throwing an instance of '([^']{1,300})'|Unhandled exception: ([\w:<>]{1,300})\.) {0,40}what\(\): *(.*)$/;

/** A C++ exception whose type and `what():` message are on one line, or null. */
export function cppExceptionOnOneLine(text: string): RaisedException | null {
  const m = WHAT_SAME_LINE.exec(text);
  return m ? cppException(m[1] ?? m[2] ?? '', (m[3] ?? '').trim()) : null;
}

/** The message of a C++ `what():` line, or null. */
export function whatMessage(text: string): string | null {
  const m = WHAT.exec(text);
  return m ? (m[1] ?? '') : null;
}

export function cppException(type: string, message: string): RaisedException {
  return { type, short: type.slice(type.lastIndexOf(':') + 1), message };
}

export const exceptionRuleSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/),
  category: z.enum(CATEGORIES).refine((c) => c !== 'none', 'an exception rule names a crash class'),
  priority: z.number().int().min(0).max(100),
  phase: z.enum(PHASES).optional(),
  /** Exception names (full or last component); any matches. Omitted: any type. */
  types: z.array(z.string().min(1)).min(1).optional(),
  /** Regex over the message (case-insensitive). */
  message: z.string().min(1).optional(),
  /** Regex over the message (case-insensitive) that rules the exception out (a CUDA error is not a config check). */
  unless: z.string().min(1).optional(),
  /**
   * Regex over the source lines shown under the frames `where` names: the calls being made when it failed
   * (case-sensitive, as code is). They say what was being done where file and function names do not (a notebook
   * cell, a script's `<module>`, a library's generic dispatch frame).
   */
  calls: z.string().min(1).optional(),
  /** Substrings of a frame's file path or function name. */
  frames: z.array(z.string().min(1)).min(1).optional(),
  /**
   * Where the frames must be: `innermost` = the frame that raised it, `raised` = the innermost three (where it was
   * raised, helpers included), `any` = anywhere in the stack.
   */
  where: z.enum(['innermost', 'raised', 'any']).default('any'),
  /**
   * Phases the log's milestones placed the exception in (`[cuda_graph_capture]`: raised while graphs were captured,
   * whatever raised it). Omitted: any.
   */
  during: z.array(z.enum(PHASES)).min(1).optional(),
  title: z.string().min(1),
  meaning: z.string().min(1),
  next_steps: z.array(z.string().min(1)).default([]),
});

export type RawExceptionRule = z.infer<typeof exceptionRuleSchema>;

export interface ExceptionRule {
  id: string;
  category: Exclude<Category, 'none'>;
  priority: number;
  phase?: Phase;
  types: Set<string> | null;
  message: RegExp | null;
  unless: RegExp | null;
  calls: RegExp | null;
  frames: string[] | null;
  where: 'innermost' | 'raised' | 'any';
  during: Set<Phase> | null;
  title: string;
  meaning: string;
  nextSteps: string[];
}

export function compileExceptionRule(r: RawExceptionRule): ExceptionRule {
  return {
    id: r.id,
    category: r.category as Exclude<Category, 'none'>,
    priority: r.priority,
    ...(r.phase !== undefined && { phase: r.phase }),
    types: r.types ? new Set(r.types) : null,
    message: r.message ? new RegExp(r.message, 'i') : null,
    unless: r.unless ? new RegExp(r.unless, 'i') : null,
    calls: r.calls ? new RegExp(r.calls) : null,
    frames: r.frames ?? null,
    where: r.where,
    during: r.during ? new Set(r.during) : null,
    title: r.title,
    meaning: r.meaning,
    nextSteps: r.next_steps,
  };
}

const RAISED_FRAMES = 3;

/** The frame that satisfies the rule's `frames` (innermost first), or null. */
export function matchingFrame(rule: ExceptionRule, frames: readonly Frame[]): Frame | null {
  if (!rule.frames) return null;
  const pool = framesOf(rule, frames);
  const wanted = rule.frames;
  for (let i = pool.length - 1; i >= 0; i--) {
    const f = pool[i] as Frame;
    const file = slashed(f.file);
    if (wanted.some((w) => file.includes(w) || f.func === w)) return f;
  }
  return null;
}

/**
 * A Windows traceback's path with `/` for `\` (`D:\envs\x\site-packages\vllm\model_executor\models\registry.py`):
 * Python prints the path as the OS spells it, and the rules name modules by their `/` paths.
 */
function slashed(file: string): string {
  return file.includes('\\') ? file.replaceAll('\\', '/') : file;
}

function framesOf(rule: ExceptionRule, frames: readonly Frame[]): readonly Frame[] {
  return rule.where === 'any' ? frames : frames.slice(rule.where === 'innermost' ? -1 : -RAISED_FRAMES);
}

function callsMatch(rule: ExceptionRule, frames: readonly Frame[]): boolean {
  const calls = rule.calls;
  return calls !== null && framesOf(rule, frames).some((f) => f.source !== undefined && calls.test(f.source));
}

function framesMatch(rule: ExceptionRule, frames: readonly Frame[]): boolean {
  return !rule.frames || matchingFrame(rule, frames) !== null;
}

/**
 * The highest-priority rule for this exception and stack (ties: the first in the catalog), or null. `phaseAt`: the
 * phase the milestones had reached when its traceback started.
 */
export function matchException(
  rules: readonly ExceptionRule[],
  exc: RaisedException,
  frames: readonly Frame[],
  phaseAt: Phase = 'unknown',
): ExceptionRule | null {
  let best: ExceptionRule | null = null;
  for (const r of rules) {
    if (best && r.priority <= best.priority) continue;
    if (r.during && !r.during.has(phaseAt)) continue;
    if (r.types && !r.types.has(exc.type) && !r.types.has(exc.short)) continue;
    if (r.message && !r.message.test(exc.message)) continue;
    if (r.unless?.test(exc.message)) continue;
    if (!framesMatch(r, frames)) continue;
    if (r.calls && !callsMatch(r, frames)) continue;
    best = r;
  }
  return best;
}
