import { UserError } from '../src/errors.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'bench',
  summary: "load benchmark of a host's server: throughput, TTFT, TPOT, ITL, E2E over a concurrency sweep, with a chart",
  usage:
    'bench [--host H] [--concurrency 1,4,16,64] [--input-len N] [--output-len N] [--requests N] [--history] [--json]',
  examples: [
    'bench',
    'bench --host gpu1 --concurrency 1,8,32',
    'bench --input-len 512 --output-len 128 --requests 64',
    'bench --history',
  ],
  positionals: [],
  switches: ['history', 'json'],
  args: (z) =>
    z.object({
      host: z.string().optional(),
      concurrency: z
        .string()
        .regex(/^\d+(,\d+)*$/, 'a comma-separated list of numbers, like 1,4,16,64')
        .transform((s) => s.split(',').map(Number))
        .refine((xs) => xs.every((x) => x >= 1 && x <= 1024), 'each between 1 and 1024')
        .default([1, 4, 16, 64])
        .describe('concurrency levels to sweep'),
      inputLen: z.coerce.number().int().min(1).max(1_000_000).default(1024).describe('prompt tokens per request'),
      outputLen: z.coerce.number().int().min(1).max(100_000).default(256).describe('generated tokens per request'),
      requests: z
        .string()
        .regex(/^\d+(,\d+)*$/, 'a number, or one number per concurrency level: 8 or 8,16,32,128')
        .transform((v) => v.split(',').map(Number))
        .refine((xs) => xs.every((x) => x >= 1 && x <= 100_000), 'each between 1 and 100000')
        .optional()
        .describe('requests per level (one for all, or one per level); default 2 x concurrency, at least 8'),
      history: z.boolean().optional(),
      json: z.boolean().optional(),
    }),
  effect: 'write',
  async run(ctx, { host, concurrency, inputLen, outputLen, requests, history, json }) {
    const { resolveHostName } = await import('../src/config/hosts.ts');
    const { shareFile } = await import('../src/runtime/files.ts');
    const { benchHistoryText, benchText } = await import('../src/bench-load/report.ts');
    const { runBench } = await import('../src/bench-load/run.ts');
    const { createBenchStore } = await import('../src/bench-load/store.ts');
    if (history) {
      const rows = createBenchStore(ctx.engine.ledger).list({ host });
      return json ? { text: JSON.stringify(rows, null, 2), data: rows } : { text: benchHistoryText(rows), data: rows };
    }
    if (requests && requests.length !== 1 && requests.length !== concurrency.length)
      throw new UserError(
        `bench: --requests has ${requests.length} numbers for ${concurrency.length} concurrency levels`,
        'give one number for all levels, or one per level',
      );
    const hostName = resolveHostName(ctx.engine.loaded, host);
    const r = await runBench(
      ctx.engine,
      {
        hostName,
        concurrencies: concurrency,
        inputLen,
        outputLen,
        requests: requests ?? null,
        actor: ctx.actor,
        origin: ctx.origin,
      },
      (t) => ctx.say(t),
    );
    const { serverMetricsText } = await import('../src/lifecycle/sglang-metrics.ts');
    const text = `${benchText(r.row, r.chartPath)}\n  server /metrics: ${serverMetricsText(r.serverMetrics)}`;
    const file = shareFile(
      ctx,
      `bench:${r.row.id}:chart`,
      {
        filename: `bench-${r.row.id}.png`,
        path: r.chartPath,
        title: `bench run #${r.row.id}: ${r.row.profile} on ${hostName}`,
      },
      r.png,
      false,
    );
    const data = { ...r.row, files: [file], serverMetrics: r.serverMetrics };
    const failed = r.row.levels.some((l) => l.completed === 0);
    return json
      ? { text: JSON.stringify(data, null, 2), data, exitCode: failed ? 1 : 0 }
      : { text, data, exitCode: failed ? 1 : 0 };
  },
});

export default command;
