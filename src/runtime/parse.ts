// Command text -> tokens -> an argument object for the command's zod schema. Quotes group words as a POSIX shell's
// do, but nothing is expanded (no $, no globs): the text is data, never shell. Inside '...' every character is
// literal (so a trailing backslash is just a backslash); inside "..." \" and \\ are escapes; unquoted, a backslash
// before a quote, a space or a backslash makes it literal (`don\'t`), and any other backslash is kept.

import { suggest } from '../config/suggest.ts';
import { UserError } from '../errors.ts';
import type { CommandDef } from './define.ts';

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

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export function parseArgs(def: CommandDef, tokens: string[]): Record<string, unknown> {
  const keys = Object.keys(def.args.shape);
  const flags = keys.filter((k) => !def.positionals.includes(k)).map(kebab);
  const out: Record<string, unknown> = {};
  const positionals: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === '--') {
      positionals.push(...tokens.slice(i + 1));
      break;
    }
    if (t.startsWith('--') && t.length > 2) {
      const [name, inline] = t.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const key = camel(name);
      if (!keys.includes(key) || def.positionals.includes(key)) {
        const s = suggest(name, flags);
        throw new UserError(
          `${def.name}: unknown option --${name}`,
          s ? `did you mean --${s}? usage: ${def.usage}` : `usage: ${def.usage}`,
        );
      }
      if (def.switches.includes(key)) {
        if (inline !== undefined) throw new UserError(`${def.name}: --${name} takes no value`, `usage: ${def.usage}`);
        out[key] = true;
      } else {
        const value = inline ?? tokens[++i];
        if (value === undefined) throw new UserError(`${def.name}: --${name} needs a value`, `usage: ${def.usage}`);
        out[key] = value;
      }
    } else {
      positionals.push(t);
    }
  }
  const names = def.positionals;
  const variadic =
    names.length > 0 &&
    names[names.length - 1]!.endsWith('s') &&
    def.args.shape[names[names.length - 1]!]?.def?.type === 'array';
  positionals.forEach((p, i) => {
    if (i < names.length - (variadic ? 1 : 0)) out[names[i]!] = p;
    else if (variadic) {
      const key = names[names.length - 1]!;
      const list = (out[key] as string[] | undefined) ?? [];
      list.push(p);
      out[key] = list;
    } else throw new UserError(`${def.name}: unexpected argument '${p}'`, `usage: ${def.usage}`);
  });
  return out;
}

export function validateArgs(def: CommandDef, raw: Record<string, unknown>): Record<string, unknown> {
  const parsed = def.args.safeParse(raw);
  if (parsed.success) return parsed.data as Record<string, unknown>;
  const problems = parsed.error.issues.map((i) => {
    const key = String(i.path[0] ?? '');
    const label = def.positionals.includes(key) ? key.toUpperCase() : `--${kebab(key)}`;
    if (raw[key] === undefined && i.code === 'invalid_type') return `${label} is required`;
    // z.coerce.number() turns 'abc' into NaN, and zod then speaks of NaN: say what was typed instead.
    const expected = (i as { expected?: string }).expected;
    if (i.code === 'invalid_type' && typeof raw[key] === 'string' && expected === 'number')
      return `${label}: '${raw[key]}' is not a number`;
    if (i.code === 'invalid_type' && typeof raw[key] === 'string' && expected === 'int')
      return `${label}: '${raw[key]}' is not a whole number`;
    return `${label}: ${i.message}`;
  });
  throw new UserError(`${def.name}: ${problems.join('; ')}`, `usage: ${def.usage}`);
}
