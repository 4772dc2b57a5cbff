// A small re-implementation of the parts of CPython 3.12's argparse that SGLang's launch_server parser uses:
// `--flag value` / `--flag=value`, unique-prefix abbreviations (allow_abbrev=True), aliases, store_true, nargs
// '+'/'*'/'?', int/float/str types, choices, required options, and argparse's exact error texts and usage
// wrapping (HelpFormatter._format_usage with width = $COLUMNS or 80, minus 2).

import { pyRepr } from './pyrepr.mjs';

export class ParseError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ParseError';
  }
}

const NEGATIVE_NUMBER = /^-\d+$|^-\d*\.\d+$/;

const TYPE_NAMES = { int: 'int', float: 'float', str: 'str' };

function convert(type, raw) {
  if (type === 'int') {
    // Python int() accepts surrounding whitespace, a sign and underscores between digits.
    if (!/^\s*[+-]?\d+(_\d+)*\s*$/.test(raw)) return { ok: false };
    return { ok: true, value: Number.parseInt(raw.replace(/_/g, '').trim(), 10) };
  }
  if (type === 'float') {
    const t = raw.trim().toLowerCase();
    if (/^[+-]?(inf|infinity)$/.test(t)) return { ok: true, value: t.startsWith('-') ? -Infinity : Infinity };
    if (/^[+-]?nan$/.test(t)) return { ok: true, value: Number.NaN };
    if (!/^[+-]?((\d+(_\d+)*)(\.(\d+(_\d+)*)?)?|\.\d+(_\d+)*)([eE][+-]?\d+)?$/.test(t)) return { ok: false };
    return { ok: true, value: Number.parseFloat(t.replace(/_/g, '')) };
  }
  return { ok: true, value: raw };
}

/** HelpFormatter's width: shutil.get_terminal_size() (`$COLUMNS`, else 80 when not a terminal) minus 2. */
function helpWidth() {
  const columns = Number.parseInt(process.env.COLUMNS ?? '', 10);
  return (Number.isFinite(columns) && columns > 0 ? columns : 80) - 2;
}

// textwrap.TextWrapper.wordsep_re (CPython 3.12 Lib/textwrap.py): words, whitespace, and breaks after the hyphen of
// a hyphenated word (`auto-` / `detection`), as HelpFormatter._split_lines calls textwrap.wrap(text, width).
const WS = '[\\t\\n\\x0b\\x0c\\r ]';
const NWS = '[^\\t\\n\\x0b\\x0c\\r ]';
const LT = '[^\\d\\W]';
const WP = '[\\w!"\'&.,?]';
const WORDSEP = new RegExp(
  `(${WS}+|(?<=${WP})-{2,}(?=\\w)|${NWS}+?(?:-(?:(?<=${LT}{2}-)|(?<=${LT}-${LT}-))(?=${LT}-?${LT})|(?=${WS}|$)|(?<=${WP})(?=-{2,}\\w)))`,
  'g',
);

/** textwrap.wrap(text, width) with its defaults (break_long_words, break_on_hyphens, drop_whitespace). */
export function wrapText(text, width) {
  const chunks = text.split(WORDSEP).filter((c) => c !== '' && c !== undefined);
  chunks.reverse();
  const lines = [];
  while (chunks.length > 0) {
    const line = [];
    let len = 0;
    if (lines.length > 0 && chunks[chunks.length - 1].trim() === '') chunks.pop();
    while (chunks.length > 0 && len + chunks[chunks.length - 1].length <= width) {
      const c = chunks.pop();
      line.push(c);
      len += c.length;
    }
    if (chunks.length > 0 && chunks[chunks.length - 1].length > width) {
      // _handle_long_word: as much of the word as fits, cut after its last hyphen when there is one.
      const space = Math.max(width - len, 1);
      const chunk = chunks[chunks.length - 1];
      let end = space;
      if (chunk.length > space) {
        const hyphen = chunk.lastIndexOf('-', space - 1);
        if (hyphen > 0 && /[^-]/.test(chunk.slice(0, hyphen))) end = hyphen + 1;
      }
      line.push(chunk.slice(0, end));
      chunks[chunks.length - 1] = chunk.slice(end);
      len = line.reduce((n, c) => n + c.length, 0);
    }
    if (line.length > 0 && line[line.length - 1].trim() === '') line.pop();
    if (line.length > 0) lines.push(line.join(''));
  }
  return lines;
}

