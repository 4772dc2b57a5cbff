import { UserError } from '../src/errors.ts';
import { defineCommand } from '../src/runtime/define.ts';

// One bisection per host at a time; `bisect --cancel` stops it after the step in flight.
const running = new Map<string, AbortController>();

const command = defineCommand({
  name: 'bisect',
  summary: 'find the one setting that turns a working profile into a crashing one, launching halfway profiles',
  usage: 'bisect GOOD BAD [--host H] [--port N] [--json] | bisect --cancel [--host H]',
  examples: ['bisect glm5-tilelang-bf16 glm5-attempt4', 'bisect small small --host standin', 'bisect --cancel'],
  positionals: ['good', 'bad'],
  switches: ['cancel', 'json'],
  args: (z) =>
    z.object({
      good: z.string().optional(),
      bad: z.string().optional(),
      host: z.string().optional(),
      port: z.coerce.number().int().min(1).max(65535).optional(),
      cancel: z.boolean().optional(),
      json: z.boolean().optional(),
    }),
  effect: 'write',
  async run(ctx, { good, bad, host, port, cancel, json }) {
    const { resolveHostName } = await import('../src/config/hosts.ts');
    const { resolveProfileName } = await import('../src/profiles/saved.ts');
    const { bisect } = await import('../src/fleet/bisect.ts');
    const hostName = resolveHostName(ctx.engine.loaded, host);
    if (cancel) {
      const c = running.get(hostName);
      if (!c) throw new UserError(`no bisection runs on ${hostName}`);
      c.abort();
      return { text: `bisection on ${hostName} will stop after the step in flight` };
    }
    if (!good || !bad) throw new UserError('bisect needs GOOD and BAD profiles', 'usage: bisect GOOD BAD [--host H]');
    if (running.has(hostName))
      throw new UserError(`a bisection already runs on ${hostName}`, {
        kind: 'command',
        lead: 'cancel it with',
        command: 'bisect --cancel',
      });
    const abort = new AbortController();
    running.set(hostName, abort);
    try {
      const r = await bisect(ctx.engine, {
        good: resolveProfileName(ctx.engine, good),
        bad: resolveProfileName(ctx.engine, bad),
        hostName,
        actor: ctx.actor,
        origin: ctx.origin,
        role: ctx.role ?? 'viewer',
        port,
        signal: abort.signal,
        say: ctx.say,
        diagnoser: ctx.diagnoser,
      });
      if (json) return { text: JSON.stringify(r, null, 2), data: r };
      const lines = [
        r.cancelled
          ? `bisection cancelled after ${r.steps.length} launches; still suspect: ${r.culprit.join(', ')}`
          : r.confirmed
            ? `the change that breaks ${good}: ${r.culprit[0]} (as in ${bad}), found in ${r.steps.length} launches`
            : `no single setting crashes on its own; it takes a combination of: ${r.culprit.join(', ')} (${r.steps.length} launches)`,
        ...r.steps.map(
          (s, i) => `  step ${i + 1}: attempt #${s.attemptId} ${s.applied.join(', ')}: ${s.verdict} (${s.outcome})`,
        ),
      ];
      if (r.skipped.length) lines.push(`  not varied on their own (BAD unsets them): ${r.skipped.join(', ')}`);
      return { text: lines.join('\n'), data: r, exitCode: r.cancelled ? 1 : 0 };
    } finally {
      running.delete(hostName);
    }
  },
});

export default command;
