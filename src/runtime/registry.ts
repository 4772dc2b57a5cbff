// Part src/runtime: owns the command runtime: definitions, parsing, authorisation, dispatch, audit.
// May import: access, config, errors-render.ts, errors.ts, lifecycle, logger.ts, logs, suggest.ts.
//
// Finds a command by name and runs it: parse, validate, authorise, run, audit. Every face (terminal, Slack,
// scheduler) comes through here.

import { ConfigError, NotAllowedError, UserError } from '../errors.ts';
import { describeError, describeRefusal } from '../errors-render.ts';
import { closest } from '../suggest.ts';
import { parseArgs, validateArgs } from './args.ts';
import { type CommandContext, type CommandDef, type CommandOutput, type Decision, requiredRole } from './define.ts';
import { helpRewrite } from './help.ts';
import { checkArgv, tokenize } from './parse.ts';

export interface Dispatch {
  commands: CommandDef[];
  /** Command text as a person typed it (chat, the interactive session): tokenized here. */
  run(text: string, ctx: CommandContext): Promise<CommandOutput>;
  /** Words already split by a shell (`npx glm COMMAND ...`): used as they are, never re-tokenized. */
  runArgv(argv: readonly string[], ctx: CommandContext): Promise<CommandOutput>;
  /**
   * Command text read exactly as `run` reads it (same tokenizer, help flags, lookup, schema and errors), without
   * running it: for a face that decides something before the run (Slack asks before a launch replaces a server).
   */
  parse(text: string): Parsed;
  /**
   * Resolves once every command running now has returned (its audit row written), or after `ms`: a closing bot waits
   * for this before it closes the ledger. False when some were still running.
   */
  settled(ms: number): Promise<boolean>;
}

export interface Parsed {
  def: CommandDef;
  args: Record<string, unknown>;
}

