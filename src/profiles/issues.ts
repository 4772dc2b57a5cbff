// Turns zod's issues into the project's `path: message (fix: ...)` form, with the fix a person needs: the likely
// intended key or value, and the list of valid ones.
import type { z } from 'zod';
import type { Issue } from '../errors.ts';
import { closest, didYouMean } from '../suggest.ts';
import { allChoices, CHOICES, type ChoiceSet, SHIPPED_SGLANG } from './choices.ts';
import { CHOICE_FIELDS, PROFILE_KEYS } from './schema.ts';

type PathPart = PropertyKey;

/** `env.NCCL_P2P_LEVEL`, `extra_args[2]`, `env["BAD NAME"]`. */
export function formatPath(path: readonly PathPart[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(String(p))) out += out ? `.${String(p)}` : String(p);
    else out += `[${JSON.stringify(String(p))}]`;
  }
  return out;
}

export function at(label: string, path: readonly PathPart[] | string): string {
  const p = typeof path === 'string' ? path : formatPath(path);
  return p ? `${label}: ${p}` : label;
}

// Keys people reach for from SGLang's own flag names; edit distance alone would not find these.
const KEY_HINTS: Readonly<Record<string, string>> = {
  model: "use 'model_path'",
  tp_size: "use 'tp'",
  tensor_parallel_size: "use 'tp'",
  host: "use 'host_bind'",
  disable_cuda_graph: "use 'cuda_graph: false'",
  fp8_gemm_runner_backend: "use 'fp8_gemm_backend'",
  cuda_graph_max_bs_decode: "use 'cuda_graph_max_bs'",
  cuda_visible_devices: "use 'gpus: [0, 1, ...]'",
  args: "use 'extra_args'",
};

function valueAt(root: unknown, path: readonly PathPart[]): unknown {
  let cur = root;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `the string '${v}'`;
  return `${typeof v} ${String(v)}`;
}

export function validList(set: ChoiceSet): string {
  const c = CHOICES[set];
  const newer = c.newer.length ? `; newer SGLang only: ${c.newer.join(', ')}` : '';
  return `valid: ${c.f.join(', ')}${newer}`;
}

/**
 * Each choice a profile names that the shipped table lacks: not a refusal (the host's SGLang may be newer than the
 * table; its --help decides at launch), but said where profiles are listed and checked, with the likely intended value.
 */
export function shippedTableNotes(label: string, profile: object): Issue[] {
  const notes: Issue[] = [];
  for (const [field, set] of Object.entries(CHOICE_FIELDS)) {
    const value = (profile as Record<string, unknown>)[field];
    if (typeof value !== 'string' || allChoices(set).includes(value)) continue;
    notes.push({
      path: at(label, field),
      message: `'${value}' is not in the shipped table of SGLang ${SHIPPED_SGLANG}; checked against each host's --help at launch`,
      fix: `${didYouMean(value, allChoices(set))}${validList(set)}`,
    });
  }
  return notes;
}

export function unknownKeyIssue(label: string, key: string, prefix: readonly PathPart[] = []): Issue {
  const norm = key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/-/g, '_');
  const hint = KEY_HINTS[norm];
  const guess = closest(key, PROFILE_KEYS);
  return {
    path: at(label, [...prefix, key]),
    message: 'unknown field',
    fix: hint ?? (guess ? `did you mean '${guess}'?` : `valid fields: ${PROFILE_KEYS.join(', ')}`),
  };
}

export function fromZod(label: string, raw: unknown, zi: z.core.$ZodIssue): Issue[] {
  const path = zi.path;
  const input = valueAt(raw, path);
  const field = String(path[0] ?? '');
  switch (zi.code) {
    case 'unrecognized_keys':
      return zi.keys.map((k) => unknownKeyIssue(label, k, path));
    case 'invalid_type': {
      const numeric = zi.expected === 'int' || zi.expected === 'number';
      const expected = zi.expected === 'int' || (numeric && typeof input === 'number') ? 'a whole number' : zi.expected;
      const message = `expected ${expected}, got ${describeValue(input)}`;
      let fix: string | undefined;
      if (field === 'env' && path.length === 2 && input !== undefined) {
        fix = `quote it: ${String(path[1])}: "${String(input)}"`;
      } else if (zi.expected === 'boolean') fix = 'write true or false';
      else if (numeric && typeof input === 'string') fix = 'write the number without quotes';
      return [{ path: at(label, path), message, ...(fix ? { fix } : {}) }];
    }
    case 'invalid_key': {
      const inner = zi.issues[0]?.message ?? zi.message;
      return [{ path: at(label, path), message: inner }];
    }
    case 'too_small':
    case 'too_big': {
      // zod's own wording ("Too small: expected number to be >=1") reads oddly next to ours; keep custom messages.
      if (!zi.message.startsWith('Too ')) break;
      const bound = zi.code === 'too_small' ? zi.minimum : zi.maximum;
      const word = zi.code === 'too_small' ? 'at least' : 'at most';
      const noun = zi.origin === 'array' ? ' entries' : zi.origin === 'string' ? ' characters' : '';
      return [{ path: at(label, path), message: `must be ${word} ${String(bound)}${noun}` }];
    }
    default:
      break;
  }
  return [{ path: at(label, path), message: zi.message }];
}
