// How `next` reads in a terminal or a chat: the crash it answers, then one line per suggestion (the variant as
// `launch` would take it) with its reason, then what was left out because it was tried already.
import { describeOverrides } from '../profiles/variant.ts';
import type { Advice } from './advise.ts';

export function adviceText(a: Advice): string {
  const lines: string[] = [];
  const arch = a.arch ? ` on ${a.arch}` : ' (GPU architecture unknown: no environment captured for it)';
  lines.push(
    `After attempt #${a.crash.attemptId} (${a.crash.profile}): ${a.crash.category} during ${a.crash.phase}${arch}; variants of ${a.base.name}:`,
  );
  if (a.suggestions.length === 0) {
    lines.push('  nothing new to suggest: every change the catalog knows for this crash was tried or does not apply');
  }
  a.suggestions.forEach((s, i) => {
    const variant = `${s.base} --set ${describeOverrides(s.overrides)}`;
    lines.push(`  next:${i + 1}  ${s.existing ? `${s.existing} (the profile that is ${variant})` : variant}`);
    lines.push(`          ${s.reason}${s.ref ? ` (${s.ref})` : ''}`);
  });
  const tried = a.skipped.filter((s) => s.why.startsWith('already tried'));
  if (tried.length) {
    lines.push('Not suggested again:');
    for (const s of tried) lines.push(`  ${a.base.name} --set ${describeOverrides(s.overrides)}: ${s.why}`);
  }
  const invalid = a.skipped.filter((s) => !s.why.startsWith('already tried'));
  for (const s of invalid) lines.push(`Catalog rule of ${s.signatureId} skipped: ${s.why}`);
  if (a.suggestions.length) lines.push('Launch one with: launch next:N');
  return lines.join('\n');
}
