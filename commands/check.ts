import { z } from 'zod';
import { resolveLaunchHosts } from '../src/hosts/from-config.ts';
import { defineCommand } from '../src/runtime/define.ts';

const command = defineCommand({
  name: 'check',
  summary: 'for each host: reachable, authenticated, Python and SGLang versions, GPUs',
  usage: 'check [--host H|GROUP] [--json]',
  examples: ['check', 'check --host gpu1', 'check --host pair'],
  positionals: [],
  switches: ['json'],
  args: z.object({ host: z.string().optional(), json: z.boolean().optional() }),
  effect: 'read',
  async run(ctx, { host, json }) {
    const { describeError } = await import('../src/errors-render.ts');
    const { hostOf } = await import('../src/lifecycle/engine.ts');
    const { readGpus, readVersions } = await import('../src/lifecycle/host-info.ts');
    const group = host ? resolveLaunchHosts(ctx.engine.loaded, host) : undefined;
    const names = group ? group.hosts : Object.keys(ctx.engine.loaded.config.hosts);
    const results = await Promise.all(
      names.map(async (name) => {
        const { host: h, cfg } = hostOf(ctx.engine, name);
        try {
          const v = await readVersions(h, cfg, true);
          const g = await readGpus(h, cfg);
          return {
            host: name,
            reachable: true,
            authenticated: true,
            python: v.python ?? null,
            sglang: v.sglang ?? null,
            problem: v.problem ?? null,
            gpus: g.available ? g.gpus : null,
          };
        } catch (e) {
          const kind = (e as { details?: { kind?: string } }).details?.kind;
          return {
            host: name,
            reachable: kind === 'auth' || kind === 'host-key',
            authenticated: false,
            python: null,
            sglang: null,
            problem: describeError(e, ctx.log),
            gpus: null,
          };
        }
      }),
    );
    if (json)
      return {
        text: JSON.stringify(results, null, 2),
        data: results,
        exitCode: results.every((r) => r.sglang) ? 0 : 1,
      };
    const text = results
      .map((r) => {
        const ok = (b: boolean) => (b ? 'yes' : 'NO');
        const gpus = r.gpus
          ? r.gpus.length
            ? r.gpus
                .map((g) => `${g.index}: ${g.name} (sm ${g.computeCap}, ${g.memTotalMiB} MiB)`)
                .join('\n              ')
            : 'none'
          : 'nvidia-smi not found';
        return [
          `${r.host}:`,
          `  reachable:     ${ok(r.reachable)}`,
          `  authenticated: ${ok(r.authenticated)}`,
          `  python:        ${r.python ?? '-'}`,
          `  sglang:        ${r.sglang ?? '-'}`,
          `  GPUs:          ${gpus}`,
          ...(r.problem ? [`  problem:       ${r.problem.split('\n').join('\n                 ')}`] : []),
        ].join('\n');
      })
      .join('\n');
    // One server across several hosts needs the same SGLang (and Python) on each: torch.distributed and SGLang's
    // own messages between nodes are not versioned.
    const notes: string[] = [];
    if (group && group.hosts.length > 1) {
      for (const what of ['sglang', 'python'] as const) {
        const seen = new Set(results.map((r) => r[what]).filter(Boolean));
        if (seen.size > 1)
          notes.push(
            `the nodes of ${host} run different ${what === 'sglang' ? 'SGLang' : 'Python'} versions (${results.map((r) => `${r.host} ${r[what] ?? '?'}`).join(', ')}): a multi-node launch needs the same on every node`,
          );
      }
    }
    return {
      text: [text, ...notes].join('\n'),
      data: results,
      exitCode: results.every((r) => r.sglang) && notes.length === 0 ? 0 : 1,
    };
  },
});

export default command;
