// Tokens for matching log text against prose. Identifiers are split into their parts (`flashmla_sparse` ->
// flashmla, sparse; `--cuda-graph-max-bs` -> cuda, graph, max, bs) with consecutive positions, so a query for the
// identifier becomes a phrase that also matches the words written out in a note, and the other way round.

/** Words too common to say anything about which finding matches. */
const STOPWORDS = new Set(
  (
    'a an the and or of to in on at for with by from as is are was were be been being it its this that these those ' +
    'into onto than then there their they them we our us you your i he she his her not no nor but if so do does did ' +
    'done has have had can could would should will shall may might must also only just very more most less same ' +
    'such what which who whom when where why how all any each both few other some own too up down out over under ' +
    'again once here s t'
  ).split(' '),
);

/** Words every traceback and log line carries; dropped from evidence, never from the knowledge base. */
const LOG_NOISE = new Set(
  (
    'traceback recent call last file line in self return raise raised exception error warning info debug py ' +
    'args kwargs lib site packages python3 python usr local home opt venv env module function main run ' +
    'scheduler hit tp dp ep pp rank worker process pid'
  ).split(' '),
);

export interface Token {
  term: string;
  pos: number;
}

const WORD = /[a-z0-9]+(?:[._-][a-z0-9]+)*/g;

/** Lowercased, stop words out, identifier parts split; `pos` counts kept tokens, so phrases skip stop words. */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let pos = 0;
  for (const m of text.toLowerCase().matchAll(WORD)) {
    for (const part of m[0].split(/[._-]+/)) {
      if (part === '' || STOPWORDS.has(part)) continue;
      out.push({ term: stem(part), pos: pos++ });
    }
  }
  return out;
}

export function terms(text: string): string[] {
  return tokenize(text).map((t) => t.term);
}

/** Plural endings only: enough to make `kernels`/`kernel` and `crashes`/`crash` meet, without a real stemmer. */
export function stem(w: string): string {
  if (w.length <= 3 || /[0-9]/.test(w)) return w;
  if (/(?:sh|ch|x|ss)es$/.test(w)) return w.slice(0, -2);
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) return w.slice(0, -1);
  return w;
}

/**
 * The distinctive words of a log line: timestamps and rank prefixes (`[2026-02-19 00:17:22 TP2]`), paths, hex
 * addresses, `file:line` references and bare numbers carry no meaning across runs, and traceback boilerplate
 * matches every note about any crash.
 */
export function evidenceTerms(line: string): string[][] {
  const cleaned = line
    .replace(/^\s*\[[^\]]*\]\s*/, ' ')
    .split(/\s+/)
    .filter((chunk) => !isPath(chunk))
    .join(' ')
    .replace(/\b(?:TP|DP|PP|EP|ATTN_CP|MOE_DP)\d+\b/g, ' ')
    .replace(/\b0x[0-9a-f]+\b/gi, ' ')
    .replace(/\b\d+(?:[.:]\d+)*\b/g, ' ');
  // One phrase per identifier or plain word, so `nsa_kv_cache_store_fp8` stays a phrase.
  const out: string[][] = [];
  for (const m of cleaned.toLowerCase().matchAll(WORD)) {
    const parts = m[0]
      .split(/[._-]+/)
      .filter((p) => p !== '' && !/^\d+$/.test(p) && !STOPWORDS.has(p))
      .map(stem);
    // `self.nsa_kv_cache_store_fp8` -> nsa kv cache store fp8: boilerplate only at the edges is dropped, so the
    // rest is still a contiguous phrase of the note's text.
    while (parts.length > 0 && LOG_NOISE.has(parts[0]!)) parts.shift();
    while (parts.length > 0 && LOG_NOISE.has(parts[parts.length - 1]!)) parts.pop();
    if (parts.length === 1 && parts[0]!.length < 2) continue;
    if (parts.length > 0) out.push(parts);
  }
  return out;
}

/** `/usr/lib/x.py`, `~/log`, `./a/b`, `python/sglang/srt/x.py:12`, `File "a/b.py",`: paths, not words. */
function isPath(chunk: string): boolean {
  const c = chunk.replace(/^["'`(]+|["'`),:;]+$/g, '');
  if (!c.includes('/')) return false;
  return (
    /^(?:~|\.{1,2})?\//.test(c) || (c.match(/\//g) ?? []).length >= 2 || /\.(?:py|cu|cuh|h|hpp|cc|cpp|so)\b/.test(c)
  );
}

/** The words of a typed query, one group per identifier or word (a group of several parts is a phrase). */
export function queryGroups(text: string): string[][] {
  const out: string[][] = [];
  for (const m of text.toLowerCase().matchAll(WORD)) {
    const parts = m[0]
      .split(/[._-]+/)
      .filter((p) => p !== '' && !STOPWORDS.has(p))
      .map(stem);
    if (parts.length > 0) out.push(parts);
  }
  return out;
}
