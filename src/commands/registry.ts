// Finds a command by name and runs it: parse, validate, authorise, run, audit. Every face (terminal, Slack,
// scheduler) comes through here.
import { suggest } from '../config/suggest.ts';
import { UserError } from '../errors.ts';
import { describeError } from '../errors-render.ts';
import { type CommandContext, type CommandDef, type CommandOutput, type Decision, requiredRole } from './define.ts';
import { parseArgs, tokenize, validateArgs } from './parse.ts';

export interface Dispatch {
  commands: CommandDef[];
  run(text: string, ctx: CommandContext): Promise<CommandOutput>;
}

export function createDispatch(commands: CommandDef[]): Dispatch {
  const byName = new Map(commands.map((c) => [c.name, c]));
  return {
    commands,
    async run(text, ctx) {
      const started = ctx.engine.clock.now();
      let name = '';
      let args: Record<string, unknown> = {};
      let result = 'ok';
      let denied = false;
      try {
        const tokens = tokenize(text.trim());
        name = tokens[0] ?? 'help';
        const def = byName.get(name);
        if (!def) {
          const s = suggest(name, [...byName.keys()]);
          throw new UserError(
            `unknown command '${name}'`,
            s ? `did you mean '${s}'? type help for the list` : 'type help for the list',
          );
        }
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
          return { text: `not allowed: ${decision.reason}${decision.hint ? `\n  ${decision.hint}` : ''}`, exitCode: 2 };
        }
        args = validateArgs(def, parseArgs(def, tokens.slice(1)));
        const out = await def.run(ctx, args);
        if (out.exitCode) result = `failed (${out.exitCode})`;
        return out;
      } catch (e) {
        result = `error: ${e instanceof Error ? e.message : String(e)}`;
        return { text: describeError(e, ctx.log), exitCode: e instanceof UserError ? 2 : 1 };
      } finally {
        ctx.engine.audit.record({
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
      }
    },
  };
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
    return { allow: true, reason: `${ctx.origin} is trusted` };
  if (requiredRole(def) !== 'viewer')
    return { allow: false, reason: `${def.name} changes things and no policy allows it` };
  return { allow: true, reason: 'read-only' };
}

export function placeOf(ctx: CommandContext): string | null {
  if (ctx.identity?.channel)
    return ctx.identity.via ? `${ctx.identity.channel} (${ctx.identity.via})` : ctx.identity.channel;
  return ctx.origin === 'terminal' ? 'terminal' : null;
}
