// The one path from an error to a person: what went wrong and how to fix it. Unknown errors get a short id; the
// details go to the log, never to the chat.
import { randomBytes } from 'node:crypto';
import { ConfigError, formatIssues, NotAllowedError, RemoteError, UserError } from './errors.ts';
import type { Logger } from './logger.ts';
import { redactText } from './redact.ts';

export function describeError(e: unknown, log?: Logger): string {
  if (e instanceof NotAllowedError) return redactText(`not allowed: ${e.message}${e.hint ? `\n  ${e.hint}` : ''}`);
  if (e instanceof UserError) return redactText(`error: ${e.message}${e.hint ? `\n  ${e.hint}` : ''}`);
  if (e instanceof ConfigError) {
    return redactText(
      `config error in ${e.source} (${e.issues.length} problem${e.issues.length === 1 ? '' : 's'}):\n${formatIssues(e.issues)}`,
    );
  }
  if (e instanceof RemoteError) {
    const d = e.details;
    const parts = [`error on host ${d.host}: ${e.message}`];
    if (d.exitCode !== undefined && d.exitCode !== null) parts.push(`  exit code: ${d.exitCode}`);
    if (d.stderrTail?.trim()) parts.push(`  stderr: ${d.stderrTail.trim().split('\n').slice(-5).join('\n          ')}`);
    if (d.hint) parts.push(`  fix: ${d.hint}`);
    return redactText(parts.join('\n'));
  }
  const id = randomBytes(4).toString('hex');
  log?.error({ err: e, errorId: id }, 'internal error');
  return `internal error (id ${id}): ${redactText(e instanceof Error ? e.message : String(e))}\n  details are in the bot's log under errorId ${id}`;
}
