import { z } from 'zod';
import { defineCommand } from '../src/commands/define.ts';

// Work in progress (issue 5): filled in next.
export default defineCommand({
  name: 'schedule',
  summary: 'schedule (work in progress, issue 5)',
  usage: 'schedule',
  examples: ['schedule'],
  positionals: [],
  switches: [],
  args: z.object({}),
  effect: 'read',
  async run() {
    return { text: 'not yet' };
  },
});
