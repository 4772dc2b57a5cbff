// SGLang's own list of launch flags, read from `python -m sglang.launch_server --help` (argparse's format_help), and
// a launch argv checked against it the way argparse would parse it. The host's install is the authority on which
// flags and values it takes (docs/sglang.md §11): a value the shipped table (choices.ts) allows can still be one this
// SGLang does not know, and extra_args can name any flag. Pure functions: asking the host and caching the answer is
// src/lifecycle/host-flags.ts.
import type { Issue } from '../errors.ts';
import { closest } from '../suggest.ts';
import { allChoices } from './choices.ts';
import { FLAGS } from './fields.ts';
import { CHOICE_FIELDS } from './schema.ts';

export interface FlagInfo {
  /** How many values follow the flag: 0 for a switch, 1 for `--flag X`; `[X]` is 0..1, `[X ...]` 0..n, `X [X ...]` 1..n. */
  min: number;
  max: number;
  /** The values argparse accepts (`{a,b,c}`), or null for any. */
  choices: string[] | null;
  /** Every spelling of the same option (`--tp-size`, `--tensor-parallel-size`). */
  names: string[];
}

export interface FlagTable {
  flags: Map<string, FlagInfo>;
  /** Every flag the server takes is listed (its --help), so an unlisted flag is refused; the shipped table is not. */
  complete: boolean;
}

/** The depth of `{}`/`[]` nesting at the end of `s`, from `depth`. */
function nesting(s: string, depth = 0): number {
  let d = depth;
  for (const c of s) {
    if (c === '{' || c === '[') d++;
    else if ((c === '}' || c === ']') && d > 0) d--;
  }
  return d;
}

/** Splits `s` at `sep` where no `{}`/`[]` is open. */
function splitTop(s: string, sep: RegExp): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && depth > 0) depth--;
    else if (depth === 0) {
      const m = sep.exec(s.slice(i));
      if (m && m.index === 0) {
        parts.push(s.slice(start, i));
        i += m[0].length - 1;
        start = i + 1;
      }
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/** What a metavar says about the values: `{a,b}`, `X`, `[X]`, `[X ...]`, `X [X ...]`. */
function arity(metavar: string): Pick<FlagInfo, 'min' | 'max' | 'choices'> {
  const m = metavar.trim();
  const braces = m.match(/\{([^{}]*)\}/);
  const choices = braces ? braces[1]!.split(',').map((c) => c.trim()) : null;
  if (m === '') return { min: 0, max: 0, choices: null };
  if (/\.\.\.\]$/.test(m)) return { min: m.startsWith('[') ? 0 : 1, max: Number.POSITIVE_INFINITY, choices };
  if (m.startsWith('[') && m.endsWith(']')) return { min: 0, max: 1, choices };
  return { min: 1, max: 1, choices };
}

// An option line of the help: indented by the section (2 spaces; help continuation lines sit at the help
// position, 6 or more), starting with a dash. `-1 means disabling ...` wrapped onto its own line is help text.
const ENTRY = /^ {1,4}(-{1,2}[A-Za-z0-9?][^\s,]*.*)$/;

/**
 * Flags from argparse's help text. Handles the layouts of CPython 3.8-3.13 (`--a A, --b A`; 3.13's `--a, --b A`),
 * help beside or under the invocation, and an invocation whose `{x,y}` list was broken across lines by something
 * that wrapped the output. Flags only in the usage line (none, with argparse) are not read.
 */
export function parseHelp(text: string): FlagTable {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what is being removed
  const lines = text.replace(/\x1b\[[0-9;]*m/g, '').split(/\r?\n/);
  const flags = new Map<string, FlagInfo>();
  let inUsage = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('usage:')) inUsage = true;
    if (inUsage) {
      if (line.trim() === '') inUsage = false;
      continue;
    }
    const m = line.match(ENTRY);
    if (!m) continue;
    let entry = m[1]!;
    // A list cut by a wrapper: `{a,b,` / `c}` or `--a A,` / `--b A` continues on the next line.
    while (i + 1 < lines.length && (nesting(entry) > 0 || /,$/.test(entry))) {
      const next = lines[i + 1]!.trim();
      if (next === '') break;
      entry += /,$/.test(entry) && nesting(entry) === 0 ? ` ${next}` : next;
      i++;
    }
    const invocation = splitTop(entry, / {2,}/)[0]!.trim();
    const parts = splitTop(invocation, /, /).map((p) => p.trim());
    const names: string[] = [];
    let metavar = '';
    for (const p of parts) {
      const [name, ...rest] = splitTop(p, / /);
      if (!name?.startsWith('-')) continue;
      names.push(name);
      if (!metavar && rest.join(' ').trim()) metavar = rest.join(' ');
    }
    if (names.length === 0) continue;
    const info: FlagInfo = { ...arity(metavar), names };
    for (const n of names) flags.set(n, info);
  }
  return { flags, complete: true };
}

/** One thing argparse would refuse in a launch argv (or accept as something else). */
export interface ArgvProblem {
  /** Index into the argv given to checkArgv. */
  index: number;
  kind: 'unknown' | 'ambiguous' | 'choice' | 'missing-value' | 'no-value' | 'stray';
  /** The option as written (`--kv-cache-dtype`), or the stray value. */
  arg: string;
  /** The option it resolved to, when written as a prefix abbreviation. */
  flag?: string;
  value?: string;
  choices?: string[];
  candidates?: string[];
}

