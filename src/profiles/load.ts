// Reads profiles/*.yaml into a ProfileSet. Every problem in every file is collected before anything is thrown, so a
// person fixes them in one pass.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { ConfigError, type Issue, UserError } from '../errors.ts';
import { didYouMean } from '../suggest.ts';
import { checkMerged } from './checks.ts';
import { at } from './issues.ts';
import { type Parsed, type ProfileSource, parseSource } from './parse.ts';
import { finish, type Layer, mergeLayers, type ResolvedProfile, toLayer } from './resolve.ts';

export type { ProfileSource } from './parse.ts';

export interface ProfileSet {
  /** Profile names, sorted. */
  names(): string[];
  has(name: string): boolean;
  /** Throws UserError "unknown profile 'x'" with a did-you-mean hint and the list of names. */
  get(name: string): ResolvedProfile;
}

export function loadProfiles(dir: string): ProfileSet {
  const abs = resolve(dir);
  const shown = basename(abs);
  let entries: string[];
  try {
    entries = readdirSync(abs).sort();
  } catch (err) {
    throw new ConfigError(shown, [
      { path: dir, message: `cannot read the profiles folder: ${(err as Error).message}` },
    ]);
  }
  const issues: Issue[] = [];
  const sources: ProfileSource[] = [];
  for (const entry of entries) {
    const label = `${shown}/${entry}`;
    if (entry.endsWith('.yml')) {
      issues.push({
        path: label,
        message: 'profiles must end in .yaml',
        fix: `rename it to ${entry.slice(0, -4)}.yaml`,
      });
      continue;
    }
    if (!entry.endsWith('.yaml')) continue;
    const file = join(abs, entry);
    sources.push({ name: entry.slice(0, -5), file, label, text: readFileSync(file, 'utf8') });
  }
  if (sources.length === 0 && issues.length === 0) {
    issues.push({ path: shown, message: 'no profiles (*.yaml) in this folder' });
  }
  return buildProfiles(sources, shown, issues);
}

/**
 * Each profile's extends chain (itself first). Profiles whose chain is broken are left out; each break is reported
 * once, at the file whose `extends` is wrong.
 */
function resolveChains(parsed: Map<string, Parsed>, names: string[], issues: Issue[]): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  for (const [name, p] of parsed) {
    const chain = [name];
    let cur = p;
    // An `extends` that failed validation leaves the chain unknown; checking the rest would invent problems.
    let broken = p.dropped.has('extends');
    while (cur.raw.extends !== undefined) {
      const parentName = cur.raw.extends;
      const parent = parsed.get(parentName);
      if (chain.includes(parentName)) {
        if (parentName === name) {
          issues.push({
            path: at(p.source.label, 'extends'),
            message: `cycle: ${[...chain, parentName].join(' -> ')}`,
            fix: 'make one profile in the cycle stop extending',
          });
        }
        broken = true;
        break;
      }
      if (!parent) {
        if (!names.includes(parentName) && cur === p) {
          issues.push({
            path: at(p.source.label, 'extends'),
            message: `unknown profile '${parentName}'`,
            fix: `${didYouMean(parentName, names)}profiles: ${names.join(', ')}`,
          });
        }
        broken = true;
        break;
      }
      chain.push(parentName);
      cur = parent;
      if (cur.dropped.has('extends')) {
        broken = true;
        break;
      }
    }
    if (!broken) chains.set(name, chain);
  }
  return chains;
}

/** Resolves and checks a set of profile sources; throws one ConfigError naming every problem. */
export function buildProfiles(sources: ProfileSource[], sourceName: string, earlier: Issue[] = []): ProfileSet {
  const issues = [...earlier];
  const parsed = new Map<string, Parsed>();
  for (const s of sources) {
    const p = parseSource(s, issues);
    if (p) parsed.set(s.name, p);
  }
  const names = [...new Set(sources.map((s) => s.name))].sort();

  const chains = resolveChains(parsed, names, issues);

  const layers = new Map<string, Layer>();
  const mergedIssues = new Map<string, Issue[]>();
  const resolved = new Map<string, ResolvedProfile>();
  for (const [name, chain] of chains) {
    const p = parsed.get(name)!;
    let layer: Layer = {};
    for (const n of [...chain].reverse()) layer = mergeLayers(layer, toLayer(parsed.get(n)!.raw));
    layers.set(name, layer);
    let found = checkMerged(p.source.label, layer);
    // A model_path that failed validation is not missing; its own problem is already reported.
    if (chain.some((n) => parsed.get(n)!.dropped.has('model_path'))) {
      found = found.filter((i) => !(i.path.endsWith(': model_path') && i.message === 'required'));
    }
    mergedIssues.set(name, found);
  }
  for (const [name, chain] of chains) {
    const p = parsed.get(name)!;
    const parentName = chain[1];
    // A problem inherited unchanged from the parent is the parent's to fix; report it there only.
    const parentLabel = parentName ? parsed.get(parentName)!.source.label : '';
    const inherited = new Set(
      (parentName ? (mergedIssues.get(parentName) ?? []) : []).map((i) => i.path.slice(parentLabel.length) + i.message),
    );
    const own = mergedIssues.get(name)!.filter((i) => !inherited.has(i.path.slice(p.source.label.length) + i.message));
    issues.push(...own);
    if (mergedIssues.get(name)!.length === 0 && chain.every((n) => parsed.get(n)!.ok)) {
      resolved.set(
        name,
        finish(layers.get(name)!, { name, description: p.raw.description, chain, file: p.source.file }),
      );
    }
  }

  if (issues.length > 0) {
    // Group by file (sort is stable, so each file keeps its own order of problems).
    const fileOf = (i: Issue) => i.path.split(/\.yaml\b/, 1)[0]!;
    issues.sort((a, b) => (fileOf(a) < fileOf(b) ? -1 : fileOf(a) > fileOf(b) ? 1 : 0));
    throw new ConfigError(sourceName, issues);
  }
  return makeSet(resolved);
}

function makeSet(profiles: Map<string, ResolvedProfile>): ProfileSet {
  const names = [...profiles.keys()].sort();
  return {
    names: () => [...names],
    has: (name) => profiles.has(name),
    get(name) {
      const p = profiles.get(name);
      if (p) return p;
      throw new UserError(`unknown profile '${name}'`, `${didYouMean(name, names)}profiles: ${names.join(', ')}`);
    },
  };
}
