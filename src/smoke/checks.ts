// Is an answer right, and does it look like a working model wrote it? A broken build or kernel rarely fails
// cleanly: it answers with nothing, loops on one phrase, or emits bytes that are not text.
import type { SmokePrompt } from '../config/smoke.ts';

export interface Judgement {
  ok: boolean;
  /** Why not, in words for the report: `empty answer`, `degenerate: ...`, `expected ...`. */
  problems: string[];
}

/** A run of one short piece repeated back to back that covers much of the answer. */
export function repetition(text: string): string | null {
  const t = text.trim();
  if (t.length < 24) return null;
  const same = /(\S)\1{19,}/u.exec(t);
  if (same) return `'${same[1]}' repeated ${same[0].length} times`;
  const loop = /([\s\S]{2,40}?)\1{3,}/u;
  let best: { unit: string; len: number } | null = null;
  for (let i = 0; i < t.length; ) {
    const m = loop.exec(t.slice(i));
    if (!m) break;
    if (!best || m[0].length > best.len) best = { unit: m[1]!, len: m[0].length };
    i += m.index + Math.max(1, m[0].length);
  }
  if (best && best.len >= 24 && best.len >= 0.4 * t.length && best.unit.trim().length > 0)
    return `'${best.unit.trim().slice(0, 20)}' repeated over ${Math.round((100 * best.len) / t.length)}% of the answer`;
  const words = t.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length >= 30 && new Set(words).size / words.length < 0.2)
    return `only ${new Set(words).size} distinct words in ${words.length}`;
  return null;
}

/** Replacement characters, control bytes, or too little that reads as text. */
export function garbage(text: string): string | null {
  const t = text.trim();
  if (t.length === 0) return null;
  const chars = [...t];
  const bad = chars.filter(
    (c) => c === '\uFFFD' || (/[\p{Cc}\p{Co}\p{Cs}]/u.test(c) && c !== '\n' && c !== '\t'),
  ).length;
  if (bad / chars.length > 0.05) return `${bad} of ${chars.length} characters are not text`;
  const readable = chars.filter((c) => /[\p{L}\p{N}\s.,;:!?'"()\-+=*/%]/u.test(c)).length;
  if (chars.length >= 8 && readable / chars.length < 0.6)
    return `only ${Math.round((100 * readable) / chars.length)}% of the characters are letters, digits or punctuation`;
  return null;
}

export function judge(text: string, expect: SmokePrompt['expect']): Judgement {
  const problems: string[] = [];
  if (text.trim().length === 0) return { ok: false, problems: ['empty answer'] };
  const rep = repetition(text);
  if (rep) problems.push(`degenerate: ${rep}`);
  const junk = garbage(text);
  if (junk) problems.push(`garbage: ${junk}`);
  const lower = text.toLowerCase();
  const wanted =
    expect.contains === undefined ? [] : Array.isArray(expect.contains) ? expect.contains : [expect.contains];
  for (const w of wanted) if (!lower.includes(w.toLowerCase())) problems.push(`expected it to contain '${w}'`);
  if (expect.regex !== undefined && !new RegExp(expect.regex, 'i').test(text))
    problems.push(`expected it to match /${expect.regex}/`);
  return { ok: problems.length === 0, problems };
}
