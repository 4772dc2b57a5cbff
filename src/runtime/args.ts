// Tokens -> an argument object checked by the command's zod schema. The schema is built here, on a command's first
// use, from the zod this module loads: command definitions themselves load without zod (`glm help` never needs it).
import { z } from 'zod';
import { UserError } from '../errors.ts';
import { closest } from '../suggest.ts';
import type { CommandDef } from './define.ts';

const built = new WeakMap<CommandDef, z.ZodObject>();

/** The command's argument schema, built once. */
export function argsOf(def: CommandDef): z.ZodObject {
  let schema = built.get(def);
  if (!schema) {
    schema = def.args(z);
    built.set(def, schema);
  }
  return schema;
}

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export function parseArgs(def: CommandDef, tokens: string[]): Record<string, unknown> {
  const schema = argsOf(def);
  const keys = Object.keys(schema.shape);
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
        const s = closest(name, flags);
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
    schema.shape[names[names.length - 1]!]?.def?.type === 'array';
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
  const parsed = argsOf(def).safeParse(raw);
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