export function createDispatch(commands: CommandDef[]): Dispatch {
  const byName = new Map(commands.map((c) => [c.name, c]));
  const running = new Set<Promise<CommandOutput>>();
  const dispatch: Dispatch = {
    commands,
    async run(text, ctx) {
      let tokens: string[];
      try {
        tokens = tokenize(text.trim());
      } catch (e) {
        return runTokens(undefined, ctx, e);
      }
      return runTokens(tokens, ctx);
    },
    async settled(ms) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((r) => {
        timer = setTimeout(() => r(false), ms);
      });
      const done = Promise.allSettled([...running]).then(() => true);
      const r = await Promise.race([done, late]);
      clearTimeout(timer);
      return r;
    },
    parse(text) {
      return parseTokens(tokenize(text.trim()));
    },
    runArgv(argv, ctx) {
      let tokens: string[];
      try {
        tokens = checkArgv(argv);
      } catch (e) {
        return runTokens(undefined, ctx, e);
      }
      return runTokens(tokens, ctx);
    },
  };
  return dispatch;

  function lookup(tokens: string[]): { def: CommandDef; rest: string[] } {
    const name = tokens[0] ?? 'help';
    const def = byName.get(name);
    if (!def) {
      const suggestion = closest(name, [...byName.keys()]);
      throw new UserError(`unknown command '${name}'`, {
        kind: 'unknown-command',
        ...(suggestion ? { suggestion } : {}),
      });
    }
    return { def, rest: tokens.slice(1) };
  }

  function parseTokens(given: string[]): Parsed {
    const { def, rest } = lookup(helpRewrite(given));
    return { def, args: validateArgs(def, parseArgs(def, rest)) };
  }

  function runTokens(given: string[] | undefined, ctx: CommandContext, early?: unknown): Promise<CommandOutput> {
    const p = runCounted(given, ctx, early);
    running.add(p);
    const done = () => running.delete(p);
    p.then(done, done);
    return p;
  }

  async function runCounted(given: string[] | undefined, ctx: CommandContext, early?: unknown): Promise<CommandOutput> {
    const started = ctx.engine.clock.now();
    let name = '';
    let args: Record<string, unknown> = {};
    let result = 'ok';
    let denied = false;
    try {
      if (early) throw early;
      const tokens = helpRewrite(given ?? []);
      name = tokens[0] ?? 'help';
      const { def } = lookup(tokens);
      // Authorise before validating: someone refused learns nothing about hosts or profiles from the errors.
      const decision = await authorize(def, ctx);
      if (!decision.allow) {
        denied = true;
        result = `denied: ${decision.reason}`;
        try {
          args = parseArgs(def, tokens.slice(1));
        } catch {
          args = { text: tokens.slice(1).join(' ') };
        }
        return { text: describeRefusal(decision), exitCode: 2 };
      }
      args = validateArgs(def, parseArgs(def, tokens.slice(1)));
      const out = await def.run({ ...ctx, role: decision.role ?? 'viewer' }, args);
      if (out.exitCode) result = `failed (${out.exitCode})`;
      return out;
    } catch (e) {
      // A change the asker's role may not make (src/access/operator.ts) is a refusal, audited as one.
      if (e instanceof NotAllowedError) denied = true;
      result = `${denied ? 'denied' : 'error'}: ${e instanceof Error ? e.message : String(e)}`;
      // Bad input (a user error, or a config or profile that does not validate, e.g. a bad --set value) is 2.
      return {
        text: describeError(e, ctx.log, ctx),
        exitCode: e instanceof UserError || e instanceof ConfigError ? 2 : 1,
      };
    } finally {
      audited(ctx, {
        at: started,
        actor: ctx.actor,
        origin: ctx.origin,
        place: placeOf(ctx),
        command: name || '(empty)',
        args,
        decision: denied ? 'deny' : 'allow',
        result,
        durationMs: ctx.engine.clock.now() - started,
      });
      ctx.engine.metrics?.commandDone(
        name || '(empty)',
        denied ? 'denied' : result.split(/[ :(]/)[0]!,
        ctx.engine.clock.now() - started,
      );
    }
  }
}

/**
 * Writes a command's audit row. One that cannot be written (the ledger closed under a command that outlived its bot's
 * close, a full disk) is logged as an error with what it would have said: it must neither replace the command's own
 * answer with a thrown error nor go unnoticed.
 */
function audited(ctx: CommandContext, e: Parameters<CommandContext['engine']['audit']['record']>[0]): void {
  try {
    ctx.engine.audit.record(e);
  } catch (err) {
    ctx.log.error({ err: err instanceof Error ? err.message : String(err), audit: e }, 'could not write the audit row');
  }
}

/**
 * The authorisation hook: the face's policy when it has one; otherwise the local terminal and the scheduler are
 * trusted, and from anywhere else anything that changes state (or needs more than a viewer) is refused.
 */
export async function authorize(def: CommandDef, ctx: CommandContext): Promise<Decision> {
  if (ctx.authorize) {
    try {
      return await ctx.authorize(def, ctx);
    } catch (e) {
      // A policy that cannot decide (e.g. the user group lookup failed) refuses.
      return { allow: false, reason: `access check failed: ${(e as Error).message}`, hint: 'try again in a minute' };
    }
  }
  if (ctx.origin === 'terminal' || ctx.origin === 'scheduler')
    return { allow: true, reason: `${ctx.origin} is trusted`, role: 'admin' };
  if (requiredRole(def) !== 'viewer')
    return { allow: false, reason: `${def.name} changes things and no policy allows it` };
  return { allow: true, reason: 'read-only', role: 'viewer' };
}

export function placeOf(ctx: CommandContext): string | null {
  if (ctx.identity?.channel)
    return ctx.identity.via ? `${ctx.identity.channel} (${ctx.identity.via})` : ctx.identity.channel;
  return ctx.origin === 'terminal' ? 'terminal' : null;
}
