import { z } from 'zod';
import { defineCommand } from '../src/commands/define.ts';

// Work in progress (issue 5): filled in next.
export default defineCommand({
  name: 'bench',
  summary: 'bench (work in progress, issue 5)',
  usage: 'bench',
  examples: ['bench'],
  positionals: [],
  switches: [],
  args: z.object({}),
  effect: 'read',
  async run() {
    return { text: 'not yet' };
  },
});
