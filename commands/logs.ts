import { UserError } from '../src/errors.ts';
import { redactText } from '../src/redact.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'logs',
  summary: "the server log of a host's current (or a given) attempt",
  usage: 'logs [--host H] [--attempt N] [--node R] [--lines N] [--follow]',
  examples: ['logs', 'logs --lines 200', 'logs --attempt 3', 'logs --follow', 'logs --attempt 7 --node 1'],
  positionals: [],
  switches: ['follow'],
  args: (z) =>
    z.object({
      host: z.string().optional(),
      attempt: z.coerce.number().int().positive().optional(),
      node: z.coerce.number().int().min(0).optional().describe("a multi-node attempt's node (0 is the head)"),
      lines: z.coerce.number().int().min(1).max(100_000).default(50),
      follow: z.boolean().optional(),
    }),
  effect: 'read',
  async run(ctx, { host, attempt: id, node: rank, lines, follow }) {
    // Following never ends: only a terminal shows that; a chat message (or a scheduled report) cannot.
    if (follow && ctx.origin !== 'terminal')
      throw new UserError('logs --follow streams without end, which a Slack message cannot', {
        kind: 'command',
        lead: 'use',
        command: 'logs --lines N',
        tail: ', or the Logs button on the attempt message (it uploads the tail as a file)',
      });
    const { resolveHostName } = await import('../src/config/hosts.ts');
    const { hostOf } = await import('../src/lifecycle/engine.ts');
    const { nodeLabel, nodesOf } = await import('../src/lifecycle/nodes.ts');
    const { SNAPSHOT, script, TAIL } = await import('../src/lifecycle/scripts.ts');
    const { watchNode } = await import('../src/lifecycle/watch.ts');
    const hostName = id === undefined ? resolveHostName(ctx.engine.loaded, host) : undefined;
    const a =
      id !== undefined
        ? ctx.engine.attempts.get(id)
        : (ctx.engine.attempts.activeOn(hostName!) ?? ctx.engine.attempts.list({ host: hostName, limit: 1 })[0]);
    if (!a)
      throw new UserError(id !== undefined ? `no attempt #${id}` : `no attempts on ${hostName} yet`, {
        kind: 'command',
        lead: 'list them with',
        command: 'attempts',
      });
    const nodes = nodesOf(ctx.engine, a);
    const n = nodes.find((x) => x.rank === (rank ?? 0));
    if (!n)
      throw new UserError(
        `attempt #${a.id} has no node ${rank}`,
        `its nodes: ${nodes.map((x) => `${x.rank} (${x.host})`).join(', ')}`,
      );
    if (!n.logPath) throw new UserError(`attempt #${a.id} never started on ${n.host}, so it has no log there`);
    const label = nodes.length > 1 ? `, ${nodeLabel(n)}` : '';
    const { host: h } = hostOf(ctx.engine, n.host);
    if (!follow) {
      const r = await h.exec(script(TAIL, 'glm-tail', [n.logPath, String(lines)]), { maxOutputBytes: 8 << 20 });
      const text = redactText(r.stdout);
      return { text: `== ${n.logPath} on ${n.host} (attempt #${a.id}${label}, last ${lines} lines)\n${text}` };
    }
    // The snapshot and the offset to follow from come from one read: lines written in between are neither lost nor
    // shown twice. A last line still being written is left to the follower, which sees it whole.
    const snap = await h.exec(script(SNAPSHOT, 'glm-snapshot', [n.logPath, String(lines)]), {
      maxOutputBytes: 8 << 20,
    });
    const mark = snap.stdout.lastIndexOf('\nGLM_SIZE ');
    if (mark < 0) throw new UserError(`could not read ${n.logPath} on ${n.host}: ${snap.stderr.trim() || 'no output'}`);
    let shownText = snap.stdout.slice(0, mark);
    let offset = Number(snap.stdout.slice(mark + 10).trim());
    if (shownText && !shownText.endsWith('\n')) {
      const cut = shownText.lastIndexOf('\n') + 1;
      offset -= Buffer.byteLength(shownText.slice(cut));
      shownText = shownText.slice(0, cut);
    }
    ctx.say(redactText(shownText).trimEnd());
    const from = { ...n, logOffset: offset };
    await watchNode(
      ctx.engine,
      from,
      {
        onLine: (l) => {
          ctx.say(redactText(l.text));
          return undefined;
        },
      },
      undefined,
      false, // display only: the attempt's saved offset belongs to its watcher
    );
    return { text: `== attempt #${a.id}: the server is gone` };
  },
});

export default command;
