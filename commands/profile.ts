import { redactEnv } from '../src/redact.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'profile',
  summary: 'show one profile fully resolved, with the exact command line',
  usage: 'profile NAME [--host H] [--json]',
  examples: ['profile glm5-nvfp4', 'profile glm5-attempt3 --json'],
  positionals: ['name'],
  switches: ['json'],
  args: (z) => z.object({ name: z.string(), host: z.string().optional(), json: z.boolean().optional() }),
  effect: 'read',
  async run(ctx, { name, host, json }) {
    const { resolveHostName } = await import('../src/config/hosts.ts');
    const { commandLine, flagView, renderLaunch } = await import('../src/profiles/index.ts');
    const p = ctx.engine.profiles.get(name);
    const hostName = resolveHostName(ctx.engine.loaded, host);
    const cfg = ctx.engine.loaded.config.hosts[hostName]!;
    const dialect = cfg.flag_dialect === 'auto' ? 'nsa' : cfg.flag_dialect;
    const r = renderLaunch(p, { python: cfg.python, dialect });
    const env = redactEnv({ ...cfg.env, ...r.env });
    const line = commandLine({ argv: r.argv, env });
    const data = {
      name: p.name,
      chain: p.chain,
      file: p.file,
      description: p.description,
      flags: flagView(p),
      env: redactEnv(p.env),
      host: hostName,
      commandLine: line,
    };
    if (json) return { text: JSON.stringify(data, null, 2), data };
    const flags = Object.entries(data.flags).map(([k, v]) => `  ${k}: ${v}`);
    return {
      text: [
        `${p.name}${p.description ? `: ${p.description}` : ''}`,
        `extends: ${p.chain.slice(1).join(' -> ') || '(none)'}`,
        `file: ${p.file}`,
        'settings:',
        ...flags,
        `command on ${hostName}${cfg.flag_dialect === 'auto' ? ' (--nsa-* names; launch picks by the installed SGLang version)' : ''}:`,
        `  ${line}`,
      ].join('\n'),
      data,
    };
  },
});

export default command;