export class ArgumentParser {
  /** @param {{prog: string, allowAbbrev?: boolean}} opts */
  constructor({ prog, allowAbbrev = true }) {
    this.prog = prog;
    this.allowAbbrev = allowAbbrev;
    this.actions = [];
    /** option string -> action, in registration order (like _option_string_actions) */
    this.optionMap = new Map();
    this.add(['-h', '--help'], { action: 'help', dest: 'help' });
  }

  /**
   * @param {string[]} optionStrings
   * @param {{dest?: string, type?: 'int'|'float'|'str', action?: 'store'|'store_true'|'help', choices?: Array<string|number>,
   *   required?: boolean, default?: unknown, nargs?: '+'|'*'|'?', metavar?: string, help?: string, onUse?: (opt: string) => void,
   *   valueType?: string}} spec
   */
  add(optionStrings, spec = {}) {
    const long = optionStrings.find((s) => s.startsWith('--')) ?? optionStrings[0];
    const dest = spec.dest ?? long.replace(/^-+/, '').replace(/-/g, '_');
    const action = {
      optionStrings,
      dest,
      kind: spec.action ?? 'store',
      type: spec.type ?? 'str',
      choices: spec.choices ?? null,
      required: spec.required ?? false,
      default: spec.default ?? (spec.action === 'store_true' ? false : null),
      nargs: spec.nargs ?? (spec.action === 'store_true' || spec.action === 'help' ? 0 : null),
      metavar: spec.metavar ?? null,
      help: spec.help ?? '',
      onUse: spec.onUse ?? null,
      valueType: spec.valueType ?? null,
    };
    this.actions.push(action);
    for (const s of optionStrings) this.optionMap.set(s, action);
    return action;
  }

  actionName(action) {
    return action.optionStrings.join('/');
  }

  // _parse_optional: returns null for a positional, or {action, optionString, explicit}.
  classify(arg) {
    if (arg?.[0] !== '-') return null;
    if (this.optionMap.has(arg)) return { action: this.optionMap.get(arg), optionString: arg, explicit: null };
    if (arg.length === 1) return null;
    if (arg.includes('=')) {
      const eq = arg.indexOf('=');
      const name = arg.slice(0, eq);
      if (this.optionMap.has(name)) {
        return { action: this.optionMap.get(name), optionString: name, explicit: arg.slice(eq + 1) };
      }
    }
    const tuples = this.optionTuples(arg);
    if (tuples.length > 1) {
      const matches = tuples.map((t) => t.optionString).join(', ');
      throw new ParseError(`ambiguous option: ${arg} could match ${matches}`);
    }
    if (tuples.length === 1) return tuples[0];
    if (NEGATIVE_NUMBER.test(arg)) return null;
    if (arg.includes(' ')) return null;
    return { action: null, optionString: arg, explicit: null };
  }

  optionTuples(arg) {
    const out = [];
    if (!this.allowAbbrev) return out;
    if (arg.startsWith('--')) {
      let prefix = arg;
      let explicit = null;
      if (arg.includes('=')) {
        const eq = arg.indexOf('=');
        prefix = arg.slice(0, eq);
        explicit = arg.slice(eq + 1);
      }
      for (const [s, action] of this.optionMap) {
        if (s.startsWith(prefix)) out.push({ action, optionString: s, explicit });
      }
    }
    return out;
  }

