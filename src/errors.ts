// The few kinds of error the bot speaks in. Every path from an error to a person goes through `describeError`
// (src/errors-render.ts), so a user sees what was wrong and how to fix it, never a stack trace.

export interface Issue {
  /** Dotted path into the input (`hosts.gpu1.port`, `profiles/glm5.yaml: kv_cache_dtype`). */
  path: string;
  message: string;
  /** How to fix it, when we know. */
  fix?: string;
}

/** Bad input from a person: unknown profile, bad flag, server already running. */
export class UserError extends Error {
  override readonly name = 'UserError';
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
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
