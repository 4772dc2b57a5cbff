// The few lines of a matching section worth quoting in a crash alert: the window where the query's words are
// densest, never the whole of a long section, with exact line numbers and a link when the file is on the web.
import { countPhrase, type IndexedSection, positions, type QueryTerm } from './bm25.ts';

export interface Excerpt {
  /** The knowledge base's name (from config). */
  source: string;
  file: string;
  headingPath: string[];
  /** 1-based, inclusive: the lines shown, as lines of the file. */
  startLine: number;
  endLine: number;
  lines: string[];
  score: number;
  url?: string;
}

export const MAX_EXCERPT_LINES = 8;

/**
 * The best window of at most `maxLines` lines: the most query weight (terms weighted by rarity; a term seen again
 * in the window adds a little), then the window that opens one line before its first match (context, not filler),
 * then the earliest; trimmed of blank lines at its ends.
 */
export function bestWindow(
  doc: IndexedSection,
  query: readonly QueryTerm[],
  idf: readonly number[],
  maxLines = MAX_EXCERPT_LINES,
): { start: number; end: number } {
  const s = doc.section;
  const lines = s.text.split('\n');
  const size = Math.max(1, Math.min(maxLines, lines.length));
  const words = new Set(query.flatMap((t) => t.tokens));
  const hit = lines.map((l) => [...positions(l).keys()].some((w) => words.has(w)));
  let best = { start: 0, score: -1, lead: Number.POSITIVE_INFINITY };
  for (let i = 0; i + size <= lines.length; i++) {
    const map = positions(lines.slice(i, i + size).join('\n'));
    let score = 0;
    query.forEach((t, k) => {
      const tf = countPhrase(map, t.tokens);
      if (tf > 0) score += t.weight * (idf[k] ?? 0) * ((2 * tf) / (tf + 1));
    });
    const first = hit.slice(i, i + size).indexOf(true);
    const lead = first < 0 ? size : Math.abs(first - 1);
    if (score > best.score + 1e-9 || (Math.abs(score - best.score) <= 1e-9 && lead < best.lead)) {
      best = { start: i, score, lead };
    }
  }
  let a = best.start;
  let b = best.start + size - 1;
  while (a < b && lines[a]!.trim() === '') a++;
  while (b > a && lines[b]!.trim() === '') b--;
  return { start: s.startLine + a, end: s.startLine + b };
}

export function makeExcerpt(
  source: { name: string; url?: string },
  doc: IndexedSection,
  window: { start: number; end: number },
  score: number,
): Excerpt {
  const s = doc.section;
  const all = s.text.split('\n');
  const ex: Excerpt = {
    source: source.name,
    file: s.file,
    headingPath: [...doc.path],
    startLine: window.start,
    endLine: window.end,
    lines: all.slice(window.start - s.startLine, window.end - s.startLine + 1),
    score: Math.round(score * 1000) / 1000,
  };
  const url = source.url ? lineUrl(source.url, window.start, window.end) : undefined;
  if (url) ex.url = url;
  return ex;
}

/**
 * GitHub's blob-URL convention for a line range (`...#L12-L19`; one line is `#L12`). Any fragment already on the
 * base is replaced; anything that is not http(s) gets no link rather than a broken one.
 */
export function lineUrl(base: string, start: number, end: number): string | undefined {
  let u: URL;
  try {
    u = new URL(base);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  // GitHub shows Markdown rendered unless asked for the plain view, and line anchors only work on the plain view.
  const githubMarkdown = /(^|\.)github\.com$/.test(u.hostname) && /\/blob\/.*\.(?:md|markdown)$/i.test(u.pathname);
  if (githubMarkdown && !u.searchParams.has('plain')) {
    u.searchParams.set('plain', '1');
  }
  u.hash = start === end ? `L${start}` : `L${start}-L${end}`;
  return u.toString();
}
