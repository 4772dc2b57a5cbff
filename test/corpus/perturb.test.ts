// Property test: the corpus's dev cases perturbed the way real logs differ from one another (stacked wrappers, rank
// and launcher labels, `\r` progress bars, CRLF, another rank's lines interleaved, an excerpt cut at its start) keep
// their class and root line. Only dev cases are read: the test split stays unseen (corpus/README.md).
import { describe, expect, it } from 'vitest';
import { loadCorpus } from '../../src/corpus/cases.ts';
import { diagnoseText, loadCatalog } from '../../src/logs/classify/index.ts';
import { displayText } from '../../src/logs/classify/lineinfo.ts';
import { CAPTURE_PROGRESS } from '../../src/logs/classify/phase.ts';
import { parseMilestone } from '../../src/logs/milestones.ts';

const dev = loadCorpus().cases.filter((c) => c.split === 'dev');
const catalog = loadCatalog();

/** `root`: the unperturbed answer's root line (as displayed), which no cut may take away. */
type Perturb = (lines: string[], root: string | null) => string[];

/**
 * Never cut into what the answer rests on, which no reader could recover: the root line, a frame (its function may
 * be what names the class; an excerpt may already start inside one, at its path), a milestone (it can be what
 * places the failure in graph capture), or `Exception ignored in:`, the one line that says the traceback after it is not fatal.
 * The root is looked for in the raw line too: a line that holds several (a JSON record's escaped newlines) is longer
 * than what `shown` keeps of it.
 */
const holdsRoot = (line: string | undefined, root: string | null) =>
  line !== undefined &&
  ((root !== null && (shown(line).includes(root.slice(0, 60)) || line.includes(root.slice(0, 60)))) ||
    line.includes('Exception ignored in') ||
    /\bFile "|\.py", line \d+, in /.test(line) ||
    parseMilestone(line) !== null ||
    CAPTURE_PROGRESS.test(line));
const cutHalf = (l: string) => l.slice(Math.floor(l.length / 2));

/** Another rank's ordinary record lines, as SGLang and torch.distributed print them, between every few lines. */
const OTHER_RANK = [
  '[2025-11-05 12:19:32 TP7] Using default MoE kernel config. Performance might be sub-optimal!',
  '[2025-11-05 12:19:32 DP0 TP6 EP6] Cache flushed successfully!',
];

const PERTURBATIONS: Array<[string, Perturb]> = [
  ['docker compose + Ray + vLLM logger, stacked', (ls) => ls.map((l) => `sglang-1  | (RayWorkerWrapper pid=7) ${l}`)],
  ['srun --label', (ls) => ls.map((l) => (l === '' ? l : `3: ${l}`))],
  ['torchrun --tee label', (ls) => ls.map((l) => `[default0]:${l}`)],
  // Kubernetes log tools: stern's `<pod> <container> ` for a Deployment's pod, `kubectl logs --prefix`
  ['stern: pod and container', (ls) => ls.map((l) => `ms-pd-decode-6c8f9c4df6-vh88z vllm ${l}`)],
  ['kubectl logs --prefix', (ls) => ls.map((l) => `[pod/sglang-decode-7cfd7bf68f-nk5kr/sglang] ${l}`)],
  ['CRLF line ends', (ls) => ls.map((l) => `${l}\r`)],
  // tqdm redraws its bar with `\r`; the bar's states end up in front of the next line's text.
  ['a \\r progress bar in front of lines', (ls) => ls.map((l) => (l === '' ? l : ` 42%|####2     | 8/19\r${l}`))],
  [
    "another rank's lines interleaved",
    (ls) => ls.flatMap((l, i) => (i % 4 === 3 ? [l, OTHER_RANK[(i >> 2) % OTHER_RANK.length] as string] : [l])),
  ],
  // Excerpts start where the copier's selection did: mid-line, or a line later.
  [
    'cut at its start, mid-line',
    (ls, root) => (holdsRoot(ls[0], root) ? ls : [cutHalf(ls[0] as string), ...ls.slice(1)]),
  ],
  ['cut at its start, a line lost', (ls, root) => (ls.length < 2 || holdsRoot(ls[0], root) ? ls : ls.slice(1))],
  // Pasted into an issue: the reporter's words around a fenced block.
  [
    "a reporter's prose and a Markdown fence around it",
    (ls) => ['When I start the server I get this error:', '', '```log', ...ls, '```', '', 'Any idea how to fix this?'],
  ],
];

/**
 * A line as a person reads it: without the wrappers and log prefix a perturbation put in front of it; its first 200
 * characters (a long line is shown cut, at a length that counts the wrappers). Read twice: a wrapper that a space
 * separates from the next one is only reached once the space is trimmed.
 */
const shown = (line: string) => displayText(displayText(line)).slice(0, 200);

const answer = (log: string) => {
  const c = diagnoseText(log, { catalog }).classification;
  const first = c.evidence[0]?.text;
  return { category: c.category, root: first === undefined ? null : shown(first) };
};

/** Known limits, by perturbation and case: what no reader could tell once the perturbation took it away. */
const PASTED_LINE_NUMBERS =
  "its lines open with the paste's own line numbers (`[80746] `), which the joined-line splitter takes off only where the rank label after them starts the line; behind a Kubernetes label they stay, and the root (the same line, the same class) is shown with them";
const KNOWN_LIMITS: Record<string, Record<string, string>> = {
  'stern: pod and container': { 'c-llamafactory-lineno-collective-timeout-7396': PASTED_LINE_NUMBERS },
  'kubectl logs --prefix': { 'c-llamafactory-lineno-collective-timeout-7396': PASTED_LINE_NUMBERS },
  'cut at its start, mid-line': {
    'r-import-c-abi3-storageimpl-collect-env-version-tuple':
      "the first line's `WARNING` level is what makes its ImportError a notice vLLM went on from, before the traceback whose ImportError ended the program; cut inside that line, the rest is an undefined symbol stated with no level, which stays the root",
    'h-illegal-ascend-aivec-mpu-address-invalid-leval-12464':
      "the first line's c10 prefix (`[W1031 21:35:04.8 compiler_depend.ts:57]`) is what makes `Warning: EZ9999: Inner Error!` a warning; cut inside that prefix, the rest reads as an error record before the device's own",
  },
};

describe('dev cases keep class and root line under real-world perturbations', () => {
  it.each(PERTURBATIONS)('%s', (name, perturb) => {
    const differ: string[] = [];
    for (const c of dev) {
      if (KNOWN_LIMITS[name]?.[c.id]) continue;
      const lines = c.log.replace(/\n$/, '').split('\n');
      const want = answer(c.log);
      const got = answer(`${perturb(lines, want.root).join('\n')}\n`);
      if (got.category !== want.category || got.root !== want.root)
        differ.push(`${c.id}: ${JSON.stringify(want)} -> ${JSON.stringify(got)}`);
    }
    expect(differ).toEqual([]);
  });
});
