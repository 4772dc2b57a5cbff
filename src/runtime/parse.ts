// Command text -> tokens (src/runtime/args.ts takes them on to the command's zod schema). Quotes group words as a
// POSIX shell's do, but nothing is expanded (no $, no globs): the text is data, never shell. Inside '...' every character is
// literal (so a trailing backslash is just a backslash); inside "..." \" and \\ are escapes; unquoted, a backslash
// before a quote, a space or a backslash makes it literal (`don\'t`), and any other backslash is kept.

import { UserError } from '../errors.ts';

/**
 * Limits on what anyone may type: far above any real command, far below what would cost memory or fail on the host
 * (an argument over 128 KiB is E2BIG there). Checked before anything else reads the text.
 */
export const MAX_COMMAND_CHARS = 16 * 1024;
export const MAX_VALUE_CHARS = 4 * 1024;

function checkCommandLength(length: number): void {
  if (length > MAX_COMMAND_CHARS) {
    throw new UserError(
      `the command is ${length} characters long; the limit is ${MAX_COMMAND_CHARS}`,
      'shorten it: put long settings in a profile file (profiles/) and launch that',
    );
  }
}

function checkValues(tokens: readonly string[]): void {
  const long = tokens.find((t) => t.length > MAX_VALUE_CHARS);
  if (long !== undefined) {
    throw new UserError(
      `a value of ${long.length} characters ('${long.slice(0, 24)}...'); the limit is ${MAX_VALUE_CHARS} per value`,
      'shorten it: put long settings in a profile file (profiles/) and launch that',
    );
  }
}

/** The same limits for words already split by a shell (`npx glm COMMAND ...`), which skip the tokenizer. */
export function checkArgv(argv: readonly string[]): string[] {
  checkCommandLength(argv.reduce((n, a) => n + a.length + 1, 0));
  checkValues(argv);
  return [...argv];
}

export function tokenize(text: string): string[] {
  checkCommandLength(text.length);
  const out: string[] = [];
  let cur = '';
  let quote: '"' | "'" | null = null;
  let has = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const next = text[i + 1];
    if (quote === "'") {
      if (c === "'") quote = null;
      else cur += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && (next === '"' || next === '\\')) cur += text[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      has = true;
    } else if (c === '\\' && next !== undefined && /["'\\\s]/.test(next)) {
      cur += text[++i];
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += c;
    }
  }
  if (quote)
    throw new UserError(
      `unbalanced quote in the command: a ${quote} is never closed`,
      quote === "'"
        ? `close the ' quote; for a ' inside a word, quote the word with " (e.g. "don't") or write \\'`
        : `close the " quote; for a " inside a word, write \\"`,
    );
  if (has || cur) out.push(cur);
  checkValues(out);
  return out;
}
