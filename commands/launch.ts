import { duration } from '../src/format/table.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'launch',
  summary: 'start an SGLang server with a profile and follow it until it is ready or fails',
  usage:
    'launch PROFILE|next:N [--set field=value,...] [--host H|GROUP|H0,H1,...] [--gpus 0,1] [--port N] [--yes] [--dry-run] [--no-check] [--json]',
  examples: [
    'launch glm5-nvfp4',
    'launch small --host standin',
    'launch glm5-attempt5 --dry-run',
    'launch next:1',
    'launch glm5-attempt5 --set kv_cache_dtype=bfloat16',
    'launch small --gpus 2',
    'launch glm5-nvfp4-2node --host pair',
  ],
  positionals: ['profile'],
  switches: ['dryRun', 'noCheck', 'yes', 'json'],
  args: (z) =>
    z.object({
      profile: z.string(),
      set: z.string().optional().describe('change profile fields for this launch: field=value[,field=value...]'),
      host: z
        .string()
        .optional()
        .describe('a host, a host group, or node0,node1,... for one server across several hosts (head first)'),
      gpus: z
        .string()
        .regex(/^\d+(,\d+)*$/, 'a comma-separated list of GPU indices, like 0,1')
        .optional()
        .describe("these GPUs (on each node) instead of the profile's or the first free ones"),
      port: z.coerce
        .number()
        .int()
        .min(1)
        .max(65535)
        .optional()
        .describe("serve on this port instead of the profile's"),
      yes: z.boolean().optional().describe('launch even a configuration known to crash on this hardware'),
      dryRun: z.boolean().optional(),
      noCheck: z.boolean().optional().describe('skip the first real request after the ready line'),
      json: z.boolean().optional(),
    }),
  effect: 'write',
  async run(ctx, { profile, set, host, gpus, port, yes, dryRun, noCheck, json }) {
    const { resolveLaunchHosts } = await import('../src/config/hosts.ts');
    const { resolveLaunchProfile } = await import('../src/advice/profiles.ts');
    const { launch } = await import('../src/lifecycle/launch.ts');
    const { monitorAttempt } = await import('../src/lifecycle/monitor.ts');
    const { eventText } = await import('../src/lifecycle/render-events.ts');
    // A profile, a suggestion of `next` (next:N), or either with --set: validated exactly like profile files.
    const role = ctx.role ?? 'viewer';
    const p = resolveLaunchProfile(ctx.engine, profile, set, role);
    // --host, else the profile's own host or host group, else the config's default host.
    const target = resolveLaunchHosts(ctx.engine.loaded, host ?? p.host);
    const hostName = target.hosts[0]!;
    const where = target.hosts.length > 1 ? `${target.hosts.join('+')}` : hostName;
    const simulated = (ctx.engine.loaded.config.hosts[hostName]?.python ?? '').includes('standin');
    const emit = (e: Parameters<typeof eventText>[0]) => {
      if (e.kind === 'milestone') ctx.say(`  ${e.text}`);
      // With a notifier the crash arrives as an alert (class, root lines, findings); don't tell it twice.
      else if (e.kind === 'failed' && ctx.engine.notifier && e.outcome !== 'exited' && e.outcome !== 'request_failed')
        return;
      else if (!(dryRun && e.kind === 'command')) ctx.say(eventText(e, simulated));
    };
    const r = await launch(
      ctx.engine,
      {
        profile: p,
        hostName,
        actor: ctx.actor,
        origin: ctx.origin,
        role,
        dryRun,
        firstRequest: !noCheck,
        port,
        confirmed: yes,
        confirm: ctx.confirm,
        nodes: target.hosts,
        distPort: target.distPort,
        gpus: gpus?.split(',').map(Number),
      },
      emit,
      ctx.diagnoser,
    );
    const data = {
      outcome: r.outcome,
      commandLine: r.commandLine,
      attempt: r.attempt?.id,
      diagnosis: r.diagnosis,
      notes: r.notes ?? [],
      ...(r.script ? { script: r.script } : {}),
    };
    const out = verdict();
    // Checks that could not run are said with every outcome (json carries them in data.notes).
    const notes = json ? '' : (r.notes ?? []).map((n) => `\n  note: ${n}`).join('');
    return { ...out, text: out.text + notes };

    function verdict(): { text: string; data: typeof data; exitCode?: number } {
      if (json)
        return {
          text: JSON.stringify(data, null, 2),
          data,
          exitCode: r.outcome === 'ready' || r.outcome === 'dry-run' ? 0 : 1,
        };
      if (r.outcome === 'dry-run') {
        const known = (r.warnings ?? []).map(
          (w) => `\n  known to crash: ${w.text}${w.evidence.length ? ` (${w.evidence.join(', ')})` : ''}`,
        );
        const nodes =
          target.hosts.length > 1 ? ` (node 0 of ${target.hosts.length}; the others with --node-rank 1..)` : '';
        // A cluster: the batch script exactly as sbatch would get it on stdin, after the submission itself.
        const job = r.script ? `\n  submitted as: ${r.submit}\n--- batch script ---\n${r.script}--- end ---` : '';
        return { text: `dry run: would run on ${where}${nodes}:\n  ${r.commandLine}${known.join('')}${job}`, data };
      }
      const a = r.attempt!;
      if (r.outcome === 'ready') {
        if (ctx.longLived) monitorAttempt(ctx.engine, a, emit, ctx.diagnoser);
        return {
          text: `ready: attempt #${a.id} (${a.profile}) on ${where}, serving at ${hostName}:${a.port}, GPUs ${a.gpus} after ${duration((a.readyAt ?? 0) - a.startedAt)}`,
          data,
        };
      }
      if (r.outcome === 'hang') {
        return {
          text: `hung: attempt #${a.id} (${a.profile}) on ${hostName}: ${r.diagnosis?.summary}; the server is left running for inspection: stop it with: stop --attempt ${a.id}`,
          data,
          exitCode: 1,
        };
      }
      if (r.outcome === 'request_failed')
        return {
          text: `not ready: attempt #${a.id} (${a.profile}) on ${where}: ${r.diagnosis?.summary}; it is left running and keeps its GPUs (a server started with --api-key needs the same key in the profile the bot launched); stop it with: stop --attempt ${a.id}`,
          data,
          exitCode: 1,
        };
      if (r.outcome === 'interrupted')
        return {
          text: `interrupted: the bot is closing while attempt #${a.id} (${a.profile}) on ${where} is ${a.status}; it is left as it is and the bot follows it again when it next starts (see: status)`,
          data,
          exitCode: 1,
        };
      if (r.outcome === 'timeout')
        return {
          text: `not ready after ${ctx.engine.loaded.config.timeouts.ready_s} s (timeouts.ready_s): attempt #${a.id} is left running and keeps its GPUs; look with: logs --attempt ${a.id}; stop it with: stop --attempt ${a.id}`,
          data,
          exitCode: 1,
        };
      return {
        // The crash itself was already told as it happened (and alerted); end with the one-line verdict.
        text: `${r.outcome}: attempt #${a.id} (${a.profile}) on ${where}${r.diagnosis && r.diagnosis.category !== 'none' ? `: ${r.diagnosis.category} during ${r.diagnosis.phase}: ${r.diagnosis.summary}` : ''}`,
        data,
        exitCode: 1,
      };
    }
  },
});

export default command;
