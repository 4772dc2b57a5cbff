// The import graph of the bot's own code (src/ and commands/) and the house rules over it: no cycle between files,
// no cycle between parts (a part is a folder src/<name>, or commands/, or a file directly in src/), only the ledger
// touches SQLite, and each folder imports only what its main file's `// May import:` line lists. test/house/imports.test.ts fails the build on a broken rule; run this file to print the
// findings: npm run imports
//
// Imports are read with TypeScript's own pre-processor (ts.preProcessFile), which sees `import ... from`,
// `import type`, `export ... from` and `import()` alike: a type import ties two parts together as much as a value
// import does, so none is left out.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The folders whose files make up the graph. */
export const SCANNED = ['src', 'commands'];

export interface ImportGraph {
  /** Repository-relative paths with `/`, sorted. */
  files: string[];
  /** file -> the files it imports (relative specifiers only). */
  edges: Map<string, Set<string>>;
  /** file -> the packages it imports (bare specifiers, e.g. better-sqlite3, node:fs). */
  packages: Map<string, Set<string>>;
  /** Relative imports that name no file: a broken graph would hide cycles, so they are reported. */
  unresolved: string[];
}

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|cts)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
}

const rel = (root: string, p: string) => relative(root, p).split(sep).join('/');

export function importGraph(root = ROOT, folders = SCANNED): ImportGraph {
  const abs: string[] = [];
  for (const f of folders) if (existsSync(join(root, f))) walk(join(root, f), abs);
  const files = abs.map((p) => rel(root, p)).sort();
  const known = new Set(files);
  const edges = new Map<string, Set<string>>();
  const packages = new Map<string, Set<string>>();
  const unresolved: string[] = [];
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const to = new Set<string>();
    const pkgs = new Set<string>();
    for (const { fileName: spec } of info.importedFiles) {
      if (!spec.startsWith('.')) {
        pkgs.add(spec);
        continue;
      }
      const target = rel(root, resolve(dirname(join(root, file)), spec));
      if (known.has(target)) to.add(target);
      else if (!target.startsWith('..') && SCANNED.some((f) => target.startsWith(`${f}/`)))
        unresolved.push(`${file}: '${spec}'`);
    }
    edges.set(file, to);
    packages.set(file, pkgs);
  }
  return { files, edges, packages, unresolved };
}

/** The part a file belongs to: src/<folder>, commands, or the file itself when it sits directly in src/. */
export function partOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'src') return parts.length > 2 ? `src/${parts[1]}` : file;
  return parts[0] ?? file;
}