const NEGATIVE = /^-\d+$|^-\d*\.\d+$/;
const isOption = (a: string) => a.startsWith('-') && a !== '-' && !NEGATIVE.test(a);

/** The option `name` means, as argparse resolves it: exactly, else as a unique prefix of a long option. */
function resolve(table: FlagTable, name: string): { flag?: string; candidates: string[] } {
  if (table.flags.has(name)) return { flag: name, candidates: [name] };
  if (!name.startsWith('--')) return { candidates: [] };
  const candidates = [...table.flags.keys()].filter((k) => k.startsWith(name));
  return candidates.length === 1 ? { flag: candidates[0], candidates } : { candidates };
}

/**
 * Walks the server's arguments (what follows `-m sglang.launch_server`) as argparse would (allow_abbrev, `=`
 * values, nargs) and lists what it would refuse. Against an incomplete table an unknown flag is let through, and
 * what follows it is taken to be its values.
 */
export function checkArgv(table: FlagTable, args: readonly string[]): ArgvProblem[] {
  const problems: ArgvProblem[] = [];
  let i = 0;
  while (i < args.length) {
    const arg = args[i]!;
    const index = i;
    i++;
    if (!isOption(arg)) {
      if (table.complete) problems.push({ index, kind: 'stray', arg });
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 && !table.flags.has(arg) ? arg.slice(0, eq) : arg;
    const explicit = name === arg ? undefined : arg.slice(eq + 1);
    const r = resolve(table, name);
    if (!r.flag) {
      if (r.candidates.length > 1) problems.push({ index, kind: 'ambiguous', arg: name, candidates: r.candidates });
      else if (table.complete) problems.push({ index, kind: 'unknown', arg: name });
      // argparse sets what follows an unknown flag aside with it: one refusal, not one per value.
      while (i < args.length && !isOption(args[i]!)) i++;
      continue;
    }
    const info = table.flags.get(r.flag)!;
    const via = r.flag === name ? {} : { flag: r.flag };
    if (info.max === 0) {
      if (explicit !== undefined) problems.push({ index, kind: 'no-value', arg: name, value: explicit, ...via });
      continue;
    }
    const values: string[] = [];
    if (explicit !== undefined) values.push(explicit);
    else while (i < args.length && values.length < info.max && !isOption(args[i]!)) values.push(args[i++]!);
    if (values.length < info.min) problems.push({ index, kind: 'missing-value', arg: name, ...via });
    for (const v of values) {
      if (info.choices && !info.choices.includes(v))
        problems.push({ index, kind: 'choice', arg: name, value: v, choices: info.choices, ...via });
    }
  }
  return problems;
}

/** Where each argv position came from, in the profile's words (`kv_cache_dtype`, `extra_args[2]`). */
export type ArgvLabel = (index: number) => string;

/** A problem as the person fixes it: the profile setting, what SGLang on the host says, and a likely fix. */
export function problemIssue(p: ArgvProblem, label: ArgvLabel, table: FlagTable, sglang: string): Issue {
  const path = label(p.index);
  const flag = p.flag ? `${p.arg} (argparse reads it as ${p.flag})` : p.arg;
  switch (p.kind) {
    case 'unknown': {
      const s = closest(p.arg, [...table.flags.keys()]);
      return {
        path,
        message: `${sglang} has no flag ${p.arg}`,
        fix: `${s ? `did you mean '${s}'? ` : ''}its flags are listed by python -m sglang.launch_server --help on the host`,
      };
    }
    case 'ambiguous':
      return {
        path,
        message: `${p.arg} is ambiguous for ${sglang}: it could mean ${p.candidates!.join(', ')}`,
        fix: 'write the whole flag',
      };
    case 'choice': {
      const s = closest(p.value!, p.choices!);
      return {
        path,
        message: `${flag} '${p.value}' is not a choice of ${sglang}, which takes: ${p.choices!.join(', ')}`,
        fix: `${s ? `did you mean '${s}'? ` : ''}use one of those, or launch on a host whose SGLang takes '${p.value}'`,
      };
    }
    case 'missing-value':
      return { path, message: `${flag} needs a value for ${sglang}`, fix: `give it one: ${p.arg} VALUE` };
    case 'no-value':
      return {
        path,
        message: `${flag} is a switch in ${sglang}: it takes no value, and '=${p.value}' would be refused`,
        fix: `write ${p.arg} alone`,
      };
    case 'stray':
      return {
        path,
        message: `'${p.arg}' follows no flag that takes a value in ${sglang}`,
        fix: 'put its --flag before it, or remove it (a switch takes no value)',
      };
  }
}

/**
 * The table shipped with the bot, for a host that cannot be asked: the typed flags with the values of choices.ts
 * (every release's). It lists only those flags, so it refuses no flag it does not list.
 */
export function shippedTable(): FlagTable {
  const flags = new Map<string, FlagInfo>();
  for (const spec of FLAGS) {
    const names = [spec.flag, spec.dsaFlag, ...(spec.aliases ?? [])].filter((n): n is string => n !== undefined);
    const set = CHOICE_FIELDS[spec.field];
    const info: FlagInfo =
      spec.kind === 'value'
        ? { min: 1, max: 1, choices: set ? [...allChoices(set)] : null, names }
        : { min: 0, max: 0, choices: null, names };
    for (const n of names) flags.set(n, info);
  }
  return { flags, complete: false };
}
