// The knob table and the SLO parser are small and pure: the arguments need them. The run itself (launch, smoke,
// bench, the ledger store, the report) is imported when the command runs.
import { KNOB_NAMES } from '../src/autopilot/search.ts';
import { sloSchema, sloText } from '../src/autopilot/slo.ts';
import { UserError } from '../src/errors.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'autopilot',
  summary:
    'from a crashing profile to the fastest working configuration, unattended, within a budget: find one that works, then tune it under an SLO',
  usage:
    'autopilot PROFILE [--host H] [--attempts N] [--hours H] [--slo ttft_p99<2000ms,itl_p50<40ms] [--concurrency C] [--input-len N] [--output-len N] [--requests N] [--knobs k1,k2] [--allow-known-crash] [--keep] [--port N] [--json] | autopilot --cancel [--host H] | autopilot --status',
  examples: [
    'autopilot glm5-nvfp4 --attempts 30 --hours 6 --slo ttft_p99<2000ms,itl_p50<40ms --concurrency 32 --keep',
    'autopilot glm5-nvfp4 --knobs mem_fraction_static,chunked_prefill_size --attempts 12',
    'autopilot --cancel',
    'autopilot --status',
  ],
  positionals: ['profile'],
  switches: ['allowKnownCrash', 'keep', 'cancel', 'status', 'json'],
  args: (z) =>
    z.object({
      profile: z.string().optional(),
      host: z.string().optional(),
      attempts: z.coerce.number().int().min(1).max(500).default(20).describe('most launches, all phases together'),
      hours: z.coerce.number().gt(0).max(168).default(8).describe('most wall-clock time'),
      slo: sloSchema(z)
        .default([
          { metric: 'ttft_p99', figure: 'ttft', stat: 'p99', op: '<', ms: 2000 },
          { metric: 'itl_p50', figure: 'itl', stat: 'p50', op: '<', ms: 40 },
        ])
        .describe('latency objectives at the target load, e.g. ttft_p99<2000ms,itl_p50<40ms'),
      concurrency: z.coerce.number().int().min(1).max(1024).default(16).describe('the target load: requests at once'),
      inputLen: z.coerce.number().int().min(1).max(1_000_000).default(256).describe('prompt tokens per request'),
      outputLen: z.coerce.number().int().min(1).max(100_000).default(64).describe('generated tokens per request'),
      requests: z.coerce
        .number()
        .int()
        .min(1)
        .max(100_000)
        .optional()
        .describe('requests per trial (default 2 x C, at least 8)'),
      knobs: z
        .string()
        .transform((s) => s.split(',').map((k) => k.trim()))
        .refine((ks) => ks.every((k) => (KNOB_NAMES as string[]).includes(k)), {
          message: `each knob one of ${KNOB_NAMES.join(', ')}`,
        })
        .optional()
        .describe(`which to tune (default all: ${KNOB_NAMES.join(', ')})`),
      allowKnownCrash: z.boolean().optional().describe('launch configurations known to crash on this hardware too'),
      keep: z.boolean().optional().describe('leave the winner running'),
      port: z.coerce.number().int().min(1).max(65535).optional(),
      cancel: z.boolean().optional(),
      status: z.boolean().optional(),
      json: z.boolean().optional(),
    }),
  effect: 'write',
  async run(ctx, a) {
    const { resolveHostName } = await import('../src/config/hosts.ts');
    const { autopilotStore } = await import('../src/autopilot/store.ts');
    const store = autopilotStore(ctx.engine.ledger);
    if (a.status) {
      const runs = store.list(10);
      const text = runs.length
        ? runs
            .map(
              (r) =>
                `#${r.id} ${r.profile} on ${r.host} by ${r.actor}: ${r.status}, ${r.phase} phase${r.result ? `: ${(r.result as { ending?: string }).ending ?? ''}` : ''}`,
            )
            .join('\n')
        : 'no autopilot runs';
      return { text, data: runs };
    }
    const hostName = resolveHostName(ctx.engine.loaded, a.host);
    if (a.cancel) {
      const r = store.unfinished(hostName)[0];
      if (!r)
        throw new UserError(`no autopilot run is going on ${hostName}`, {
          kind: 'command',
          lead: 'see the runs with',
          command: 'autopilot --status',
        });
      const { cancelAutopilot } = await import('../src/autopilot/run.ts');
      const here = cancelAutopilot(ctx.engine, r.id);
      return {
        text: `autopilot run #${r.id} on ${hostName} ${here ? 'is stopping: its servers are being stopped' : 'will stop: the bot running it stops its servers within a second'}`,
        data: { run: r.id },
      };
    }
    if (!a.profile)
      throw new UserError('autopilot needs a PROFILE to start from', 'e.g. autopilot glm5-nvfp4 --attempts 20');
    const { resolveProfileName } = await import('../src/profiles/saved.ts');
    const { startAutopilot } = await import('../src/autopilot/run.ts');
    const { trialsTable } = await import('../src/autopilot/report.ts');
    const profile = resolveProfileName(ctx.engine, a.profile);
    const out = await startAutopilot(
      ctx.engine,
      {
        hostName,
        profile,
        actor: ctx.actor,
        origin: ctx.origin,
        params: {
          attempts: a.attempts,
          hours: a.hours,
          slo: a.slo,
          concurrency: a.concurrency,
          inputLen: a.inputLen,
          outputLen: a.outputLen,
          requests: a.requests ?? Math.max(8, 2 * a.concurrency),
          knobs: a.knobs ?? KNOB_NAMES,
          allowKnownCrash: Boolean(a.allowKnownCrash),
          keep: Boolean(a.keep),
          ...(a.port ? { port: a.port } : {}),
          role: ctx.role ?? 'viewer',
        },
      },
      { say: ctx.say, diagnoser: ctx.diagnoser },
    );
    const data = { ...out, slo: sloText(a.slo) };
    if (a.json) return { text: JSON.stringify(data, null, 2), data };
    return {
      text: out.report || `${out.ending}\n\n${trialsTable(out.trials)}`,
      data,
      exitCode: out.winner ? 0 : 1,
    };
  },
});

export default command;
