import { duration, table } from '../src/format/table.ts';
import type { QueueView } from '../src/lifecycle/backend.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'status',
  summary: 'every host at a glance: what runs where, on which GPUs, since when, launched by whom',
  usage: 'status [--gpus] [--json]',
  examples: ['status', 'status --gpus'],
  positionals: [],
  switches: ['json', 'gpus'],
  args: (z) =>
    z.object({
      json: z.boolean().optional(),
      gpus: z.boolean().optional().describe('Slurm clusters: also each node of the partition and its GPUs in use'),
    }),
  effect: 'read',
  async run(ctx, { json, gpus }) {
    const { backendFor } = await import('../src/lifecycle/backends.ts');
    const { reconcile } = await import('../src/lifecycle/reconcile.ts');
    const { survivedNote } = await import('../src/lifecycle/survived.ts');
    const checked = await reconcile(ctx.engine);
    const now = ctx.engine.clock.now();
    // Errors the live servers logged and served on past (early-alert.ts): invisible otherwise until one kills them.
    const survived = ctx.engine.attempts.survived(ctx.engine.attempts.allActive().map((a) => a.id));
    // One row per server on each host (a host may run several on separate GPUs; a multi-node server shows on each of
    // its hosts), one row for an idle host.
    const rows = Object.keys(ctx.engine.loaded.config.hosts).flatMap((host) => {
      const live = ctx.engine.attempts.allActiveOn(host);
      const leases = ctx.engine.attempts.leasesOn(host);
      if (live.length === 0) {
        return [
          {
            host,
            state: 'idle',
            attempt: null,
            profile: null,
            node: null,
            by: null,
            since: null,
            milestone: null,
            gpus: null,
            note: null,
            survived: null,
          },
        ];
      }
      return live.map((a) => {
        const c = checked.find((x) => x.attempt.id === a.id && x.state !== 'closed');
        const workers = ctx.engine.attempts.nodes(a.id);
        const rank = a.host === host ? 0 : (workers.find((n) => n.host === host)?.rank ?? 0);
        const held = leases.filter((l) => l.attemptId === a.id).map((l) => l.gpu);
        return {
          host,
          state: a.status as string,
          attempt: a.id as number | null,
          profile: a.profile as string | null,
          node: workers.length > 0 ? `${rank}/${workers.length + 1}` : null,
          by: a.actor as string | null,
          since: (now - a.startedAt) as number | null,
          milestone: a.lastMilestone,
          gpus: (held.length > 0 ? held.join(',') : a.gpus) as string | null,
          note: c?.note ?? null,
          survived: survived.get(a.id) ?? null,
        };
      });
    });
    const closed = checked.filter((c) => c.state === 'closed');
    // A cluster's queue: this bot's jobs as Slurm lists them, so a person sees why a launch waits.
    const queues: Array<{ host: string; view?: QueueView; error?: string }> = [];
    const seen = new Set<string>();
    for (const [host, cfg] of Object.entries(ctx.engine.loaded.config.hosts)) {
      const backend = backendFor(ctx.engine, host);
      if (!backend.queue) continue;
      // Host entries of one cluster (say, one per partition) share its queue: show it once.
      const cluster = JSON.stringify([cfg.ssh?.host, cfg.ssh?.port, cfg.ssh?.user, cfg.slurm?.slurm_conf]);
      if (seen.has(cluster)) continue;
      seen.add(cluster);
      queues.push(
        await backend.queue(ctx.engine, host, { gpus }).then(
          (view) => ({ host, view }),
          (e: Error) => ({ host, error: e.message }),
        ),
      );
    }
    if (json)
      return {
        text: JSON.stringify({ hosts: rows, queues, closedSinceLastLook: closed.map((c) => c.attempt.id) }, null, 2),
        data: rows,
      };
    const text = table(
      ['host', 'state', 'attempt', 'profile', 'node', 'GPUs held', 'launched by', 'for', 'last milestone'],
      rows.map((r) => [
        r.host,
        r.state + (r.note ? ` (${r.note})` : ''),
        r.attempt ? `#${r.attempt}` : '-',
        r.profile ?? '-',
        r.node ?? '-',
        r.gpus ?? '-',
        r.by ?? '-',
        duration(r.since),
        r.milestone ?? '-',
      ]),
    );
    const notes = closed.map(
      (c) =>
        `attempt #${c.attempt.id} on ${c.attempt.host} ended while nobody watched: ${c.attempt.outcome}${c.attempt.exitCode !== null ? ` (exit ${c.attempt.exitCode})` : ''}; its GPUs are free`,
    );
    // One line per server, not per host row (a multi-node server shows on each of its hosts).
    const survivedLines = [...survived].map(([id, s]) => survivedNote(id, s));
    const queueText = queues.flatMap((q) => {
      if (q.error) return [`${q.host}: could not read the queue: ${q.error}`];
      const v = q.view!;
      const jobs =
        v.jobs.length === 0
          ? [`${q.host}: no jobs of this bot in the queue`]
          : [
              `${q.host} queue (this bot's jobs):`,
              table(
                ['job', 'attempt', 'state', 'reason', 'nodes', 'GPUs', 'elapsed', 'limit'],
                v.jobs.map((j) => [
                  j.jobId,
                  j.attemptId ? `#${j.attemptId}` : '-',
                  j.state,
                  j.reason,
                  j.nodes || '-',
                  j.gres,
                  j.elapsed,
                  j.timeLimit,
                ]),
              ),
            ];
      const gpuRows = v.gpus
        ? [
            `${q.host} partition GPUs:`,
            table(
              ['node', 'state', 'GPUs', 'in use'],
              v.gpus.map((g) => [g.node, g.state, g.total, g.used]),
            ),
          ]
        : [];
      return [...jobs, ...gpuRows];
    });
    return { text: [text, ...survivedLines, ...notes, ...queueText].join('\n'), data: rows };
  },
});

export default command;