  getValue(action, raw) {
    const r = convert(action.type, raw);
    if (!r.ok) {
      throw new ParseError(
        `argument ${this.actionName(action)}: invalid ${TYPE_NAMES[action.type]} value: ${pyRepr(raw)}`,
      );
    }
    if (action.choices && !action.choices.includes(r.value)) {
      const choices = action.choices.map((c) => pyRepr(c)).join(', ');
      throw new ParseError(
        `argument ${this.actionName(action)}: invalid choice: ${pyRepr(r.value)} (choose from ${choices})`,
      );
    }
    return r.value;
  }

  /**
   * Parse argv. Returns {values, seen, extras, helpRequested}; throws ParseError with argparse's message.
   * `values` maps dest -> value (defaults filled in), `seen` maps dest -> the option string the user typed.
   */
  parse(argv) {
    const values = {};
    const seen = {};
    for (const a of this.actions) {
      if (a.kind !== 'help' && !(a.dest in values)) values[a.dest] = a.default;
    }
    const extras = [];
    const kinds = [];
    const parsed = [];
    let afterDashDash = false;
    for (const arg of argv) {
      if (afterDashDash) {
        kinds.push('A');
        parsed.push(null);
        continue;
      }
      if (arg === '--') {
        afterDashDash = true;
        kinds.push('-');
        parsed.push(null);
        continue;
      }
      const c = this.classify(arg);
      kinds.push(c ? 'O' : 'A');
      parsed.push(c);
    }
    let i = 0;
    let helpRequested = false;
    while (i < argv.length) {
      const kind = kinds[i];
      if (kind === '-') {
        i++;
        continue;
      }
      if (kind === 'A') {
        extras.push(argv[i]);
        i++;
        continue;
      }
      const { action, optionString, explicit } = parsed[i];
      i++;
      if (!action) {
        extras.push(optionString);
        continue;
      }
      if (action.kind === 'help') {
        helpRequested = true;
        continue;
      }
      const name = this.actionName(action);
      let args;
      if (action.nargs === 0) {
        if (explicit !== null) throw new ParseError(`argument ${name}: ignored explicit argument ${pyRepr(explicit)}`);
        args = [];
      } else if (explicit !== null) {
        args = [explicit];
      } else {
        const following = [];
        let j = i;
        while (j < argv.length && kinds[j] === 'A') {
          following.push(argv[j]);
          j++;
        }
        if (action.nargs === null) {
          if (following.length < 1) throw new ParseError(`argument ${name}: expected one argument`);
          args = following.slice(0, 1);
        } else if (action.nargs === '+') {
          if (following.length < 1) throw new ParseError(`argument ${name}: expected at least one argument`);
          args = following;
        } else if (action.nargs === '*') {
          args = following;
        } else if (action.nargs === '?') {
          args = following.slice(0, 1);
        } else {
          args = following.slice(0, 1);
        }
        i += args.length;
      }
      if (action.kind === 'store_true') {
        values[action.dest] = true;
      } else if (action.nargs === '+' || action.nargs === '*') {
        values[action.dest] = args.map((a) => this.getValue(action, a));
      } else if (action.nargs === '?' && args.length === 0) {
        values[action.dest] = action.default;
      } else {
        values[action.dest] = this.getValue(action, args[0]);
      }
      seen[action.dest] = optionString;
      if (action.onUse) action.onUse(optionString);
    }
    if (helpRequested) return { values, seen, extras, helpRequested };
    const missing = this.actions.filter((a) => a.required && !(a.dest in seen)).map((a) => this.actionName(a));
    if (missing.length > 0) throw new ParseError(`the following arguments are required: ${missing.join(', ')}`);
    if (extras.length > 0) throw new ParseError(`unrecognized arguments: ${extras.join(' ')}`);
    return { values, seen, extras, helpRequested };
  }

  actionUsage(action) {
    const opt = action.optionStrings[0];
    if (action.nargs === 0) return opt;
    const metavar =
      action.metavar ?? (action.choices ? `{${action.choices.map(String).join(',')}}` : action.dest.toUpperCase());
    let args = metavar;
    if (action.nargs === '+') args = `${metavar} [${metavar} ...]`;
    else if (action.nargs === '*') args = `[${metavar} ...]`;
    else if (action.nargs === '?') args = `[${metavar}]`;
    return `${opt} ${args}`;
  }

