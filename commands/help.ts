import { defineCommand } from '../src/runtime/define.ts';
import { helpText } from '../src/runtime/help.ts';

const command = defineCommand({
  name: 'help',
  summary: 'list the commands, or show one command in detail',
  usage: 'help [COMMAND]',
  examples: ['help', 'help launch'],
  positionals: ['command'],
  switches: [],
  args: (z) => z.object({ command: z.string().optional() }),
  effect: 'read',
  async run(ctx, { command }) {
    return { text: helpText(ctx.commands, ctx, command) };
  },
});

export default command;
