// The findings index: knowledge bases loaded once, kept in memory, re-read when their file changes, searched by
// hand (`glm findings QUERY`) or with a crash classification. A source that cannot be read does not stop the others:
// its last good copy keeps answering and `status()` says what went wrong.
import { type Clock, systemClock } from '../clock.ts';
import { singleFlight } from '../single-flight.ts';
import { hasTitle, type IndexedSection, idfs, indexSection, type QueryTerm, rank } from './bm25.ts';
import { bestWindow, type Excerpt, MAX_EXCERPT_LINES, makeExcerpt } from './excerpt.ts';
import { parseFrontMatter, parseMarkdown, type Section } from './markdown.ts';
import { type DiagnosisLike, diagnosisQuery, textQuery } from './query.ts';
import { type FindingsSource, readerFor, type SourceReader } from './sources.ts';

export interface FindingsOptions {
  clock?: Clock;
  /** Check a source for changes at most this often (each check is a stat, over SSH for remote sources). */
  checkIntervalMs?: number;
  /** Relative local paths are resolved against this. Default: the working directory. */
  baseDir?: string;
  execTimeoutMs?: number;
  /** Larger files are refused: a knowledge base is prose, not a log. */
  maxBytes?: number;
  maxExcerptLines?: number;
  /** Results scoring under this fraction of the best one are left out: a weak third match is noise in an alert. */
  minRelativeScore?: number;
}

export interface SourceStatus {
  name: string;
  path: string;
  host?: string;
  sections: number;
  /** Clock time of the last successful (re)load. */
  loadedAt?: number;
  /** The last failure to check or read the source, cleared by the next success. */
  error?: string;
}

export interface FindingsIndex {
  search(query: string, limit?: number): Promise<Excerpt[]>;
  excerptsFor(d: DiagnosisLike, flags?: Record<string, string>, limit?: number): Promise<Excerpt[]>;
  /** Check every source now (`force`: even if checked recently) and re-read the changed ones. */
  refresh(force?: boolean): Promise<void>;
  status(): SourceStatus[];
  /** The parsed sections, in source then file order. */
  sections(): Section[];
}

interface SourceState {
  source: FindingsSource;
  reader: SourceReader;
  stamp?: string;
  docs: IndexedSection[];
  url?: string;
  checkedAt: number;
  loadedAt?: number;
  error?: string;
}

export function createFindingsIndex(sources: readonly FindingsSource[], opts: FindingsOptions = {}): FindingsIndex {
  const clock = opts.clock ?? systemClock;
  const interval = opts.checkIntervalMs ?? 10_000;
  const maxLines = opts.maxExcerptLines ?? MAX_EXCERPT_LINES;
  const minRelative = opts.minRelativeScore ?? 0.2;
  const readerOpts = {
    baseDir: opts.baseDir ?? process.cwd(),
    execTimeoutMs: opts.execTimeoutMs ?? 20_000,
    maxBytes: opts.maxBytes ?? 4 * 1024 * 1024,
  };
  const states: SourceState[] = sources.map((source) => ({
    source,
    reader: readerFor(source, readerOpts),
    docs: [],
    checkedAt: Number.NEGATIVE_INFINITY,
  }));

  async function check(i: number, force: boolean): Promise<void> {
    const st = states[i]!;
    if (!force && clock.now() - st.checkedAt < interval) return;
    st.checkedAt = clock.now();
    try {
      const stamp = await st.reader.stamp();
      if (stamp !== st.stamp || st.error !== undefined) {
        const text = await st.reader.read();
        load(st, i, text);
        st.stamp = stamp;
        st.loadedAt = clock.now();
      }
      st.error = undefined;
    } catch (e) {
      st.error = e instanceof Error ? e.message : String(e);
    }
  }

  function load(st: SourceState, order: number, text: string): void {
    const sections = parseMarkdown(text, st.source.path);
    const titled = hasTitle(sections);
    st.docs = sections.map((s, k) => indexSection(s, order, k, titled));
    const fm = parseFrontMatter(text).data.url;
    st.url = st.source.url ?? (typeof fm === 'string' ? fm : undefined);
  }

  // Concurrent searches share one check per source instead of each starting its own stat and read.
  const checks = singleFlight<void>();
  const ensure = (i: number, force: boolean): Promise<void> => checks(String(i), () => check(i, force));

  async function run(query: QueryTerm[], limit: number): Promise<Excerpt[]> {
    await Promise.all(states.map((_, i) => ensure(i, false)));
    const docs = states.flatMap((s) => s.docs);
    const ranked = rank(docs, query);
    const top = ranked[0]?.score ?? 0;
    const picked = ranked.filter((r) => r.score >= top * minRelative).slice(0, Math.max(0, limit));
    const idf = idfs(docs, query);
    return picked.map((r) => {
      const st = states[r.doc.sourceOrder]!;
      const src = { name: st.source.name, ...(st.url ? { url: st.url } : {}) };
      return makeExcerpt(src, r.doc, bestWindow(r.doc, query, idf, maxLines), r.score);
    });
  }

  return {
    search: (query, limit = 3) => run(textQuery(query), limit),
    excerptsFor: (d, flags = {}, limit = 3) => run(diagnosisQuery(d, flags), limit),
    async refresh(force = true) {
      // A check already running may have started before the file changed: wait for it, then check again.
      await Promise.all(states.map((_, i) => checks.pending(String(i))));
      await Promise.all(states.map((_, i) => ensure(i, force)));
    },
    status: () =>
      states.map((s) => ({
        name: s.source.name,
        path: s.source.path,
        ...(s.source.host ? { host: s.source.host.name } : {}),
        sections: s.docs.length,
        ...(s.loadedAt !== undefined ? { loadedAt: s.loadedAt } : {}),
        ...(s.error !== undefined ? { error: s.error } : {}),
      })),
    sections: () => states.flatMap((s) => s.docs.map((d) => d.section)),
  };
}
