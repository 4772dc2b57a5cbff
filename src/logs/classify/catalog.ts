// The signature catalog: the built-in data file (catalog/signatures.yaml) plus user signatures from the bot
// config, validated together so every problem is reported at once as `path: message`, regexes compiled once, and
// the pre-filter built from the signatures' literal text.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { ConfigError, type Issue } from '../../errors.ts';
import { PACKAGE_ROOT } from '../../package-root.ts';
import { AnchorIndex, extractAnchors, minimiseAnchors } from './anchors.ts';
import { ByteGate } from './bytegate.ts';
import { compileExceptionRule, type ExceptionRule } from './exceptions.ts';
import { STRUCTURE_ANCHORS } from './phase.ts';
import { RECORD_ANCHORS } from './records.ts';
import { catalogFileSchema, type RawSignature, signatureSchema } from './schema.ts';
import type { Anchor, Category, Phase, Signature } from './types.ts';

export const BUILTIN_CATALOG = join(PACKAGE_ROOT, 'catalog', 'signatures.yaml');

export interface Catalog {
  signatures: Signature[];
  /** Class from the raised exception when no signature names the cause (exceptions.ts). */
  exceptionRules: ExceptionRule[];
  /** For a class, the classes that name the same failure more precisely (`overlaps:` in the catalog). */
  overlaps: ReadonlyMap<Category, ReadonlySet<Category>>;
  /** The phase of a class's crash when neither milestones nor frames say (`default_phases:`). */
  defaultPhases: Partial<Record<Category, Phase>>;
  byId: ReadonlyMap<string, Signature>;
  /**
   * Pre-filter for one (decoded) line: a line `gate.test` rejects cannot match any signature or milestone;
   * `gate.candidates` names the signatures (by index) whose anchors it has, the only ones whose regexes can match.
   */
  gate: AnchorIndex;
  /** A coarser pre-filter over raw bytes for the fast file scan: every line `gate.test` accepts has a hit. */
  byteGate: ByteGate;
}

export interface LoadOptions {
  /** Config path of the user signatures, for messages (`logs.signatures[2].category: ...`). */
  extraPath?: string;
  /** Catalog file to read instead of the built-in one (tests). */
  file?: string;
}

/** Validate and compile raw signatures; never throws, returns every problem. */
export function compileSignatures(raw: readonly unknown[], path: string): { signatures: Signature[]; issues: Issue[] } {
  const signatures: Signature[] = [];
  const issues: Issue[] = [];
  const seen = new Set<string>();
  raw.forEach((entry, i) => {
    const at = `${path}[${i}]`;
    const parsed = signatureSchema.safeParse(entry);
    if (!parsed.success) {
      issues.push(...zodIssues(parsed.error, at));
      return;
    }
    const s = parsed.data;
    if (seen.has(s.id)) {
      issues.push({ path: `${at}.id`, message: `duplicate signature id "${s.id}"` });
      return;
    }
    seen.add(s.id);
    const compiled = compileOne(s, at, issues);
    if (compiled) signatures.push(compiled);
  });
  return { signatures, issues };
}

function compileOne(s: RawSignature, at: string, issues: Issue[]): Signature | null {
  const regexes: RegExp[] = [];
  const anchors: Anchor[] = [];
  const anyCi = s.patterns.some((p) => typeof p !== 'string' && p.ignore_case);
  let ok = true;
  s.patterns.forEach((p, j) => {
    const source = typeof p === 'string' ? p : p.regex;
    const ci = typeof p !== 'string' && p.ignore_case;
    try {
      regexes.push(new RegExp(source, ci ? 'i' : ''));
    } catch (err) {
      issues.push({
        path: `${at}.patterns[${j}]`,
        message: `invalid regular expression in signature "${s.id}": ${(err as Error).message}`,
      });
      ok = false;
      return;
    }
    if (s.keywords) return;
    const lits = extractAnchors(source);
    if (!lits) {
      issues.push({
        path: `${at}.patterns[${j}]`,
        message: `pattern of signature "${s.id}" has no literal text of 4+ bytes for the pre-filter`,
        fix: 'add `keywords`: literal strings one of which every matching line contains',
      });
      ok = false;
      return;
    }
    for (const text of lits) anchors.push({ text, ci });
  });
  for (const k of s.keywords ?? []) anchors.push({ text: k, ci: anyCi });
  if (!ok) return null;
  return {
    id: s.id,
    ...(s.category !== undefined && { category: s.category }),
    role: s.role,
    priority: s.priority,
    ...(s.phase !== undefined && { phase: s.phase }),
    ...(s.title !== undefined && { title: s.title }),
    wraps: s.wraps,
    generic: s.generic,
    transient: s.transient,
    stackFollows: s.stack_follows,
    ...(s.wraps_until !== undefined && { wrapsUntil: new RegExp(s.wraps_until) }),
    meaning: s.meaning,
    nextSteps: s.next_steps,
    upstream: s.upstream,
    ...(s.source !== undefined && { source: s.source }),
    regexes,
    anchors: anchors.map((a) => (a.ci ? { text: a.text.toLowerCase(), ci: true } : a)),
  };
}

