// The crash-log corpus (corpus/cases/*.yaml + *.log): real excerpts from public issues with their class, phase and
// root line. It is read twice: by `npm run eval` (scripts/eval.ts) to measure the classifier, and by the
// known-upstream index (similar.ts) that shows a crash's nearest public reports. The dev/test split is a pure
// function of the source URL, fixed before any case was collected (corpus/README.md).

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { CATEGORIES, type Category, PHASES, type Phase } from '../logs/classify/types.ts';
import { PACKAGE_ROOT } from '../package-root.ts';

export const CORPUS_DIR = join(PACKAGE_ROOT, 'corpus', 'cases');

export type Split = 'dev' | 'test';

const caseSchema = z
  .object({
    source: z.url(),
    title: z.string().min(1),
    state: z.string().min(1),
    project: z.string().min(1),
    kind: z.enum(['crash', 'healthy']),
    class: z.enum(CATEGORIES),
    phase: z.enum(PHASES),
    root: z.string().min(1).optional(),
    notes: z.string().optional(),
  })
  .superRefine((c, ctx) => {
    if (c.kind === 'crash' && (c.class === 'none' || c.root === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'a crash case needs a crash class and its root line' });
    }
    if (c.kind === 'healthy' && c.class !== 'none') {
      ctx.addIssue({ code: 'custom', path: ['class'], message: 'a healthy case has class none' });
    }
  });

/** A case as its `.yaml` describes it, without its log. */
export interface CaseMeta {
  id: string;
  source: string;
  title: string;
  state: string;
  project: string;
  kind: 'crash' | 'healthy';
  category: Category;
  phase: Phase;
  root: string | null;
  split: Split;
}

export interface CorpusCase extends CaseMeta {
  log: string;
}

/** The fixed split: test when the first byte of SHA-256(source URL) mod 3 is 0 (about a third of the sources). */
export function splitOf(source: string): Split {
  const first = createHash('sha256').update(source).digest()[0] ?? 0;
  return first % 3 === 0 ? 'test' : 'dev';
}

export interface CorpusLoad<C extends CaseMeta = CorpusCase> {
  cases: C[];
  /** Cases that could not be read, with why (a broken case never hides the others). */
  problems: string[];
}

/** Every case with its log (what `npm run eval` and the corpus tests read). */
export function loadCorpus(dir: string = CORPUS_DIR): CorpusLoad {
  const { cases, problems } = loadCaseMeta(dir);
  const withLogs: CorpusCase[] = [];
  for (const c of cases) {
    try {
      withLogs.push({ ...c, log: readFileSync(join(dir, `${c.id}.log`), 'utf8') });
    } catch (err) {
      problems.push(`${c.id}.yaml: ${(err as Error).message}`);
    }
  }
  return { cases: withLogs, problems };
}

/**
 * Every case's `.yaml` only: what the known-upstream index needs. The bot builds that index at start; reading the
 * corpus's logs too (15 MB) would grow its resident memory by tens of MB that V8 keeps after the strings are gone.
 */
export function loadCaseMeta(dir: string = CORPUS_DIR): CorpusLoad<CaseMeta> {
  const cases: CaseMeta[] = [];
  const problems: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.yaml'));
  } catch {
    return { cases, problems: [`${dir}: not readable`] };
  }
  for (const name of names.sort()) {
    const id = name.slice(0, -'.yaml'.length);
    try {
      const meta = caseSchema.safeParse(parseYaml(readFileSync(join(dir, name), 'utf8')));
      if (!meta.success) {
        problems.push(
          `${name}: ${meta.error.issues.map((i) => `${i.path.join('.') || '(case)'}: ${i.message}`).join('; ')}`,
        );
        continue;
      }
      const m = meta.data;
      cases.push({
        id,
        source: m.source,
        title: m.title,
        state: m.state,
        project: m.project,
        kind: m.kind,
        category: m.class,
        phase: m.phase,
        root: m.root ?? null,
        split: splitOf(m.source),
      });
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message}`);
    }
  }
  return { cases, problems };
}
