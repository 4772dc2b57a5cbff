// Part src/templates: owns the strict Mustache subset the user-editable templates/ are rendered with.
// May import: errors.ts, package-root.ts, profiles, suggest.ts.
//
// A small, strict Mustache subset for the user-editable templates in templates/. Strict both ways: a template that
// names a variable the renderer does not offer is refused before anything is rendered (a typo would otherwise ship
// an empty section to a public tracker), and a declared variable without a value at render time is an error, never
// an empty string.
//
//   {{name}} {{a.b}}          a value ({{.}} is the current list item)
//   {{#name}}...{{/name}}     a list: once per item; a flag or a text: once when true / not empty
//   {{^name}}...{{/name}}     once when the list is empty, the flag false or the text empty
//   {{! comment }}
// A section or comment tag alone on its line takes the whole line with it, so Markdown keeps its shape.
import { join } from 'node:path';
import { ConfigError } from '../errors.ts';
import { PACKAGE_ROOT } from '../package-root.ts';
import { closest } from '../suggest.ts';

/** The templates shipped with the package (issue title and body, the Slurm batch script). */
export const PACKAGE_TEMPLATES = join(PACKAGE_ROOT, 'templates');

/** What a template may use: a value (`text`), a true/false (`flag`), a list of values or of records, or a record. */
export type VarSpec =
  | 'text'
  | 'flag'
  | { list: 'text' | { [field: string]: VarSpec } }
  | { fields: { [field: string]: VarSpec } };

export type VarSchema = { [name: string]: VarSpec };

export interface TemplateIssue {
  /** `line:column` of the tag in the template. */
  at: string;
  message: string;
  fix?: string;
}

/** A ConfigError, so it reaches a person as `file:line:col: message (fix: ...)` through the usual error path. */
export class TemplateError extends ConfigError {
  constructor(
    source: string,
    readonly problems: TemplateIssue[],
  ) {
    super(
      source,
      problems.map((p) => ({ path: `${source}:${p.at}`, message: p.message, ...(p.fix ? { fix: p.fix } : {}) })),
    );
  }
}

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'var'; name: string; at: string }
  | { kind: 'section'; name: string; inverted: boolean; at: string; children: Node[] };

export interface Template {
  source: string;
  nodes: Node[];
}

