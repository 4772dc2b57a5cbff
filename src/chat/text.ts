// Views as plain text (the terminal; Slack's notification fallback).
import { duration } from '../format/table.ts';
import type { ChatMessage, View } from './types.ts';

/** `seen 3 times; first in attempt #1` for a repeated crash, else ''. */
export function seenPhrase(v: Extract<View, { type: 'alert' }>): string {
  if (v.count <= 1) return '';
  const first =
    v.firstAttemptId !== undefined && v.firstAttemptId !== v.attemptId ? `; first in attempt #${v.firstAttemptId}` : '';
  return `seen ${v.count} times${first}`;
}

const seenText = (v: Extract<View, { type: 'alert' }>) => (v.count > 1 ? ` (${seenPhrase(v)})` : '');

export function viewText(v: View): string | undefined {
  if (v.type === 'report') {
    const links = v.links.filter((l) => l.text).map((l) => `${l.label}: ${l.text}`);
    return [
      `${v.verdict} ${v.title}${v.mention.length ? ` (on call: ${v.mention.join(', ')})` : ''}`,
      ...(v.facts.length ? [`  ${v.facts.join(' · ')}`] : []),
      ...links.map((l) => `  ${l}`),
      v.body,
    ].join('\n');
  }
  if (v.type === 'attempt') {
    return `attempt #${v.attemptId} ${v.profile} on ${v.host} by ${v.actor}: ${v.state}${v.detail ? ` (${v.detail})` : ''} [${duration(v.elapsedS * 1000)}]${v.simulated ? ' [SIMULATED]' : ''}`;
  }
  if (v.type === 'autopilot') {
    return [
      `autopilot run #${v.runId} ${v.profile} on ${v.host} by ${v.actor}: ${v.status}, ${v.phase} phase, launch ${v.launches} of ${v.budget}, ${duration(v.timeLeftS * 1000)} left`,
      `  now: ${v.current}`,
      `  best: ${v.best}`,
      ...(v.detail ? [`  ${v.detail}`] : []),
    ].join('\n');
  }
  if (v.type === 'alert') {
    const d = v.diagnosis;
    const out = [
      `CRASH ${d.category} during ${d.phase}: attempt #${v.attemptId} ${v.profile} on ${v.host} (launched by ${v.actor})${seenText(v)}`,
      `  ${d.summary}`,
    ];
    if (d.reason) out.push(`  why: ${d.reason}`);
    if (v.survivedBefore) out.push(`  ${v.survivedBefore}`);
    if (d.evidence.length) {
      out.push('  root lines:');
      for (const e of d.evidence.slice(0, 6)) out.push(`    ${String(e.line).padStart(6)}: ${e.text.slice(0, 240)}`);
    }
    if (v.flagChanges.length) {
      out.push(
        `  changed from ${v.comparedWith}: ${v.flagChanges.map((c) => `${c.flag} ${c.from} -> ${c.to}`).join(', ')}`,
      );
    }
    if (v.noComparison) out.push(`  what changed: ${v.noComparison}`);
    if (v.alreadyTried.length) {
      out.push(
        `  already tried for ${d.category}: ${v.alreadyTried.map((t) => `#${t.attemptId} ${t.profile}`).join(', ')}`,
      );
    }
    if (v.nextSteps.length) out.push(`  usual next steps: ${v.nextSteps.slice(0, 3).join('; ')}`);
    for (const k of v.known) out.push(`  looks like ${k.ref}: ${k.title} (${k.state})`);
    for (const x of v.excerpts) {
      out.push(
        `  findings: ${x.file}:${x.startLine}-${x.endLine}  ${x.headingPath.join(' > ')}${x.url ? `  ${x.url}` : ''}`,
      );
      for (const l of x.lines) out.push(`    > ${l}`);
    }
    return out.join('\n');
  }
  if (v.type === 'stopped') return `stopped by ${v.actor}: ${v.text}`;
  return undefined;
}

export function renderText(msg: ChatMessage): string {
  return (msg.view ? viewText(msg.view) : undefined) ?? msg.text;
}
