import { defineCommand } from '../src/runtime/define.ts';

interface ProfileFlags {
  profile: string;
  problems: Array<{ path: string; message: string; fix?: string }>;
  /** Values the shipped table lacks: checked against the host above, so only said, never a failure on their own. */
  notes: Array<{ path: string; message: string; fix?: string }>;
}

/** `profiles: N checked, flags ok`, else each profile with problems and what they are. */
function profileLines(profiles: ProfileFlags[]): string[] {
  if (profiles.length === 0) return [];
  const bad = profiles.filter((p) => p.problems.length > 0);
  const head = `  profiles:      ${profiles.length} checked, ${bad.length === 0 ? 'flags ok' : `${bad.length} with flags the host's SGLang refuses`}`;
  const line = (i: ProfileFlags['problems'][number], note = '') =>
    `    ${note}${i.path}: ${i.message}${i.fix ? `\n      fix: ${i.fix}` : ''}`;
  const lines = bad.flatMap((p) => p.problems.map((i) => line(i)));
  const notes = profiles.flatMap((p) => p.notes.map((i) => line(i, 'note: ')));
  return [head, ...lines, ...notes];
}

const command = defineCommand({
  name: 'check',
  summary:
    "for each host: reachable, authenticated, Python and SGLang versions, GPUs, and its profiles' flags against the host's SGLang",
  usage: 'check [--host H|GROUP] [--profile P] [--json]',
  examples: ['check', 'check --host gpu1', 'check --host pair', 'check --host gpu1 --profile glm5-nvfp4'],
  positionals: [],
  switches: ['json'],
  args: (z) =>
    z.object({
      host: z.string().optional(),
      profile: z
        .string()
        .optional()
        .describe("check this profile's flags (default: the profiles that launch on the host without --host)"),
      json: z.boolean().optional(),
    }),
  effect: 'read',
  async run(ctx, { host, profile, json }) {
    const { resolveLaunchHosts } = await import('../src/config/hosts.ts');
    const { describeError } = await import('../src/errors-render.ts');
    const { hostOf } = await import('../src/lifecycle/engine.ts');
    const { pythonEnv, readGpus, readVersions } = await import('../src/lifecycle/host-info.ts');
    const { flagsContext, flagsSource, hostFlags, profileFlagIssues } = await import('../src/lifecycle/host-flags.ts');
    const { shippedTableNotes } = await import('../src/profiles/index.ts');
    const loaded = ctx.engine.loaded;
    const group = host ? resolveLaunchHosts(loaded, host) : undefined;
    const names = group ? group.hosts : Object.keys(loaded.config.hosts);
    const chosen = profile ? ctx.engine.profiles.get(profile) : undefined;
    // The profiles a plain `launch PROFILE` starts on this host: its own host (or group head), else the default.
    const launchesOn = (name: string) =>
      ctx.engine.profiles
        .names()
        .map((n) => ctx.engine.profiles.get(n))
        .filter((p) => {
          try {
            return resolveLaunchHosts(loaded, p.host).hosts[0] === name;
          } catch {
            return false;
          }
        });
    const results = await Promise.all(
      names.map(async (name) => {
        const { host: h, cfg } = hostOf(ctx.engine, name);
        try {
          // Asked as a launch asks (lifecycle/host-info.ts pythonEnv, the one builder of the server's environment:
          // bin_dirs, the host's env, its env_file, in the launch's order; a Slurm cluster's as its batch script).
          const hostEnv = pythonEnv(cfg);
          const v = await readVersions(h, cfg, true, hostEnv);
          const g = await readGpus(h, cfg);
          const f = await hostFlags(flagsContext(ctx.engine, name, hostEnv), v.sglang, v.problem);
          const checked = chosen ? [chosen] : launchesOn(name);
          const profiles = await Promise.all(
            checked.map(async (p): Promise<ProfileFlags> => {
              // A profile's own env (a venv's PATH, a PYTHONPATH) may pick another SGLang: its flags are checked
              // against that one, as its launch checks them.
              const env = pythonEnv(cfg, p.env);
              const own = env.key === hostEnv.key ? undefined : await readVersions(h, cfg, true, env);
              const pf = own ? await hostFlags(flagsContext(ctx.engine, name, env), own.sglang, own.problem) : f;
              const picked =
                own && own.sglang !== v.sglang
                  ? [
                      {
                        path: p.name,
                        message: `its env picks SGLang ${own.sglang ?? `none (${own.problem ?? 'no version printed'})`}: its flags are checked against ${flagsSource(pf, name)}`,
                      },
                    ]
                  : [];
              return {
                profile: p.name,
                problems: profileFlagIssues(pf, name, cfg, p),
                notes: [...picked, ...shippedTableNotes(p.name, p)],
              };
            }),
          );
          return {
            host: name,
            reachable: true,
            authenticated: true,
            python: v.python ?? null,
            sglang: v.sglang ?? null,
            problem: v.problem ?? null,
            gpus: g.available ? g.gpus : null,
            flags: { source: f.source, sglang: f.sglang ?? null, reason: f.reason ?? null, text: flagsSource(f, name) },
            profiles,
          };
        } catch (e) {
          const kind = (e as { details?: { kind?: string } }).details?.kind;
          return {
            host: name,
            reachable: kind === 'auth' || kind === 'host-key',
            authenticated: false,
            python: null,
            sglang: null,
            problem: describeError(e, ctx.log, ctx),
            gpus: null,
            flags: null,
            profiles: [] as ProfileFlags[],
          };
        }
      }),
    );
    const flagsOk = (r: (typeof results)[number]) => r.profiles.every((p) => p.problems.length === 0);
    if (json)
      return {
        text: JSON.stringify(results, null, 2),
        data: results,
        exitCode: results.every((r) => r.sglang && flagsOk(r)) ? 0 : 1,
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
          ...(r.flags ? [`  flags from:    ${r.flags.text}`] : []),
          ...profileLines(r.profiles),
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
      exitCode: results.every((r) => r.sglang && flagsOk(r)) && notes.length === 0 ? 0 : 1,
    };
  },
});

export default command;
