import { z } from 'zod';
import { defineCommand } from '../src/commands/define.ts';
import { resolveHostName } from '../src/hosts/from-config.ts';
import { stop } from '../src/server/stop.ts';

export default defineCommand({
  name: 'stop',
  summary: "stop the host's server: SIGTERM its process group, then SIGKILL after the grace period",
  usage: 'stop [--host H] [--json]',
  examples: ['stop', 'stop --host gpu1'],
  positionals: [],
  switches: ['json'],
  args: z.object({ host: z.string().optional(), json: z.boolean().optional() }),
  effect: 'write',
  async run(ctx, { host, json }) {
    const hostName = resolveHostName(ctx.engine.loaded, host);
    const r = await stop(ctx.engine, hostName, ctx.actor);
    const gpu =
      r.gpuReleased === null
        ? 'GPU memory: unknown (no nvidia-smi on the host)'
        : r.gpuReleased
          ? `GPU memory released (${r.gpu?.gpus.map((g) => `${g.memUsedMiB} MiB`).join(', ')} in use)`
          : `GPU memory NOT released: ${r.gpu?.apps.map((a) => `pid ${a.pid} holds ${a.memMiB} MiB`).join(', ')}`;
    const how =
      r.how === 'already-gone'
        ? 'it had already exited'
        : r.how === 'KILL'
          ? 'it ignored SIGTERM and was killed with SIGKILL'
          : 'it exited on SIGTERM';
    const data = { attempt: r.attempt.id, how: r.how, exitCode: r.exitCode, gpuReleased: r.gpuReleased };
    if (json) return { text: JSON.stringify(data, null, 2), data };
    return { text: `stopped attempt #${r.attempt.id} (${r.attempt.profile}) on ${hostName}: ${how}\n${gpu}`, data };
  },
});
