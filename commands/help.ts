import { z } from 'zod';
import { defineCommand } from '../src/commands/define.ts';
import { suggest } from '../src/config/suggest.ts';
import { UserError } from '../src/errors.ts';

export default defineCommand({
  name: 'help',
  summary: 'list the commands, or show one command in detail',
  usage: 'help [COMMAND]',
  examples: ['help', 'help launch'],
  positionals: ['command'],
  switches: [],
  args: z.object({ command: z.string().optional() }),
  effect: 'read',
  async run(ctx, { command }) {
    const all = ctx.commands;
    if (!command) {
      const w = Math.max(...all.map((c) => c.name.length));
      return {
        text: [
          'commands:',
          ...all.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`),
          '',
          'help COMMAND shows its options and examples.',
        ].join('\n'),
      };
    }
    const def = all.find((c) => c.name === command);
    if (!def) {
      const s = suggest(
        command,
        all.map((c) => c.name),
      );
      throw new UserError(`unknown command '${command}'`, s ? `did you mean '${s}'?` : 'type help for the list');
    }
    return {
      text: [
        `${def.name}: ${def.summary}`,
        `usage: ${def.usage}`,
        `changes things: ${def.effect === 'write' ? 'yes (operators only)' : 'no'}`,
        'examples:',
        ...def.examples.map((e) => `  ${e}`),
      ].join('\n'),
    };
  },
});