function zodIssues(error: z.ZodError, at: string): Issue[] {
  return error.issues.map((iss) => ({
    path: iss.path.reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : `${p}.${String(k)}`), at),
    message: iss.message,
  }));
}

interface CatalogFile {
  raw: unknown[];
  rules: ExceptionRule[];
  overlaps: Map<Category, Set<Category>>;
  defaultPhases: Partial<Record<Category, Phase>>;
}

let builtinCache: { file: string; read: CatalogFile } | null = null;

const EMPTY_FILE = (): CatalogFile => ({ raw: [], rules: [], overlaps: new Map(), defaultPhases: {} });

function readCatalogFile(file: string): CatalogFile & { issues: Issue[] } {
  if (builtinCache?.file === file) return { ...builtinCache.read, issues: [] };
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch (err) {
    return { ...EMPTY_FILE(), issues: [{ path: file, message: (err as Error).message }] };
  }
  const parsed = catalogFileSchema.safeParse(doc);
  if (!parsed.success) return { ...EMPTY_FILE(), issues: zodIssues(parsed.error, 'catalog') };
  const overlaps = new Map<Category, Set<Category>>();
  for (const o of parsed.data.overlaps) {
    const set = overlaps.get(o.over) ?? new Set<Category>();
    set.add(o.wins);
    overlaps.set(o.over, set);
  }
  const read: CatalogFile = {
    raw: parsed.data.signatures,
    rules: parsed.data.exceptions.map(compileExceptionRule),
    overlaps,
    defaultPhases: parsed.data.default_phases,
  };
  builtinCache = { file, read };
  return { ...read, issues: [] };
}

/**
 * The built-in catalog merged with user signatures (a user entry with a built-in id replaces it). Throws a
 * ConfigError listing every problem when anything is invalid.
 */
export function loadCatalog(extraSignatures: readonly unknown[] = [], opts: LoadOptions = {}): Catalog {
  const file = opts.file ?? BUILTIN_CATALOG;
  const read = readCatalogFile(file);
  const builtin = compileSignatures(read.raw, 'signatures');
  const extra = compileSignatures(extraSignatures, opts.extraPath ?? 'signatures(config)');
  const issues = [
    ...read.issues.map((i) => ({ ...i, path: `${file}: ${i.path}` })),
    ...builtin.issues.map((i) => ({ ...i, path: `${file}: ${i.path}` })),
    ...extra.issues,
  ];
  if (issues.length > 0) throw new ConfigError('signature catalog', issues);
  return buildCatalog(mergeById(builtin.signatures, extra.signatures), read.rules, read.overlaps, read.defaultPhases);
}

function mergeById(base: Signature[], extra: Signature[]): Signature[] {
  const out = [...base];
  for (const s of extra) {
    const i = out.findIndex((b) => b.id === s.id);
    if (i >= 0) out[i] = s;
    else out.push(s);
  }
  return out;
}

export function buildCatalog(
  signatures: Signature[],
  exceptionRules: ExceptionRule[] = [],
  overlaps: ReadonlyMap<Category, ReadonlySet<Category>> = new Map(),
  defaultPhases: Partial<Record<Category, Phase>> = {},
): Catalog {
  // the readers' own literals: milestones and tracebacks (phase.ts), failure records (records.ts)
  const structure = [...STRUCTURE_ANCHORS, ...RECORD_ANCHORS];
  const anchors = minimiseAnchors([...signatures.flatMap((s) => s.anchors), ...structure]);
  // The fast scan reads bytes as latin1, so non-ASCII anchors are matched as their UTF-8 byte sequences. It is a
  // coarser, case-insensitive filter; every line it finds goes through the exact `gate` again.
  const folded = minimiseAnchors(anchors.map((a) => ({ text: a.text.toLowerCase(), ci: true })));
  const byteLiterals = folded.map((a) => Buffer.from(a.text, 'utf8').toString('latin1'));
  return {
    signatures,
    exceptionRules,
    overlaps,
    defaultPhases,
    byId: new Map(signatures.map((s) => [s.id, s])),
    gate: new AnchorIndex(signatures, structure),
    byteGate: new ByteGate(byteLiterals),
  };
}
