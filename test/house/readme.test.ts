// The README as a newcomer meets it, checked against the code: every command line it shows parses as the bot reads
// it, the commands table names every command and every flag each one takes (and no flag it does not), every file it
// names exists, and every config key and environment variable the bot reads is named. (The YAML examples load:
// test/config/readme.test.ts; the scrape config: test/metrics/dashboard.test.ts.)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { COMMANDS } from '../../commands/index.ts';
import { PACKAGE_ROOT } from '../../src/config/load.ts';
import { ConfigSchema } from '../../src/config/schema.ts';
import { createDispatch } from '../../src/runtime/registry.ts';

const README = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
const spans = [...README.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
const shLines = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
  m[1]!
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter(Boolean),
);

/** The bot's own command lines the README shows: `/glm X`, `npx glm X`, `glm X` (env assignments in front dropped). */
function commandLines(): string[] {
  const out: string[] = [];
  for (const s of [...spans, ...shLines]) {
    const m = /^(?:[A-Z_]+=\S*\s+)*(?:\/glm|npx glm|glm)(?:\s+(.*))?$/.exec(s.replace(/\s+&&.*$/, ''));
    if (m) out.push((m[1] ?? '').trim());
  }
  return out;
}

/** The commands table: each row's command names (first word of each code span of its first cell) and its text. */
function tableRows(): { names: string[]; synopsis: string; text: string }[] {
  const section = README.slice(README.indexOf('## Commands'), README.indexOf('## Configuration'));
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => {
      const [first = '', ...rest] = l.slice(1).split(/(?<!\\)\|/);
      const synopsis = first.replace(/\\\|/g, '|');
      const names = [...synopsis.matchAll(/`([a-z-]+)/g)].map((m) => m[1]!);
      return { names, synopsis, text: rest.join('|') };
    });
}

const flags = (text: string) => new Set([...text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]));

/** Every key the config schema has, at any depth. */
function configKeys(schema: z.ZodType): string[] {
  const def = (schema as unknown as { def: Record<string, unknown> }).def;
  if (schema instanceof z.ZodObject)
    return Object.entries(schema.shape).flatMap(([k, v]) => [k, ...configKeys(v as z.ZodType)]);
  for (const inner of ['innerType', 'element', 'valueType', 'in'])
    if (def[inner]) return configKeys(def[inner] as z.ZodType);
  if (Array.isArray(def.options)) return (def.options as z.ZodType[]).flatMap(configKeys);
  return [];
}

/** The repository folders (or files) a source imports by a relative path: src/lifecycle, commands, src/app.ts, ... */
function importsOf(part: string): string[] {
  const at = join(PACKAGE_ROOT, part);
  const files = part.endsWith('.ts')
    ? [part]
    : readdirSync(at, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.ts'))
        .map((f) => join(part, f));
  return files.flatMap((f) =>
    [...readFileSync(join(PACKAGE_ROOT, f), 'utf8').matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)].map((m) =>
      relative(PACKAGE_ROOT, resolve(PACKAGE_ROOT, dirname(f), m[1]!)),
    ),
  );
}

describe('README as a newcomer reads it', () => {
  it('every command line it shows parses with the registry the bot uses', () => {
    const dispatch = createDispatch(COMMANDS);
    const lines = commandLines().filter((l) => !/^slack\b/.test(l) && !/[A-Z]{2,}\.\.\.|\.\.\.$/.test(l));
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(() => dispatch.parse(line), `README: glm ${line}`).not.toThrow();
  });

  it('the commands table has a row for every command, naming every flag it takes and no other', () => {
    const rows = tableRows();
    const named = new Set(rows.flatMap((r) => r.names));
    const problems: string[] = [];
    for (const def of COMMANDS) {
      if (def.name === 'help') continue;
      const row = rows.find((r) => r.names.includes(def.name));
      if (!row) {
        problems.push(`no row for ${def.name}`);
        continue;
      }
      const takes = flags(def.usage);
      // The row's own synopsis for this command (one row may list several); --json is said once for all.
      const own = [...row.synopsis.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).find((s) => s.split(' ')[0] === def.name);
      for (const f of flags(own ?? '')) if (!takes.has(f)) problems.push(`${def.name} ${f}: no such flag`);
      const said = flags(row.synopsis + row.text);
      for (const f of takes) if (f !== '--json' && !said.has(f)) problems.push(`${def.name} ${f}: not named`);
    }
    if (!named.has('slack')) problems.push('no row for slack');
    expect(problems, 'README commands table').toEqual([]);
  });

  it('every file and folder of the repository it names exists', () => {
    const top = new Set(readdirSync(PACKAGE_ROOT));
    const inTree = (name: string) =>
      ['src', 'commands'].some((d) =>
        readdirSync(join(PACKAGE_ROOT, d), { recursive: true }).some(
          (p) => String(p).endsWith(`/${name}`) || p === name,
        ),
      );
    let checked = 0;
    for (const s of new Set(spans)) {
      const path = s.replace(/[:\s].*$/, '');
      if (/[*?]/.test(path) || path.startsWith('~') || path.startsWith('/')) continue;
      if (path.includes('/') && top.has(path.split('/')[0]!)) {
        checked++;
        expect(existsSync(join(PACKAGE_ROOT, path)), `README names ${path}`).toBe(true);
      } else if (/^[a-z0-9-]+\.ts$/.test(path)) {
        checked++;
        expect(inTree(path), `README names ${path}`).toBe(true);
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it("the parts diagram's arrows are imports: each part it names imports the part an arrow points to", () => {
    const chart = /```mermaid\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
    const parts = new Map<string, string[]>();
    for (const m of chart.matchAll(/(\w+)\["([^"<]+)/g))
      parts.set(
        m[1]!,
        m[2]!.split(', ').map((p) => p.trim().replace(/\/$/, '')),
      );
    const edges = [...chart.matchAll(/^\s*(\w+)(?:\[[^\]]*\])? --> (\w+)/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(edges.length).toBeGreaterThan(15);
    const wrong: string[] = [];
    for (const [from, to] of edges) {
      const targets = parts.get(to) ?? [];
      for (const part of parts.get(from) ?? []) {
        const reaches = importsOf(part).some((i) => targets.some((t) => i === t || i.startsWith(`${t}/`)));
        if (!reaches) wrong.push(`${part} --> ${targets.join(', ')}`);
      }
    }
    expect(wrong, 'README diagram arrows that are no import').toEqual([]);
  });

  it('names every config key the schema has', () => {
    const keys = [...new Set(configKeys(ConfigSchema))];
    expect(keys).toContain('stop_grace_s');
    const missing = keys.filter((k) => !new RegExp(`(?<![\\w-])${k}(?![\\w-])`).test(README));
    expect(missing, 'config keys the README does not name').toEqual([]);
  });

  it('names every environment variable the bot reads', () => {
    const sources = ['src', 'bin', 'commands'].flatMap((d) =>
      readdirSync(join(PACKAGE_ROOT, d), { recursive: true })
        .map(String)
        .filter((p) => /\.(ts|js)$/.test(p))
        .map((p) => readFileSync(join(PACKAGE_ROOT, d, p), 'utf8')),
    );
    const read = new Set(
      sources.flatMap((t) => [...t.matchAll(/\benv(?:\.|\[')((?:GLM|SLACK|XDG)_[A-Z_]+)/g)].map((m) => m[1]!)),
    );
    expect(read).toContain('GLM_CONFIG');
    const missing = [...read].filter((v) => !README.includes(v));
    expect(missing, 'environment variables the README does not name').toEqual([]);
  });
});