/** Strongly connected components with more than one member (or a self-import), found by Tarjan's algorithm. */
function components(nodes: string[], next: (n: string) => Iterable<string>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || [...next(v)].includes(v)) out.push(comp.sort());
    }
  };
  for (const n of nodes) if (!index.has(n)) visit(n);
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** One shortest cycle through the component's first member, as `a -> b -> a`. */
function oneCycle(comp: string[], next: (n: string) => Iterable<string>): string[] {
  const inComp = new Set(comp);
  const start = comp[0]!;
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of next(v)) {
      if (!inComp.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = prev.get(u)!) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

export interface Cycle {
  /** Every member of the strongly connected component. */
  members: string[];
  /** One concrete cycle through them, first member repeated at the end. */
  path: string[];
  /** For part cycles: the file imports behind each step of `path`. */
  because?: string[];
  /** For part cycles: the pairs of members that import each other directly, as `a <-> b`. */
  bothWays?: string[];
}

export function fileCycles(g: ImportGraph): Cycle[] {
  const next = (n: string) => g.edges.get(n) ?? [];
  return components(g.files, next).map((members) => ({ members, path: oneCycle(members, next) }));
}

export function partCycles(g: ImportGraph): Cycle[] {
  const partEdges = new Map<string, Map<string, string[]>>();
  for (const [from, tos] of g.edges) {
    for (const to of tos) {
      const a = partOf(from);
      const b = partOf(to);
      if (a === b) continue;
      const m = partEdges.get(a) ?? new Map<string, string[]>();
      partEdges.set(a, m);
      m.set(b, [...(m.get(b) ?? []), `${from} -> ${to}`]);
    }
  }
  const parts = [...new Set(g.files.map(partOf))].sort();
  const next = (n: string) => partEdges.get(n)?.keys() ?? [];
  return components(parts, next).map((members) => {
    const path = oneCycle(members, next);
    const because = path.slice(1).flatMap((to, i) => partEdges.get(path[i]!)?.get(to) ?? []);
    const bothWays = members.flatMap((a) =>
      members.filter((b) => a < b && partEdges.get(a)?.has(b) && partEdges.get(b)?.has(a)).map((b) => `${a} <-> ${b}`),
    );
    return { members, path, because, bothWays };
  });
}

/** Files outside src/ledger that import better-sqlite3 or prepare SQL statements: only the ledger touches SQLite. */
export function sqliteOutsideLedger(g: ImportGraph, root = ROOT): string[] {
  const out: string[] = [];
  for (const file of g.files) {
    if (file.startsWith('src/ledger/')) continue;
    if (g.packages.get(file)?.has('better-sqlite3')) out.push(`${file}: imports better-sqlite3`);
    // A statement prepared from SQL text (a string or template literal, maybe on the next line); other methods
    // named prepare (HostPool.prepare([...hosts])) are not SQLite.
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(/\.prepare\(\s*['"`]/g)) {
      out.push(`${file}:${text.slice(0, m.index).split('\n').length}: calls .prepare(`);
    }
  }
  return out;
}

/**
 * Each folder's main file says, in its first paragraph, what the folder owns and `// May import: a, b, c.` (part
 * names without `src/`; continuation lines start with `//   `). What it imports must be in that list: the paragraph
 * stays true because the build fails when it is not. Returns each problem in words.
 */
export function undeclaredImports(g: ImportGraph, root = ROOT): string[] {
  const folders = [...new Set(g.files.map(partOf))].filter((p) => p === 'commands' || !p.endsWith('.ts')).sort();
  const parts = new Set(g.files.map(partOf));
  const actual = new Map<string, Set<string>>();
  for (const [from, tos] of g.edges) {
    for (const to of tos) {
      const a = partOf(from);
      const b = partOf(to);
      if (a !== b) actual.set(a, (actual.get(a) ?? new Set()).add(b));
    }
  }
  const out: string[] = [];
  for (const part of folders) {
    const declaring = g.files
      .filter((f) => partOf(f) === part)
      .map((f) => ({ f, lines: readFileSync(join(root, f), 'utf8').split('\n') }))
      .filter(({ lines }) => lines.some((l) => l.startsWith('// May import:')));
    if (declaring.length !== 1) {
      out.push(
        declaring.length === 0
          ? `${part}: no file says what it may import (a '// May import: ...' line in its main file's first paragraph)`
          : `${part}: '// May import:' in ${declaring.length} files (${declaring.map((d) => d.f).join(', ')}); keep one`,
      );
      continue;
    }
    const { f, lines } = declaring[0]!;
    const at = lines.findIndex((l) => l.startsWith('// May import:'));
    let text = lines[at]!.slice('// May import:'.length);
    for (let i = at + 1; lines[i]?.startsWith('//   '); i++) text += ` ${lines[i]!.slice(2)}`;
    const names = text
      .trim()
      .replace(/\.$/, '')
      .split(/,\s*/)
      .map((n) => n.trim())
      .filter((n) => n && n !== 'nothing');
    const declared = new Set(names.map((n) => (n === 'commands' ? n : `src/${n}`)));
    for (const n of declared) if (!parts.has(n)) out.push(`${f}: may import '${n}', which is no part of the bot`);
    for (const b of [...(actual.get(part) ?? [])].sort()) {
      if (!declared.has(b)) out.push(`${f}: ${part} imports ${b}, which its '// May import:' line does not list`);
    }
  }
  return out;
}

/**
 * Per folder (src/x, src/x/y), the exported functions that take the whole `Engine` as a parameter (typed `Engine`,
 * not a `Pick<Engine, ...>` or a named context). A part outside the lifecycle core names what it touches in its
 * signature; test/house/imports.test.ts holds each folder to a ceiling so the count only goes down.
 * Returns folder -> the functions' names, `file:name`.
 */
export function wholeEngineExports(g: ImportGraph, root = ROOT): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const takesEngine = (params: ts.NodeArray<ts.ParameterDeclaration>) =>
    params.some(
      (p) =>
        p.type &&
        ts.isTypeReferenceNode(p.type) &&
        ts.isIdentifier(p.type.typeName) &&
        p.type.typeName.text === 'Engine',
    );
  const exported = (n: ts.Node) =>
    ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const file of g.files) {
    const text = readFileSync(join(root, file), 'utf8');
    if (!/\bEngine\b/.test(text)) continue;
    const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const names: string[] = [];
    for (const st of src.statements) {
      if (!exported(st)) continue;
      if (ts.isFunctionDeclaration(st) && takesEngine(st.parameters)) names.push(st.name?.text ?? 'default');
      if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) {
          const init = d.initializer;
          if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) && takesEngine(init.parameters))
            names.push(ts.isIdentifier(d.name) ? d.name.text : '?');
        }
      }
    }
    if (names.length) {
      const folder = dirname(file);
      out.set(folder, [...(out.get(folder) ?? []), ...names.map((n) => `${file}:${n}`)]);
    }
  }
  return out;
}

export function describeCycle(kind: 'file' | 'part', c: Cycle): string {
  const head = `${kind} cycle: ${c.path.join(' -> ')}`;
  const members = c.members.length > c.path.length - 1 ? `\n  all in the cycle: ${c.members.join(', ')}` : '';
  const because = c.because?.length ? `\n  through: ${c.because.join('; ')}` : '';
  const both = c.bothWays?.length && c.members.length > 2 ? `\n  both ways: ${c.bothWays.join(', ')}` : '';
  return head + members + because + both;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const g = importGraph();
  const lines = [
    ...g.unresolved.map((u) => `unresolved import: ${u}`),
    ...partCycles(g).map((c) => describeCycle('part', c)),
    ...fileCycles(g).map((c) => describeCycle('file', c)),
    ...sqliteOutsideLedger(g).map((s) => `SQLite outside the ledger: ${s}`),
    ...undeclaredImports(g),
  ];
  console.log(lines.length ? lines.join('\n') : `${g.files.length} files: no cycles, SQLite only in src/ledger`);
  const whole = [...wholeEngineExports(g)].map(([folder, fns]) => `${folder} ${fns.length}`);
  console.log(`exported functions taking the whole Engine, per folder: ${whole.join(', ') || 'none'}`);
  process.exitCode = lines.length ? 1 : 0;
}
