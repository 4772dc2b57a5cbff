// The few kinds of error the bot speaks in. Every path from an error to a person goes through `describeError`
// (src/errors-render.ts), so a user sees what was wrong and how to fix it, never a stack trace.

export interface Issue {
  /** Dotted path into the input (`hosts.gpu1.port`, `profiles/glm5.yaml: kv_cache_dtype`). */
  path: string;
  message: string;
  /** How to fix it, when we know. */
  fix?: string;
}

/**
 * What a person can do about a user error, as data: the renderer (src/errors-render.ts) words it for the face it is
 * shown in, naming commands as they are typed there (`npx glm stop --attempt 3` in a shell, `/glm stop --attempt 3`
 * in Slack), so no part below the faces writes command advice into its errors.
 */
export type UserErrorKind =
  /** A command name the registry does not know, with the closest one. */
  | { kind: 'unknown-command'; suggestion?: string }
  /** GPUs an autopilot run holds between its trials. */
  | { kind: 'gpus-reserved'; host: string }
  /** GPUs a live attempt holds. */
  | { kind: 'gpus-held'; holder: number }
  /** A port a live attempt serves on. */
  | { kind: 'port-taken'; holder: number }
  /** A command that shows or fixes it: `{lead}: {command}{tail}` (`list them with: attempts`). */
  | { kind: 'command'; lead: string; command: string; tail?: string };

/** Bad input from a person: unknown profile, bad flag, server already running. */
export class UserError extends Error {
  override readonly name = 'UserError';
  /** How to fix it, in words that hold on every face (no command names). */
  readonly hint?: string;
  /** What kind of refusal, with its data, when a face should word the fix (see UserErrorKind). */
  readonly data?: UserErrorKind;
  constructor(message: string, fix?: string | UserErrorKind) {
    super(message);
    if (typeof fix === 'string') this.hint = fix;
    else if (fix) this.data = fix;
  }

  get kind(): UserErrorKind['kind'] | 'bad-input' {
    return this.data?.kind ?? 'bad-input';
  }
}

/** A request the asker's role does not allow (an operator setting what only an admin may): audited as denied. */
export class NotAllowedError extends UserError {}

/** A config file or profile that does not validate; carries every problem at once. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly source: string,
    readonly issues: Issue[],
  ) {
    super(`${source}: ${issues.length} problem${issues.length === 1 ? '' : 's'}\n${formatIssues(issues)}`);
  }
}

/** Something on a host failed: connection, authentication, a command's exit status. */
export class RemoteError extends Error {
  override readonly name = 'RemoteError';
  constructor(
    message: string,
    readonly details: {
      host: string;
      argv?: readonly string[];
      exitCode?: number | null;
      stderrTail?: string;
      hint?: string;
      /** `connect`, `host-key`, `auth`, `timeout`, `exec`, `channel` */
      kind?: string;
    },
  ) {
    super(message);
  }
}

export function formatIssues(issues: Issue[]): string {
  return issues.map((i) => `  ${i.path}: ${i.message}${i.fix ? ` (fix: ${i.fix})` : ''}`).join('\n');
}
