// A command is data: name, summary, usage, examples, an argument schema and a side-effect level, plus a handler
// that gets a context. Help text, parsing and authorisation are derived from these definitions.
// The schema is a function of zod, built on first use (src/runtime/args.ts): a definition loads without zod, so
// `glm help` answers from the definitions alone (zod is ~15 MB of a process's memory).
import type { z } from 'zod';
import type { Decision, Effect, Identity, Role } from '../access/roles.ts';
import { commandText, type Face } from '../errors-render.ts';
import type { Engine } from '../lifecycle/engine.ts';
import type { Logger } from '../logger.ts';
import type { DiagnoserFactory } from '../logs/diagnosis.ts';

export type { Decision, Effect, Identity, Role } from '../access/roles.ts';
export { requiredRole } from '../access/roles.ts';

export interface CommandContext {
  engine: Engine;
  actor: string;
  origin: 'terminal' | 'slack' | 'scheduler';
  log: Logger;
  /** Progress for a person while the command runs (a line in the terminal, a thread reply in Slack). */
  say(text: string): void;
  diagnoser: DiagnoserFactory;
  /** True when the bot stays up after the command (REPL, Slack): long watches may continue in the background. */
  longLived: boolean;
  /** Asks the person a yes/no question (interactive terminal); absent where nobody can answer in line. */
  confirm?: (question: string) => Promise<boolean>;
  /** The terminal's width in columns when output goes to one (tables fit it); absent in chat and for pipes. */
  width?: number;
  /** Standard input, when the face has one (terminal `glm classify -`). */
  stdin?: AsyncIterable<Buffer | string>;
  /** Every registered command (for help). */
  commands: CommandDef[];
  /** The chat identity behind `actor` (absent in the terminal, whose local user is trusted). */
  identity?: Identity;
  /**
   * The asker's role, set by the registry from the authorisation decision before the command runs: admin for the
   * terminal's local user and the scheduler (whose jobs come from the config).
   */
  role?: Role;
  /** Checked before every run; without it only the terminal and the scheduler may change things. */
  authorize?: (def: CommandDef, ctx: CommandContext) => Decision | Promise<Decision>;
}

export interface CommandOutput {
  text: string;
  data?: unknown;
  /** Process exit code in one-shot terminal use: 0 ok, 1 the operation failed (e.g. the server crashed). */
  exitCode?: number;
}

/** The zod namespace, as `import { z } from 'zod'` gives it: handed to a command's `args`. */
export type Zod = typeof z;

export interface CommandDef<S extends z.ZodObject = z.ZodObject> {
  name: string;
  summary: string;
  usage: string;
  examples: string[];
  /** Argument names filled from positionals, in order. */
  positionals: string[];
  /** Flags that take no value (`--dry-run`). Their schema entries are booleans. */
  switches: string[];
  /** The argument schema, built from the zod it is given (once: src/runtime/args.ts `argsOf`). */
  args: (zod: Zod) => S;
  effect: Effect;
  /** Minimum role from chat; default operator for write, viewer for read. */
  role?: Role;
  run(ctx: CommandContext, args: z.infer<S>): Promise<CommandOutput>;
}

export function defineCommand<S extends z.ZodObject>(def: CommandDef<S>): CommandDef<S> {
  return def;
}

/** How a person asks for help where they are: `npx glm help` in a shell, `/glm help` in Slack, `help` in a session. */
export function helpHint(ctx: Face, topic?: string): string {
  return commandText(ctx, topic ? `help ${topic}` : 'help');
}
