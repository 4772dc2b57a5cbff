import { z } from 'zod';
import { defineCommand } from '../src/commands/define.ts';
import { resolveHostName } from '../src/hosts/from-config.ts';

const command = defineCommand({
  name: 'stop',
  summary:
    'stop a server (every node of a multi-node one): SIGTERM its process group, then SIGKILL after the grace period',
  usage: 'stop [--host H | --attempt N] [--json]',
  examples: ['stop', 'stop --host gpu1', 'stop --attempt 12'],
  positionals: [],
  switches: ['json'],
  args: z.object({
    host: z.string().optional(),
    attempt: z.coerce.number().int().positive().optional().describe('the attempt to stop, when a host runs several'),
    json: z.boolean().optional(),
  }),
  effect: 'write',
  async run(ctx, { host, attempt, json }) {
    const { parseGpus } = await import('../src/ledger/attempts.ts');
    const { stop } = await import('../src/server/stop.ts');
    const hostName = attempt !== undefined && host === undefined ? undefined : resolveHostName(ctx.engine.loaded, host);
    const r = await stop(ctx.engine, hostName, ctx.actor, attempt);
    const mine = parseGpus(r.attempt.gpus);
    const gpu =
      r.gpuReleased === null
        ? 'GPU memory: unknown (no nvidia-smi on the host)'
        : r.gpuReleased
          ? `GPU memory released (GPUs ${mine.join(',')}: ${r.gpu?.gpus
              .filter((g) => mine.includes(g.index))
              .map((g) => `${g.memUsedMiB} MiB`)
              .join(', ')} in use)`
          : `GPU memory NOT released: ${r.gpusStillInUse.map((g) => `GPU ${g.index} still holds ${g.memUsedMiB} MiB`).join(', ')}`;
    const how =
      r.how === 'already-gone'
        ? 'it had already exited'
        : r.how === 'KILL'
          ? 'it ignored SIGTERM and was killed with SIGKILL'
          : 'it exited on SIGTERM';
    const data = { attempt: r.attempt.id, how: r.how, exitCode: r.exitCode, gpuReleased: r.gpuReleased };
    if (json) return { text: JSON.stringify(data, null, 2), data };
    const workers = ctx.engine.attempts.nodes(r.attempt.id).map((n) => n.host);
    const where = [r.attempt.host, ...workers].join('+');
    return {
      text: `stopped attempt #${r.attempt.id} (${r.attempt.profile}) on ${where}: ${how}${workers.length ? ` (all ${workers.length + 1} nodes)` : ''}\n${gpu}`,
      data,
    };
  },
});

export default command;
