// The one path from an error to a person: what went wrong and how to fix it. Unknown errors get a short id; the
// details go to the log, never to the chat.
import { randomBytes } from 'node:crypto';
import { ConfigError, formatIssues, NotAllowedError, RemoteError, UserError } from './errors.ts';
import type { Logger } from './logger.ts';
import { redactText } from './redact.ts';

/** Where the words are read: commands are named as they are typed there. */
export interface Face {
  origin: 'terminal' | 'slack' | 'scheduler';
  /** The interactive session and the Slack bot stay up; a one-shot `npx glm ...` does not. */
  longLived: boolean;
}

/** The interactive session's words: commands typed bare (`stop --attempt 3`). */
const SESSION: Face = { origin: 'terminal', longLived: true };

/** A command as a person types it on this face: `npx glm stop` in a shell, `/glm stop` in Slack, `stop` in a session. */
export function commandText(face: Face, words: string): string {
  if (face.origin === 'slack') return `/glm ${words}`;
  if (face.origin === 'terminal' && !face.longLived) return `npx glm ${words}`;
  return words;
}

/** The fix for a user error, worded for the face: its kind's advice, else its own hint. */
export function userErrorFix(e: UserError, face: Face = SESSION): string | undefined {
  const d = e.data;
  if (!d) return e.hint;
  const cmd = (words: string) => commandText(face, words);
  switch (d.kind) {
    case 'unknown-command':
      return `${d.suggestion ? `did you mean '${d.suggestion}'? ` : ''}${cmd('help')} lists the commands`;
    case 'gpus-reserved':
      return `wait for the run to end, or cancel it with: ${cmd(`autopilot --cancel --host ${d.host}`)} (see: ${cmd('autopilot --status')})`;
    case 'gpus-held':
      return `wait for it to end, stop it with: ${cmd(`stop --attempt ${d.holder}`)}, or launch on other GPUs (--gpus, or gpus: [...] in the profile)`;
    case 'port-taken':
      return `launch on another port (--port N), or stop it first with: ${cmd(`stop --attempt ${d.holder}`)}`;
    case 'command':
      return `${d.lead}: ${cmd(d.command)}${d.tail ?? ''}`;
  }
}

/** A refusal by the access policy (a Decision that does not allow), worded like every other refusal. */
export function describeRefusal(d: { reason: string; hint?: string | undefined }): string {
  return `not allowed: ${d.reason}${d.hint ? `\n  ${d.hint}` : ''}`;
}

export function describeError(e: unknown, log?: Logger, face: Face = SESSION): string {
  if (e instanceof UserError) {
    const fix = userErrorFix(e, face);
    const head = e instanceof NotAllowedError ? 'not allowed' : 'error';
    return redactText(`${head}: ${e.message}${fix ? `\n  ${fix}` : ''}`);
  }
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
