// Finds a command by name and runs it: parse, validate, authorise, run, audit. Every face (terminal, Slack,
// scheduler) comes through here.
import { suggest } from '../config/suggest.ts';
import { UserError } from '../errors.ts';
import { describeError } from '../errors-render.ts';
import type { CommandContext, CommandDef, CommandOutput } from './define.ts';
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
          place: ctx.origin === 'terminal' ? 'terminal' : null,
          command: name || '(empty)',
          args,
          decision: 'allow',
          result,
          durationMs: ctx.engine.clock.now() - started,
        });
      }
    },
  };
}
