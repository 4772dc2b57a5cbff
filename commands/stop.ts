import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'stop',
  summary:
    'stop a server (every node of a multi-node one): SIGTERM its process group, then SIGKILL after the grace period',
  usage: 'stop [--host H | --attempt N] [--json]',
  examples: ['stop', 'stop --host gpu1', 'stop --attempt 12'],
  positionals: [],
  switches: ['json'],
  args: (z) =>
    z.object({
      host: z.string().optional(),
      attempt: z.coerce.number().int().positive().optional().describe('the attempt to stop, when a host runs several'),
      json: z.boolean().optional(),
    }),
  effect: 'write',
  async run(ctx, { host, attempt, json }) {
    const { resolveHostName } = await import('../src/config/hosts.ts');
    const { stop, stopSummary } = await import('../src/lifecycle/stop.ts');
    const hostName = attempt !== undefined && host === undefined ? undefined : resolveHostName(ctx.engine.loaded, host);
    const r = await stop(ctx.engine, hostName, ctx.actor, attempt);
    const data = { attempt: r.attempt.id, how: r.how, exitCode: r.exitCode, gpuReleased: r.gpuReleased };
    if (json) return { text: JSON.stringify(data, null, 2), data };
    return { text: stopSummary(ctx.engine, r), data };
  },
});

export default command;
