// The house rules over the import graph (scripts/imports.ts): dependencies between parts point one way, files do
// not import each other in a circle. A new cycle fails here, named with the imports that make it.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeCycle,
  fileCycles,
  importGraph,
  partCycles,
  partOf,
  sqliteOutsideLedger,
  undeclaredImports,
  wholeEngineExports,
} from '../../scripts/imports.ts';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'glm-imports-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the import check', () => {
  it('finds part and file cycles through type imports, re-exports and import(), and names them', () => {
    const root = tree({
      'src/a/one.ts': "import type { B } from '../b/two.ts';\nexport type A = B;\n",
      'src/b/two.ts': "export { three } from './three.ts';\nexport type B = string;\n",
      'src/b/three.ts': "export const three = () => import('../a/one.ts');\n",
      'src/c/solo.ts': "import { three } from '../b/three.ts';\nimport Database from 'better-sqlite3';\n",
      'commands/x.ts': "import type { A } from '../src/a/one.ts';\n",
    });
    const g = importGraph(root);
    expect(g.unresolved).toEqual([]);
    expect(g.packages.get('src/c/solo.ts')).toEqual(new Set(['better-sqlite3']));
    const parts = partCycles(g);
    expect(parts.map((c) => c.members)).toEqual([['src/a', 'src/b']]);
    expect(describeCycle('part', parts[0]!)).toBe(
      'part cycle: src/a -> src/b -> src/a\n  through: src/a/one.ts -> src/b/two.ts; src/b/three.ts -> src/a/one.ts',
    );
    const files = fileCycles(g);
    expect(files.map((c) => c.path)).toEqual([['src/a/one.ts', 'src/b/two.ts', 'src/b/three.ts', 'src/a/one.ts']]);
  });

  it('names every file outside src/ledger that imports better-sqlite3 or prepares an SQL statement', () => {
    const root = tree({
      'src/ledger/db.ts': "import Database from 'better-sqlite3';\nexport const q = (db) => db.prepare('SELECT 1');\n",
      'src/smoke/store.ts':
        "import type { Db } from '../ledger/db.ts';\nexport const f = (db: Db) => db.prepare('SELECT 1');\n",
      'src/x/raw.ts': "import Database from 'better-sqlite3';\n",
      // Not SQL: another method named prepare (HostPool.prepare resolves hosts).
      'src/y/pool.ts': "export const p = (pool) => pool.prepare(['a', 'b']);\n",
    });
    expect(sqliteOutsideLedger(importGraph(root), root)).toEqual([
      'src/smoke/store.ts:2: calls .prepare(',
      'src/x/raw.ts: imports better-sqlite3',
    ]);
  });

  it('counts, per folder, the exported functions that take the whole Engine (not a Pick or a named context)', () => {
    const root = tree({
      'src/lifecycle/engine.ts': 'export interface Engine { clock: number; log: string }\n',
      'src/a/whole.ts':
        "import type { Engine } from '../lifecycle/engine.ts';\n" +
        'export function one(engine: Engine, n: number) { return n; }\n' +
        'export const two = async (x: number, engine: Engine) => x;\n' +
        'function local(engine: Engine) { return engine; }\n' +
        "export function narrow(engine: Pick<Engine, 'clock'>) { return engine.clock; }\n",
      'src/a/deep/ctx.ts':
        "import type { Engine } from '../../lifecycle/engine.ts';\n" +
        "export type Ctx = Pick<Engine, 'log'>;\nexport function uses(c: Ctx, e: Engine) { return [c, e]; }\n",
      'src/b/none.ts': 'export function free(x: number) { return x; }\n',
    });
    expect(Object.fromEntries(wholeEngineExports(importGraph(root), root))).toEqual({
      'src/a': ['src/a/whole.ts:one', 'src/a/whole.ts:two'],
      'src/a/deep': ['src/a/deep/ctx.ts:uses'],
    });
  });

  it("holds each folder to its main file's '// May import:' line", () => {
    const root = tree({
      'src/a/main.ts': "// Part src/a: owns a.\n// May import: b,\n//   errors.ts.\nimport { b } from '../b/b.ts';\n",
      'src/a/more.ts': "import { c } from '../c/c.ts';\nimport { E } from '../errors.ts';\n",
      'src/b/b.ts': '// May import: gone.\nexport const b = 1;\n',
      'src/c/c.ts': 'export const c = 1;\n',
      'src/errors.ts': 'export const E = 1;\n',
    });
    expect(undeclaredImports(importGraph(root), root)).toEqual([
      "src/a/main.ts: src/a imports src/c, which its '// May import:' line does not list",
      "src/b/b.ts: may import 'src/gone', which is no part of the bot",
      "src/c: no file says what it may import (a '// May import: ...' line in its main file's first paragraph)",
    ]);
  });

  it('reports a relative import that names no file (a broken graph would hide cycles)', () => {
    const g = importGraph(tree({ 'src/a/one.ts': "import { gone } from './gone.ts';\n" }));
    expect(g.unresolved).toEqual(["src/a/one.ts: './gone.ts'"]);
  });

  it('counts a file directly in src/ as a part of its own, and commands/ as one part', () => {
    expect(partOf('src/errors.ts')).toBe('src/errors.ts');
    expect(partOf('src/lifecycle/slurm/cli.ts')).toBe('src/lifecycle');
    expect(partOf('commands/launch.ts')).toBe('commands');
  });
});

describe('the bot itself', () => {
  const g = importGraph();

  it('resolves every relative import of src/ and commands/', () => {
    expect(g.files.length).toBeGreaterThan(100);
    expect(g.unresolved).toEqual([]);
  });

  it('has no import cycle between parts (src/<folder>, commands/, a file in src/), type imports included', () => {
    expect(partCycles(g).map((c) => describeCycle('part', c))).toEqual([]);
  });

  it('has no import cycle between files', () => {
    expect(fileCycles(g).map((c) => describeCycle('file', c))).toEqual([]);
  });

  it("imports in each folder only what its main file's '// May import:' line lists", () => {
    expect(undeclaredImports(g)).toEqual([]);
  });

  it('touches SQLite only in src/ledger: no other file imports better-sqlite3 or calls .prepare(', () => {
    expect(sqliteOutsideLedger(g)).toEqual([]);
  });

  // Parts outside the lifecycle core say in their signatures what they touch (a Pick<Engine, ...> or a named
  // context next to the function). Each folder's count of exported functions still taking the whole Engine may only
  // go down: lower a figure when you narrow one; a folder not listed may take none.
  const WHOLE_ENGINE_CEILING: Record<string, number> = {
    'src/autopilot': 2,
    'src/fleet': 1,
    'src/lifecycle': 13,
    'src/lifecycle/launch': 12,
    'src/smoke': 1,
  };

  it('keeps each folder at or under its count of exported functions taking the whole Engine', () => {
    const over = [...wholeEngineExports(g)]
      .filter(([folder, fns]) => fns.length > (WHOLE_ENGINE_CEILING[folder] ?? 0))
      .map(([folder, fns]) => `${folder}: ${fns.length} > ${WHOLE_ENGINE_CEILING[folder] ?? 0}: ${fns.join(', ')}`);
    expect(over).toEqual([]);
  });
});
