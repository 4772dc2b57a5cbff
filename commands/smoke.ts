import { defineCommand } from '../src/runtime/define.ts';
import type { OutputFile } from '../src/runtime/files.ts';

/** Runs drawn in the history chart. */
const CHART_RUNS = 30;

const command = defineCommand({
  name: 'smoke',
  summary: 'prompts with expected answers against a server (or a fresh launch): right answers, TTFT, tokens/s',
  usage: 'smoke [--host H] [--profile P] [--launch] [--port N] [--budget S] [--history] [--limit N] [--json]',
  examples: [
    'smoke',
    'smoke --host gpu1',
    'smoke --profile small --launch',
    'smoke --profile small --launch --port 30010',
    'smoke --port 30000',
    'smoke --history',
    'smoke --history --profile glm5-nvfp4',
  ],
  positionals: [],
  switches: ['launch', 'history', 'json'],
  args: (z) =>
    z.object({
      host: z.string().optional(),
      profile: z.string().optional().describe('smoke this profile; launched (and stopped after) if it is not running'),
      launch: z.boolean().optional().describe('always launch the profile fresh, smoke it, stop it'),
      port: z.coerce
        .number()
        .int()
        .min(1)
        .max(65535)
        .optional()
        .describe('with --launch: serve the fresh launch here; else: smoke the server on this port'),
      budget: z.coerce.number().positive().optional().describe('seconds for launch + smoke + stop'),
      history: z.boolean().optional().describe('earlier smoke runs from the ledger'),
      limit: z.coerce.number().int().min(1).max(1000).default(20),
      json: z.boolean().optional(),
    }),
  effect: 'write',
  async run(ctx, { host, profile, launch, port, budget, history, limit, json }) {
    const { resolveHostName } = await import('../src/config/hosts.ts');
    const { chartPath, shareFile } = await import('../src/runtime/files.ts');
    const { eventText } = await import('../src/lifecycle/render-events.ts');
    const { historyText, smokeText } = await import('../src/smoke/report.ts');
    const { runSmoke } = await import('../src/smoke/run.ts');
    const store = ctx.engine.ledger.smoke;
    // The history chart: TTFT and tokens/s per run, regressions marked; posted with the (nightly) report.
    const historyChart = async (h: string | undefined, p: string | undefined, key: string): Promise<OutputFile[]> => {
      const rows = store.list({ host: h, profile: p, limit: CHART_RUNS });
      if (rows.length === 0) return [];
      const { renderSmokeHistoryChart } = await import('../src/charts/smoke-history.ts');
      const what = [p, h && `on ${h}`].filter(Boolean).join(' ') || 'all hosts and profiles';
      const png = await renderSmokeHistoryChart(rows, `smoke history: ${what}, last ${rows.length} run(s)`);
      const filename = `smoke-history-${rows[0]!.id}.png`;
      return [shareFile(ctx, key, { filename, path: chartPath(ctx, filename), title: `smoke history: ${what}` }, png)];
    };
    if (history) {
      const rows = store.list({ host, profile, limit });
      if (json) return { text: JSON.stringify(rows, null, 2), data: rows };
      const files = await historyChart(host, profile, `smoke:history:${rows[0]?.id ?? 0}:${ctx.engine.clock.now()}`);
      return { text: historyText(rows), data: { runs: rows, files } };
    }
    const hostName = resolveHostName(ctx.engine.loaded, host);
    const simulated = (ctx.engine.loaded.config.hosts[hostName]?.python ?? '').includes('standin');
    const r = await runSmoke(
      ctx.engine,
      {
        hostName,
        profile,
        launch,
        port,
        budgetS: budget,
        actor: ctx.actor,
        origin: ctx.origin,
        role: ctx.role ?? 'viewer',
      },
      {
        say: (t) => ctx.say(t),
        diagnoser: ctx.diagnoser,
        onLaunchEvent: (e) => {
          if (e.kind === 'milestone') ctx.say(`  ${e.text}`);
          else if (e.kind !== 'command') ctx.say(eventText(e, simulated));
        },
      },
    );
    const exitCode = r.row.verdict === 'pass' ? 0 : 1;
    const files = await historyChart(r.row.host, r.row.profile, `smoke:${r.row.id}:chart`);
    const data = {
      ...r.row,
      result: undefined,
      prompts: r.prompts,
      comparison: r.comparison,
      log: r.log,
      files,
      serverMetrics: r.serverMetrics,
      ...(r.interrupted && { interrupted: true }),
    };
    if (json) return { text: JSON.stringify(data, null, 2), data, exitCode };
    return { text: smokeText(r), data, exitCode };
  },
});

export default command;
