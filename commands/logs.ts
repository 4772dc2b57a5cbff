import { z } from 'zod';
import { defineCommand } from '../src/commands/define.ts';
import { UserError } from '../src/errors.ts';
import { resolveHostName } from '../src/hosts/from-config.ts';
import { redactText } from '../src/redact.ts';
import { hostOf } from '../src/server/engine.ts';
import { script, TAIL } from '../src/server/scripts.ts';
import { watchAttempt } from '../src/server/watch.ts';

export default defineCommand({
  name: 'logs',
  summary: "the server log of a host's current (or a given) attempt",
  usage: 'logs [--host H] [--attempt N] [--lines N] [--follow]',
  examples: ['logs', 'logs --lines 200', 'logs --attempt 3', 'logs --follow'],
  positionals: [],
  switches: ['follow'],
  args: z.object({
    host: z.string().optional(),
    attempt: z.coerce.number().int().positive().optional(),
    lines: z.coerce.number().int().min(1).max(100_000).default(50),
    follow: z.boolean().optional(),
  }),
  effect: 'read',
  async run(ctx, { host, attempt: id, lines, follow }) {
    const hostName = id === undefined ? resolveHostName(ctx.engine.loaded, host) : undefined;
    const a =
      id !== undefined
        ? ctx.engine.attempts.get(id)
        : (ctx.engine.attempts.activeOn(hostName!) ?? ctx.engine.attempts.list({ host: hostName, limit: 1 })[0]);
    if (!a)
      throw new UserError(
        id !== undefined ? `no attempt #${id}` : `no attempts on ${hostName} yet`,
        'list them with: attempts',
      );
    if (!a.logPath) throw new UserError(`attempt #${a.id} never started, so it has no log`);
    const { host: h } = hostOf(ctx.engine, a.host);
    const r = await h.exec(script(TAIL, 'glm-tail', [a.logPath, String(lines)]), { maxOutputBytes: 8 << 20 });
    const text = redactText(r.stdout);
    if (!follow) return { text: `== ${a.logPath} on ${a.host} (attempt #${a.id}, last ${lines} lines)\n${text}` };
    ctx.say(text.trimEnd());
    const size = await h.exec(['sh', '-c', 'wc -c < "$1"', 'glm-size', a.logPath]);
    const from = { ...a, logOffset: Number(size.stdout.trim()) || 0 };
    await watchAttempt(ctx.engine, from, {
      onLine: (l) => {
        ctx.say(redactText(l.text));
        return undefined;
      },
    });
    return { text: `== attempt #${a.id}: the server is gone` };
  },
});
