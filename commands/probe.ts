import { duration } from '../src/format/table.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'probe',
  summary: "one health report on a host's server: process, /health, /server_info, /v1/models, GPUs",
  usage: 'probe [--host H | --attempt N] [--json]',
  examples: ['probe', 'probe --host gpu1 --json', 'probe --attempt 12'],
  positionals: [],
  switches: ['json'],
  args: (z) =>
    z.object({
      host: z.string().optional(),
      attempt: z.coerce.number().int().positive().optional().describe('the attempt to probe, when a host runs several'),
      json: z.boolean().optional(),
    }),
  effect: 'read',
  async run(ctx, { host, attempt, json }) {
    const { resolveHostName } = await import('../src/config/hosts.ts');
    const { probe } = await import('../src/lifecycle/probe.ts');
    const { serverMetricsText } = await import('../src/lifecycle/sglang-metrics.ts');
    const hostName = resolveHostName(ctx.engine.loaded, host);
    const { survivedCount } = await import('../src/lifecycle/survived.ts');
    const r0 = await probe(ctx.engine, hostName, attempt);
    // "Is it healthy?" includes what it served on past: errors that paged nobody (early-alert.ts).
    const r = {
      ...r0,
      survived: r0.attempt ? (ctx.engine.attempts.survived([r0.attempt.id]).get(r0.attempt.id) ?? null) : null,
    };
    if (json) return { text: JSON.stringify(r, null, 2), data: r };
    const p = r.process;
    const proc = r.job
      ? `Slurm job ${r.job.id}: ${r.job.text}`
      : p.state === 'unreachable'
        ? `unreachable (${p.error})`
        : p.state === 'none'
          ? 'no server recorded on the host'
          : `${p.state} (pgid ${p.pgid}, ${p.runId}${p.exitCode !== null ? `, exit ${p.exitCode}` : ''})`;
    const si = r.serverInfo;
    const gpu =
      'error' in r.gpu
        ? `error: ${r.gpu.error}`
        : r.gpu.available
          ? r.gpu.gpus
              .map((g) => {
                const held = r.leases.find((l) => l.gpu === g.index);
                return `GPU${g.index} ${g.memUsedMiB}/${g.memTotalMiB} MiB${held ? ` (#${held.attemptId})` : ''}`;
              })
              .join(', ')
          : 'no nvidia-smi';
    const lines = [
      `probe of ${r.host}${r.attempt ? ` (attempt #${r.attempt.id} ${r.attempt.profile}, ${r.attempt.status})` : ''}${si.simulated ? ' [SIMULATED stand-in]' : ''}`,
      `  process:     ${proc}`,
      `  /health:     ${r.health.status ?? `no answer (${r.health.error})`}`,
      `  server_info: ${si.error ? si.error : `sglang ${si.version ?? '?'}, model ${si.modelPath ?? '?'}, tp ${si.tp ?? '?'} (${si.endpoint})`}`,
      `  models:      ${Array.isArray(r.models) ? r.models.join(', ') : r.models.error}`,
      `  metrics:     ${serverMetricsText(r.serverMetrics)}`,
      `  milestone:   ${r.lastMilestone ?? '-'}`,
      `  uptime:      ${r.uptimeS !== null ? duration(r.uptimeS * 1000) : '-'}`,
      `  GPUs:        ${gpu}`,
      ...(r.survived ? [`  survived:    ${survivedCount(r.survived)}`] : []),
      ...r.workers.map(
        (w) => `  node ${w.rank}:      ${w.host}: ${w.state}${w.error ? ` (${w.error.split('\n')[0]})` : ''}`,
      ),
    ];
    // A multi-node server is healthy only with every node's process alive.
    const healthy =
      r.health.status === 200 && r.workers.every((w) => w.state === 'alive') && (!r.job || r.job.state === 'running');
    return { text: lines.join('\n'), data: r, exitCode: healthy ? 0 : 1 };
  },
});

export default command;
