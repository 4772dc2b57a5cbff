// "Did you mean ...?" for every misspelt name the bot is given: commands, options, config keys, host names, profile
// names, profile fields and values, template variables. One function, so the terminal, Slack, the config and the
// profiles suggest the same name for the same typo.

/** Edit distance counting a swap of two neighbouring letters as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

// `model-path`, `modelPath`, `MODEL_PATH` and `Model Path` all mean `model_path`; compare in one spelling.
function normalise(s: string): string {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[-\s]/g, '_');
}

/**
 * The closest candidate, if it is close enough to be a typo: the same name in another spelling, else one edit for
 * short names and a third of the length for longer ones (two edits on a five-letter word suggest unrelated words:
 * `bogus` is not `logs`).
 */
export function closest(input: string, candidates: readonly string[]): string | undefined {
  const norm = normalise(input);
  const same = candidates.find((c) => normalise(c) === norm);
  if (same !== undefined) return same;
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = editDistance(norm, normalise(c));
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(norm.length / 3)) ? best : undefined;
}

/** `did you mean 'x'? ` or nothing; the caller appends the list of valid values. */
export function didYouMean(input: string, candidates: readonly string[]): string {
  const c = closest(input, candidates);
  return c === undefined ? '' : `did you mean '${c}'? `;
}
