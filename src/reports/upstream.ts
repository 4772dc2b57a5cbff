// Duplicates first: before a draft, the upstream reports that may already describe this crash. Two sources: the
// curated `upstream:` lists in the signature catalog (matched by crash class and GPU architecture), and, when a token
// is configured, a search of the upstream tracker.
import { knownUpstream } from '../corpus/similar.ts';
import type { Catalog } from '../logs/classify/index.ts';
import type { IssueSearch } from './github.ts';

export interface UpstreamRef {
  url: string;
  title: string;
  source: 'catalog' | 'github' | 'corpus';
  /** Why it is listed: `nan_in_sampling on sm120`, or the search query. */
  why: string;
  /** The crash class a catalog entry was listed for. */
  category?: string;
  state?: string;
}

export interface CrashKey {
  category: string;
  /** The catalog signature behind the classification (the middle part of its dedup key). */
  signatureId?: string;
  /** The root line, to find public reports of the same crash. */
  rootLine?: string;
}

export function crashKeyOf(classification: unknown): CrashKey | undefined {
  const c = classification as {
    category?: string;
    dedupKey?: string;
    evidence?: Array<{ text?: string }>;
  } | null;
  if (!c?.category || c.category === 'none') return undefined;
  const id = c.dedupKey?.split('/')[1];
  const root = c.evidence?.[0]?.text;
  return { category: c.category, ...(id ? { signatureId: id } : {}), ...(root ? { rootLine: root } : {}) };
}

/**
 * Catalog entries for these crashes, the matched signature's own first, then the rest of its class. An entry tagged
 * with an architecture is kept only for that architecture (all are kept when the host's is unknown).
 */
export function knownIssues(catalog: Catalog, crashes: readonly CrashKey[], arch: string | undefined): UpstreamRef[] {
  const out: UpstreamRef[] = [];
  const seen = new Set<string>();
  for (const crash of crashes) {
    const own = crash.signatureId ? catalog.byId.get(crash.signatureId) : undefined;
    const rest = catalog.signatures.filter((s) => s !== own && s.role === 'root' && s.category === crash.category);
    for (const sig of own ? [own, ...rest] : rest) {
      for (const u of sig.upstream) {
        if (seen.has(u.url)) continue;
        if (u.arch && arch && u.arch.toLowerCase() !== arch.toLowerCase()) continue;
        seen.add(u.url);
        out.push({
          url: u.url,
          title: u.title,
          source: 'catalog',
          why: `${crash.category}${u.arch ? ` on ${u.arch}` : ''}`,
          category: crash.category,
        });
      }
    }
    // Public reports of the same crash from the shipped corpus (nearest root lines).
    if (!crash.rootLine) continue;
    for (const k of knownUpstream().similar(crash.rootLine)) {
      if (seen.has(k.url)) continue;
      seen.add(k.url);
      out.push({
        url: k.url,
        title: k.title,
        source: 'corpus',
        why: `a known ${k.category} report with a similar root line`,
        category: k.category,
        state: k.state,
      });
    }
  }
  return out;
}

/** `GLM-5-NVFP4` -> `GLM-5`: issues name the model family more often than one checkpoint's quantization. */
export function modelFamily(model: string): string {
  let m = model;
  for (let i = 0; i < 3; i++) m = m.replace(/[-_](NVFP4|FP8|FP4|INT4|INT8|AWQ|GPTQ|BF16|Instruct|Chat|Base)$/i, '');
  return m;
}

/** Queries for the tracker: the root message's literal text, and the model family with the architecture. */
export function searchQueries(
  catalog: Catalog,
  crash: CrashKey,
  model: string | undefined,
  arch: string | undefined,
): string[] {
  const queries: string[] = [];
  const sig = crash.signatureId ? catalog.byId.get(crash.signatureId) : undefined;
  // The longest literal piece of the signature's patterns is what people paste into issue titles and bodies.
  const phrase = sig?.anchors
    .map((a) => a.text.replace(/[^A-Za-z0-9_ .:-]/g, ' ').trim())
    .filter((t) => t.length >= 10)
    .sort((a, b) => b.length - a.length)[0];
  if (phrase) queries.push(`"${phrase}"`);
  const family = model ? modelFamily(model) : undefined;
  if (family && arch) queries.push(`${family} ${arch}`);
  else if (family) queries.push(`${family} ${crash.category.replace(/_/g, ' ')}`);
  return queries;
}

export interface DuplicateCheck {
  known: UpstreamRef[];
  found: UpstreamRef[];
  /** True when the tracker was searched successfully. */
  searched: boolean;
  /** Why the tracker was not searched, or what went wrong. */
  searchNote?: string;
}

export async function findDuplicates(opts: {
  catalog: Catalog;
  crashes: CrashKey[];
  arch?: string;
  model?: string;
  search?: IssueSearch;
}): Promise<DuplicateCheck> {
  const known = knownIssues(opts.catalog, opts.crashes, opts.arch);
  if (!opts.search) {
    return { known, found: [], searched: false, searchNote: 'no GitHub token configured (github.token_env)' };
  }
  const primary = opts.crashes[0];
  if (!primary) return { known, found: [], searched: false, searchNote: 'no crash to search for' };
  const seen = new Set(known.map((k) => k.url));
  const found: UpstreamRef[] = [];
  try {
    for (const q of searchQueries(opts.catalog, primary, opts.model, opts.arch)) {
      for (const hit of await opts.search.search(q, 5)) {
        if (seen.has(hit.url)) continue;
        seen.add(hit.url);
        found.push({ url: hit.url, title: hit.title, source: 'github', why: `search: ${q}`, state: hit.state });
      }
    }
  } catch (e) {
    return { known, found, searched: false, searchNote: (e as Error).message };
  }
  return { known, found, searched: true };
}
