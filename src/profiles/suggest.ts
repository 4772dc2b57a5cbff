// "Did you mean" for misspelt keys, values and profile names. Optimal-string-alignment distance, so a swapped pair of
// letters (`flashmla_sprase`) counts as one edit, like the typo it is.

export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i]!;
      const prev = d[i - 1]!;
      let best = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      row[j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

// `model-path`, `modelPath` and `MODEL_PATH` all mean `model_path`; compare in one spelling first.
function normalise(s: string): string {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[-\s]/g, '_');
}

/** The closest candidate, if it is close enough to be the likely intent. */
export function closest(input: string, candidates: readonly string[]): string | undefined {
  const norm = normalise(input);
  const exact = candidates.find((c) => normalise(c) === norm);
  if (exact !== undefined) return exact;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const dist = editDistance(norm, normalise(c));
    if (dist < bestDistance) {
      best = c;
      bestDistance = dist;
    }
  }
  const limit = Math.max(2, Math.floor(norm.length / 3));
  return bestDistance <= limit ? best : undefined;
}

/** `did you mean 'x'? ` or nothing; the caller appends the list of valid values. */
export function didYouMean(input: string, candidates: readonly string[]): string {
  const c = closest(input, candidates);
  return c === undefined ? '' : `did you mean '${c}'? `;
}