  /** argparse's format_usage(), including its line wrapping. */
  formatUsage() {
    const textWidth = helpWidth(); // current_indent is 0
    const prefix = 'usage: ';
    const prog = this.prog;
    const optUsage = this.actions
      .map((a) => {
        const u = this.actionUsage(a);
        return a.required ? u : `[${u}]`;
      })
      .join(' ');
    const full = `${prog} ${optUsage}`;
    if (prefix.length + full.length <= textWidth) return `${prefix}${full}\n`;
    const partRe = /\(.*?\)+(?=\s|$)|\[.*?\]+(?=\s|$)|\S+/g;
    const optParts = optUsage.match(partRe) ?? [];
    const getLines = (parts, indent, pfx) => {
      const lines = [];
      let line = [];
      let lineLen = pfx !== undefined ? pfx.length - 1 : indent.length - 1;
      for (const part of parts) {
        if (lineLen + 1 + part.length > textWidth && line.length > 0) {
          lines.push(indent + line.join(' '));
          line = [];
          lineLen = indent.length - 1;
        }
        line.push(part);
        lineLen += part.length + 1;
      }
      if (line.length > 0) lines.push(indent + line.join(' '));
      if (pfx !== undefined) lines[0] = lines[0].slice(indent.length);
      return lines;
    };
    let lines;
    if (prefix.length + prog.length <= 0.75 * textWidth) {
      const indent = ' '.repeat(prefix.length + prog.length + 1);
      lines = getLines([prog, ...optParts], indent, prefix);
    } else {
      const indent = ' '.repeat(prefix.length);
      lines = [prog, ...getLines(optParts, indent)];
    }
    return `${prefix}${lines.join('\n')}\n`;
  }

  /** What parser.error() prints to stderr before exiting with status 2. */
  formatError(message) {
    return `${this.formatUsage()}${this.prog}: error: ${message}\n`;
  }

  /**
   * argparse's format_help() for a parser without description, epilog or groups (SGLang's launch_server parser):
   * the usage, a blank line, `options:`, then each action as HelpFormatter._format_action lays it out. The invocation
   * (`--tp-size TP_SIZE, --tensor-parallel-size TP_SIZE`) is never wrapped; help starts beside it when it fits in
   * the action column (help position min(longest invocation + 4, 24)), else on the next line, and is wrapped by
   * textwrap to the rest of the width.
   */
  formatHelp() {
    const width = helpWidth();
    const invocation = (a) =>
      a.nargs === 0
        ? a.optionStrings.join(', ')
        : a.optionStrings.map((s) => this.actionUsage({ ...a, optionStrings: [s] })).join(', ');
    const indent = 2;
    const longest = Math.max(...this.actions.map((a) => invocation(a).length + indent));
    const helpPosition = Math.min(longest + 2, Math.min(24, Math.max(width - 20, indent * 2)));
    const helpWidth_ = Math.max(width - helpPosition, 11);
    const actionWidth = helpPosition - indent - 2;
    const out = [this.formatUsage(), '\n', 'options:\n'];
    for (const a of this.actions) {
      const header = invocation(a);
      const help = a.kind === 'help' ? 'show this help message and exit' : a.help;
      if (!help) {
        out.push(`${' '.repeat(indent)}${header}\n`);
        continue;
      }
      let first;
      if (header.length <= actionWidth) {
        out.push(`${' '.repeat(indent)}${header.padEnd(actionWidth)}  `);
        first = 0;
      } else {
        out.push(`${' '.repeat(indent)}${header}\n`);
        first = helpPosition;
      }
      const lines = wrapText(help.replace(/\s+/g, ' ').trim(), helpWidth_);
      out.push(`${' '.repeat(first)}${lines[0] ?? ''}\n`);
      for (const l of lines.slice(1)) out.push(`${' '.repeat(helpPosition)}${l}\n`);
    }
    return out.join('');
  }
}
