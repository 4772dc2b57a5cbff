// Launch events as text lines for a person (terminal now; the Slack face renders its own blocks).
import { duration } from '../format/table.ts';
import { attemptWhere } from '../ledger/attempts.ts';
import type { Diagnosis } from '../logs/diagnosis.ts';
import type { LaunchEvent } from './launch/types.ts';

export function crashText(d: Diagnosis): string[] {
  const lines = [
    `  class: ${d.category}   phase: ${d.phase}${d.rank !== null ? `   rank: TP${d.rank}` : ''}`,
    `  ${d.summary}`,
  ];
  if (d.evidence.length > 0) {
    lines.push('  root log lines:');
    for (const e of d.evidence.slice(0, 6)) lines.push(`    ${String(e.line).padStart(6)}: ${e.text.slice(0, 300)}`);
  }
  return lines;
}

export function eventText(e: LaunchEvent, simulated: boolean): string {
  const sim = simulated ? ' [SIMULATED stand-in]' : '';
  switch (e.kind) {
    case 'command':
      return `command: ${e.commandLine}${e.dialectNote ? `\n  note: ${e.dialectNote}` : ''}`;
    case 'started':
      return `attempt #${e.attempt.id}: ${e.attempt.profile} started on ${attemptWhere(e.attempt)} (pgid ${e.attempt.pgid}, log ${e.attempt.logPath})${sim}`;
    case 'milestone':
      return `  ${e.text}`;
    case 'ready':
      return `attempt #${e.attempt.id}: READY in ${duration(e.seconds * 1000)} on ${e.attempt.host}:${e.attempt.port}${sim}`;
    case 'stopped':
      return e.text;
    case 'failed':
      return [
        `attempt #${e.attempt.id}: ${e.outcome === 'exited' ? 'EXITED' : e.outcome === 'hang' ? 'HUNG (still running)' : 'CRASHED'} (${e.outcome}${e.exitCode !== null ? `, exit ${e.exitCode}` : ''}) on ${attemptWhere(e.attempt)}${sim}`,
        ...crashText(e.diagnosis),
      ].join('\n');
  }
}