const TAG = /\{\{\s*([#^/!]?)\s*([^}]*?)\s*\}\}/g;
const NAME = /^(?:\.|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$/;

function position(text: string, index: number): string {
  const before = text.slice(0, index);
  const line = before.split('\n').length;
  const col = index - before.lastIndexOf('\n');
  return `${line}:${col}`;
}

/** Standalone tags (section, close, comment alone on a line) are removed with their line. */
function standalone(text: string, start: number, end: number): { from: number; to: number } | null {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  let lineEnd = text.indexOf('\n', end);
  if (lineEnd === -1) lineEnd = text.length;
  if (text.slice(lineStart, start).trim() !== '' || text.slice(end, lineEnd).trim() !== '') return null;
  return { from: lineStart, to: lineEnd < text.length ? lineEnd + 1 : lineEnd };
}

export function parseTemplate(text: string, source: string): Template {
  const issues: TemplateIssue[] = [];
  const root: Node[] = [];
  const stack: Array<{ node: Extract<Node, { kind: 'section' }>; children: Node[] }> = [];
  const out = () => (stack.length ? stack[stack.length - 1]!.children : root);
  let cursor = 0;
  for (const m of text.matchAll(TAG)) {
    const [whole, sigil = '', rawName = ''] = m;
    const at = position(text, m.index);
    let from = m.index;
    let to = m.index + whole.length;
    if (sigil !== '') {
      const line = standalone(text, from, to);
      if (line && line.from >= cursor) {
        from = line.from;
        to = line.to;
      }
    }
    if (from > cursor) out().push({ kind: 'text', text: text.slice(cursor, from) });
    cursor = to;
    if (sigil === '!') continue;
    const name = rawName.trim();
    if (!NAME.test(name)) {
      issues.push({ at, message: `'${whole}' is not a variable tag`, fix: 'write {{name}}, {{#name}}...{{/name}}' });
      continue;
    }
    if (sigil === '#' || sigil === '^') {
      const node: Extract<Node, { kind: 'section' }> = {
        kind: 'section',
        name,
        inverted: sigil === '^',
        at,
        children: [],
      };
      out().push(node);
      stack.push({ node, children: node.children });
    } else if (sigil === '/') {
      const open = stack.pop();
      if (!open) issues.push({ at, message: `{{/${name}}} closes no section` });
      else if (open.node.name !== name) {
        issues.push({ at, message: `{{/${name}}} closes {{#${open.node.name}}} opened at ${open.node.at}` });
      }
    } else {
      out().push({ kind: 'var', name, at });
    }
  }
  if (cursor < text.length) out().push({ kind: 'text', text: text.slice(cursor) });
  for (const open of stack) issues.push({ at: open.node.at, message: `{{#${open.node.name}}} is never closed` });
  if (issues.length) throw new TemplateError(source, issues);
  return { source, nodes: root };
}

// ---------------------------------------------------------------------------------------------- checking names

type Scope = { [name: string]: VarSpec } | 'text';

function lookupSpec(scopes: Scope[], name: string): VarSpec | undefined {
  if (name === '.') {
    const top = scopes[scopes.length - 1];
    return top === 'text' ? 'text' : undefined;
  }
  const [head, ...rest] = name.split('.');
  for (let i = scopes.length - 1; i >= 0; i--) {
    const s = scopes[i]!;
    if (s === 'text' || !(head! in s)) continue;
    let spec: VarSpec | undefined = s[head!];
    for (const part of rest) {
      spec = typeof spec === 'object' && 'fields' in spec ? spec.fields[part] : undefined;
      if (!spec) return undefined;
    }
    return spec;
  }
  return undefined;
}

function knownNames(scopes: Scope[]): string[] {
  const names: string[] = [];
  const walk = (prefix: string, spec: VarSpec) => {
    names.push(prefix);
    if (typeof spec === 'object' && 'fields' in spec) {
      for (const [k, v] of Object.entries(spec.fields)) walk(`${prefix}.${k}`, v);
    }
  };
  for (const s of scopes) if (s !== 'text') for (const [k, v] of Object.entries(s)) walk(k, v);
  return [...new Set(names)];
}

/** Every tag must name a variable the schema declares, in the scope it appears in. */
export function checkTemplate(t: Template, schema: VarSchema): void {
  const issues: TemplateIssue[] = [];
  const visit = (nodes: Node[], scopes: Scope[]) => {
    for (const n of nodes) {
      if (n.kind === 'text') continue;
      const spec = lookupSpec(scopes, n.name);
      if (!spec) {
        const known = knownNames(scopes);
        const guess = n.name === '.' ? undefined : closest(n.name, known);
        issues.push({
          at: n.at,
          message: `unknown variable '${n.name}'`,
          fix: guess ? `did you mean '${guess}'?` : `known variables here: ${known.join(', ')}`,
        });
        continue;
      }
      if (n.kind === 'var') {
        if (typeof spec === 'object') {
          issues.push({
            at: n.at,
            message: `'${n.name}' is a ${'list' in spec ? 'list' : 'record'}, not a value`,
            fix: `use {{#${n.name}}}...{{/${n.name}}}`,
          });
        }
        continue;
      }
      let inner: Scope | undefined;
      if (!n.inverted && typeof spec === 'object') inner = 'list' in spec ? spec.list : spec.fields;
      visit(n.children, inner ? [...scopes, inner] : scopes);
    }
  };
  visit(t.nodes, [schema]);
  if (issues.length) throw new TemplateError(t.source, issues);
}

// ---------------------------------------------------------------------------------------------- rendering

function lookupValue(stack: unknown[], name: string): unknown {
  if (name === '.') return stack[stack.length - 1];
  const [head, ...rest] = name.split('.');
  for (let i = stack.length - 1; i >= 0; i--) {
    const ctx = stack[i];
    if (ctx === null || typeof ctx !== 'object' || Array.isArray(ctx) || !(head! in ctx)) continue;
    let v: unknown = (ctx as Record<string, unknown>)[head!];
    for (const part of rest) {
      v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
    }
    return v;
  }
  return undefined;
}

/** Renders a checked template; every variable without a value is reported, all at once. */
export function renderTemplate(t: Template, data: Record<string, unknown>): string {
  const issues = new Map<string, TemplateIssue>();
  const missing = (n: { name: string; at: string }) =>
    issues.set(`${n.at}/${n.name}`, {
      at: n.at,
      message: `variable '${n.name}' has no value`,
      fix: 'the renderer must supply every variable the template uses',
    });
  const render = (nodes: Node[], stack: unknown[]): string => {
    let out = '';
    for (const n of nodes) {
      if (n.kind === 'text') {
        out += n.text;
        continue;
      }
      const v = lookupValue(stack, n.name);
      if (v === undefined || v === null) {
        missing(n);
        continue;
      }
      if (n.kind === 'var') {
        out += typeof v === 'string' ? v : String(v);
        continue;
      }
      const items = Array.isArray(v) ? v : v === false || v === '' ? [] : [v];
      if (n.inverted) {
        if (items.length === 0) out += render(n.children, stack);
      } else {
        for (const item of items) out += render(n.children, item === true ? stack : [...stack, item]);
      }
    }
    return out;
  };
  const text = render(t.nodes, [data]);
  if (issues.size) throw new TemplateError(t.source, [...issues.values()]);
  return text;
}
