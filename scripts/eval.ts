// `npm run eval`: the classifier measured on the real crash-log corpus (corpus/), dev and test reported separately.
// Tune on dev (`--split dev --wrong` lists what dev gets wrong); report test. See corpus/README.md for the protocol.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CorpusCase, loadCorpus } from '../src/corpus/cases.ts';
import { judge, type LabelledCase, renderReport, report } from '../src/corpus/evaluate.ts';
import { buildKnownIndex, knownEntries } from '../src/corpus/similar.ts';
import { diagnoseText } from '../src/logs/classify/index.ts';
import { EXPECTED, FIXTURE_DIR } from '../test/logs/fixtures.ts';

const args = process.argv.slice(2);
const only = args.includes('--split') ? args[args.indexOf('--split') + 1] : null;
const showWrong = args.includes('--wrong') || only === null;
// `--prefix e-` keeps only the cases whose file stem starts with it (a batch collected after the rules were tuned,
// measured on its own).
const prefix = args.includes('--prefix') ? (args[args.indexOf('--prefix') + 1] ?? '') : '';

/** The original fixtures join dev (their root lines are given as text in test/logs/fixtures.ts). */
function fixtures(): LabelledCase[] {
  return Object.entries(EXPECTED).map(([name, e]) => ({
    id: `fixture:${name}`,
    source: name,
    kind: e.category === 'none' ? 'healthy' : 'crash',
    category: e.category,
    phase: e.phase,
    root: e.rootText ?? null,
    log: readFileSync(join(FIXTURE_DIR, name), 'utf8'),
  }));
}

const { cases, problems } = loadCorpus();
const bySplit = (s: 'dev' | 'test'): LabelledCase[] => [
  ...(s === 'dev' && !prefix ? fixtures() : []),
  ...cases.filter((c: CorpusCase) => c.split === s && c.id.startsWith(prefix)),
];
const lines: string[] = [];
const projects = new Map<string, number>();
for (const c of cases) projects.set(c.project, (projects.get(c.project) ?? 0) + 1);
const sources = new Set(cases.map((c) => c.source));
lines.push(
  `# corpus: ${cases.length} cases from ${sources.size} sources (${[...projects.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([p, n]) => `${p} ${n}`)
    .join(', ')}), plus ${Object.keys(EXPECTED).length} fixtures in dev`,
);
if (problems.length > 0) lines.push(`unreadable cases (${problems.length}):`, ...problems.map((p) => `- ${p}`));
for (const split of ['dev', 'test'] as const) {
  if (only && only !== split) continue;
  const results = bySplit(split).map((c) => judge(c, diagnoseText(c.log)));
  lines.push('', renderReport(split, report(results), { showWrong }));
}
process.stdout.write(`${lines.join('\n')}\n`);
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && problems.length > 0) process.exitCode = 1;

// Known upstream reports: with each case's own source left out of the index, how often one of the three most similar
// reports shares its class (the class a person would be pointed to).
{
  const index = buildKnownIndex(knownEntries(cases));
  for (const split of ['dev', 'test'] as const) {
    if (only && only !== split) continue;
    const crashes = cases.filter((c) => c.split === split && c.kind === 'crash');
    let shared = 0;
    let any = 0;
    for (const c of crashes) {
      const d = diagnoseText(c.log);
      const root = d.classification.evidence[0]?.text ?? '';
      const top = index.similar(root, { exclude: c.source });
      if (top.length > 0) any++;
      if (top.some((t) => t.category === c.category)) shared++;
    }
    const pct = (a: number) => `${a}/${crashes.length} (${((100 * a) / Math.max(1, crashes.length)).toFixed(1)}%)`;
    process.stdout.write(
      `\nknown upstream (${split}, own source left out): a report shown for ${pct(any)}, one of the top three shares the class for ${pct(shared)}\n`,
    );
  }
}
