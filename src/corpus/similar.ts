// Part src/corpus: owns the corpus of known upstream crashes, its evaluation and similarity search.
// May import: logs, package-root.ts.
//
// Known upstream crashes beside the team's findings: the corpus (real crash excerpts from public SGLang/vLLM/...
// issues, each with its source issue) searched by the crash's own root line, so an alert can say "looks like
// sgl-project/sglang#NNNN: title (closed)". Only the labelled root line, the exception type and the issue title are
// indexed: they are what two reports of one bug share; timestamps, paths and numbers are dropped (evidenceTerms).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { displayText } from '../logs/classify/lineinfo.ts';
import { CATEGORIES } from '../logs/classify/types.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { type CaseMeta, loadCaseMeta } from './cases.ts';

/**
 * The index's entries, written from `corpus/cases/*.yaml` by `npm run corpus:sources` (a test checks it is current).
 * The bot reads this one JSON file at start instead of the corpus's YAML files (about 1,900): parsing those grew its
 * resident memory by about 50 MB that V8 kept after the garbage was gone (`npm run bench`, peak RSS following a log).
 */
export const KNOWN_UPSTREAM_PATH = join(PACKAGE_ROOT, 'corpus', 'known-upstream.json');

const entrySchema = z.object({
  source: z.string(),
  title: z.string(),
  state: z.string(),
  category: z.enum(CATEGORIES),
  root: z.string(),
});
/** What the index keeps of a crash case. */
export type KnownEntry = z.infer<typeof entrySchema>;

/** The crash cases with a root line, as the index reads them (sorted by case, as the corpus lists them). */
export function knownEntries(cases: readonly CaseMeta[]): KnownEntry[] {
  return cases.flatMap((c) =>
    c.kind === 'crash' && c.root !== null
      ? [{ source: c.source, title: c.title, state: c.state, category: c.category, root: c.root }]
      : [],
  );
}

export interface KnownReport {
  url: string;
  /** `sgl-project/sglang#1234`, or the URL when it is not a GitHub issue or PR. */
  ref: string;
  title: string;
  state: string;
  category: string;
  score: number;
}

interface Doc {
  c: KnownEntry;
  tf: Map<string, number>;
  length: number;
}

export interface KnownIndex {
  /** The best reports for a root line (one per source issue), best first. */
  similar(rootLine: string, opts?: { limit?: number; exclude?: string }): KnownReport[];
  size: number;
}

const K1 = 1.2;
const B = 0.75;
/** Below this a match shares only a word or two with the root line: not worth a person's click. */
const MIN_SCORE = 6;
const TITLE_WEIGHT = 0.3;

// Only the emptiest words go: `out` and `not` carry meaning in crash messages (`out of memory`, `not supported`),
// which a prose stop-word list would drop.
const STOP = new Set('a an the of to in on at is are be for and or with by from as it this that was'.split(' '));

/** Lowercased words of a line, with paths, addresses, numbers and log prefixes left out. */
function words_(text: string): string[] {
  // The exception's type says less than its message: `AcceleratorError: CUDA error: out of memory` is an OOM first.
  const cleaned = displayText(text, 2000)
    .replace(/^(?:[A-Za-z_][\w.]*(?:Error|Exception)):\s*/, '')
    .replace(/^\s*\[[^\]]*\]\s*/, ' ')
    .split(/\s+/)
    .filter((chunk) => !/[\\/]/.test(chunk))
    .join(' ')
    .replace(/\b0x[0-9a-f]+\b/gi, ' ');
  return (cleaned.toLowerCase().match(/[a-z][a-z0-9]*/g) ?? []).filter((w) => !STOP.has(w) && w.length > 1);
}

/**
 * Words and word pairs: `out of memory` and `illegal memory access` share `memory`, not `out memory` or `illegal
 * memory`, so the pairs carry the meaning. A title's words count for less than the root line's (weight).
 */
function bag(text: string, weight = 1, tf = new Map<string, number>()): Map<string, number> {
  const words = words_(text);
  words.forEach((t, i) => {
    tf.set(t, (tf.get(t) ?? 0) + weight);
    const next = words[i + 1];
    if (next !== undefined) tf.set(`${t} ${next}`, (tf.get(`${t} ${next}`) ?? 0) + weight);
  });
  return tf;
}

export function refOf(url: string): string {
  const m = /^https:\/\/github\.com\/([^/]+\/[^/]+)\/(?:issues|pull)\/(\d+)/.exec(url);
  return m ? `${m[1]}#${m[2]}` : url;
}

export function buildKnownIndex(entries: readonly KnownEntry[]): KnownIndex {
  const docs: Doc[] = entries.map((c) => {
    const tf = bag(c.title, TITLE_WEIGHT, bag(c.root));
    let length = 0;
    for (const n of tf.values()) length += n;
    return { c, tf, length };
  });
  const df = new Map<string, number>();
  for (const d of docs) for (const t of d.tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const avg = docs.reduce((s, d) => s + d.length, 0) / Math.max(1, docs.length);
  const idf = (t: string): number => {
    const n = df.get(t) ?? 0;
    return Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
  };
  return {
    size: docs.length,
    similar(rootLine, opts = {}) {
      const q = [...bag(rootLine).keys()];
      const best = new Map<string, KnownReport>();
      for (const d of docs) {
        if (d.c.source === opts.exclude) continue;
        let score = 0;
        for (const t of q) {
          const f = d.tf.get(t);
          if (!f) continue;
          score += (idf(t) * f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.length) / avg));
        }
        if (score < MIN_SCORE) continue;
        const prev = best.get(d.c.source);
        if (!prev || score > prev.score) {
          best.set(d.c.source, {
            url: d.c.source,
            ref: refOf(d.c.source),
            title: d.c.title,
            state: d.c.state,
            category: d.c.category,
            score: Math.round(score * 100) / 100,
          });
        }
      }
      return [...best.values()]
        .sort((a, b) => b.score - a.score || a.url.localeCompare(b.url))
        .slice(0, opts.limit ?? 3);
    },
  };
}

let shipped: KnownIndex | null = null;

/** The shipped entries; when the file is missing or unreadable (a checkout that never ran the script), the YAML. */
function shippedEntries(): KnownEntry[] {
  try {
    return z.array(entrySchema).parse(JSON.parse(readFileSync(KNOWN_UPSTREAM_PATH, 'utf8')));
  } catch {
    return knownEntries(loadCaseMeta().cases);
  }
}

/** The index over the shipped corpus, built on first use. */
export function knownUpstream(): KnownIndex {
  shipped ??= buildKnownIndex(shippedEntries());
  return shipped;
}
