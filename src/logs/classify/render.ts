// Plain-text rendering of a diagnosis for `glm classify FILE` (the --json form is the Classification itself).

import type { Diagnosis } from './types.ts';

export function renderDiagnosis(
  d: Diagnosis,
  known: ReadonlyArray<{ ref: string; url: string; title: string; state: string }> = [],
): string {
  const c = d.classification;
  const lines = [
    c.summary,
    `category: ${c.category}   phase: ${c.phase}   confidence: ${c.confidence}`,
    `why: ${d.reason}`,
  ];
  if (c.rank !== null) lines.push(`rank: TP${c.rank}`);
  if (c.evidence.length > 0) {
    lines.push('evidence:');
    for (const e of c.evidence) lines.push(`  ${e.line}: ${e.text}`);
  }
  const s = d.signature;
  if (s) {
    lines.push(`meaning: ${s.meaning}`);
    if (s.nextSteps.length > 0) {
      lines.push('next steps:');
      for (const step of s.nextSteps) lines.push(`  - ${step}`);
    }
    if (s.upstream.length > 0) {
      lines.push('known upstream:');
      for (const u of s.upstream) lines.push(`  - ${u.title}${u.arch ? ` [${u.arch}]` : ''} ${u.url}`);
    }
  }
  for (const k of known) lines.push(`looks like ${k.ref}: ${k.title} (${k.state}) ${k.url}`);
  lines.push(`dedup key: ${c.dedupKey}`);
  return lines.join('\n');
}
