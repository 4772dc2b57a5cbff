// The crash classes and phases the bot speaks in (defined in corpus/README.md, listed in the README), and the
// classifier's output shape. The JSON form of `Classification` is a public contract (`glm classify --json`): these
// seven fields, to which the command adds `reason` and `known`.

export const CATEGORIES = [
  'nan_in_sampling',
  'cuda_oom',
  'cuda_graph_capture_failed',
  'shared_memory_exceeded',
  'unsupported_arch',
  'illegal_memory_access',
  'backend_assertion',
  'nccl_error',
  'model_load_error',
  'import_error',
  'port_in_use',
  'watchdog_timeout',
  'other',
  'none',
] as const;
export type Category = (typeof CATEGORIES)[number];

export const PHASES = [
  'startup',
  'weight_load',
  'kv_alloc',
  'cuda_graph_capture',
  'warmup',
  'prefill',
  'decode',
  'runtime',
  'shutdown',
  'unknown',
] as const;
export type Phase = (typeof PHASES)[number];

export const ROLES = ['root', 'consequence', 'benign'] as const;
export type Role = (typeof ROLES)[number];

export interface Evidence {
  /** 1-based line number in the log. */
  line: number;
  text: string;
}

export interface Classification {
  category: Category;
  phase: Phase;
  summary: string;
  evidence: Evidence[];
  rank: number | null;
  dedupKey: string;
  confidence: number;
}

export interface UpstreamRef {
  url: string;
  title: string;
  arch?: string;
}

/** A catalog entry after validation, with its regexes compiled once. */
export interface Signature {
  id: string;
  category?: Category;
  role: Role;
  priority: number;
  phase?: Phase;
  title?: string;
  /** The message wraps its cause after the matched text (schema.ts). */
  wraps: boolean;
  /** The message says how the process ended, not why (schema.ts). */
  generic: boolean;
  /** The server can serve past it: serving lines after it say it was survived (schema.ts). */
  transient: boolean;
  /** A benign notice the next traceback belongs to (schema.ts). */
  stackFollows: boolean;
  /** Where the wrapper's own text resumes after the cause, when it adds some. */
  wrapsUntil?: RegExp;
  meaning: string;
  nextSteps: string[];
  upstream: UpstreamRef[];
  source?: string;
  regexes: RegExp[];
  /** Literal text every matching line contains (one of them); `ci` = compare case-insensitively. */
  anchors: Anchor[];
}

export interface Anchor {
  text: string;
  ci: boolean;
}

/** What the bot needs beyond the JSON shape: which signature decided, and what the team should do about it. */
export interface Diagnosis {
  classification: Classification;
  signature: Pick<Signature, 'id' | 'meaning' | 'nextSteps' | 'upstream' | 'source' | 'title'> | null;
  /** True when the result is a stall detected by the clock, not a line in the log. */
  hang: boolean;
  linesRead: number;
  /** Why, in one line: the rule or signature that decided, the line it read, how sure it is. */
  reason: string;
  /**
   * Only a failure record names this crash (no traceback, signature or death): a process that then exits 0 by itself
   * survived it (the engine says `none` once it is told that exit; the lifecycle, which learns the exit later, asks).
   */
  survivable?: true;
  /** The server's own line saying a stop signal reached it, when no crash came before it (engine.ts, stopSignal). */
  stopped?: Evidence;
}
