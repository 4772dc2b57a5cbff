// The direct backend: the server runs as a process group the bot starts over SSH on each node's host (setsid, a run
// directory with its PGID, start time and exit status), found again by that record after a restart.
import { distAddress } from '../config/load.ts';
import { RemoteError, UserError } from '../errors.ts';
import { shq } from '../hosts/quote.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { commandLine, dialectForVersion, flagView, type ResolvedProfile, renderLaunch } from '../profiles/index.ts';
import { ENV_NAME } from '../profiles/schema.ts';
import { type Secrets, serverArgv, splitSecrets } from '../profiles/secrets.ts';
import { redactArgv, redactEnv, redactText, redactValue, SECRET } from '../redact.ts';
import type { Opened, Plan, ServerBackend, ServerState } from './backend.ts';
import { type Engine, hostOf } from './engine.ts';
import { captureEnvironment } from './env.ts';
import { markFollower } from './follower.ts';
import { assertLaunchFlags, flagsContext, flagsSource, hostFlags } from './host-flags.ts';
import { pythonEnv, readVersions } from './host-info.ts';
import type { LaunchRequest } from './launch/types.ts';
import {
  findFreePort,
  type GpuPlan,
  gpusPerNode,
  needsVisibleDevices,
  type PortPlan,
  planGpus,
  planPort,
} from './leases.ts';
import type { NodeRef } from './nodes.ts';
import { reconcileDirect } from './reconcile-direct.ts';
import { readRemoteState, runIdFor } from './remote-state.ts';
import { FOLLOW, LAUNCH, script } from './scripts.ts';
import { stopNodes } from './stop-nodes.ts';

async function renderFor(engine: Engine, req: LaunchRequest, profile: ResolvedProfile) {
  const { host, cfg } = hostOf(engine, req.hostName);
  let dialect = cfg.flag_dialect === 'auto' ? undefined : cfg.flag_dialect;
  let dialectNote: string | undefined;
  let sglangVersion: string | undefined;
  let versions: Awaited<ReturnType<typeof readVersions>> | undefined;
  // Asked in the server's own environment (bin_dirs, env_file, the host's and the profile's env), as the launch runs it.
  const pyEnv = pythonEnv(cfg, profile.env);
  try {
    versions = await readVersions(host, cfg, false, pyEnv);
    sglangVersion = versions.sglang;
    if (!dialect) dialect = dialectForVersion(versions.sglang);
  } catch (e) {
    if (!req.dryRun) throw e;
    dialectNote = `host unreachable (${(e as Error).message}); assumed the --nsa-* flag names`;
  }
  // Secrets leave the profile here: the marked profile is what is rendered, shown and stored; the values go to the
  // host on the launch script's stdin (src/profiles/secrets.ts).
  const split = splitSecrets(profile.env, profile.extra_args);
  const marked = { ...profile, env: split.env, extra_args: split.extraArgs };
  const rendered = renderLaunch(marked, { python: cfg.python, dialect: dialect ?? 'nsa', portOverride: req.port });
  const extraStart = rendered.argv.length - split.extraArgs.length;
  // The flags and values the host's own SGLang takes (its --help): refused here, before anything is started. A dry
  // run on an unreachable host is checked against the shipped table, as any host that cannot be asked.
  const flags = await hostFlags(
    flagsContext(engine, req.hostName, pyEnv),
    versions?.sglang,
    versions ? versions.problem : 'the host is unreachable',
  );
  assertLaunchFlags(flags, req.hostName, profile.name, rendered.argv, extraStart);
  if (flags.source === 'shipped' && versions) {
    const note = `flags checked against ${flagsSource(flags, req.hostName)}`;
    dialectNote = dialectNote ? `${dialectNote}; ${note}` : note;
  }
  // Host env first, so a profile can override it for one configuration.
  const env = { ...cfg.env, ...rendered.env };
  return {
    host,
    cfg,
    argv: rendered.argv,
    env,
    profileEnv: rendered.env,
    dialectNote,
    sglangVersion,
    marked,
    secrets: split.secrets,
    needs: split.needs,
    extraStart,
  };
}

/** One node's share of a launch: where, with which GPUs, and the exact argv and env it runs. */
interface NodePlan {
  rank: number;
  hostName: string;
  gpus: GpuPlan;
  /** With SECRET markers where the secrets go. */
  argv: string[];
  /** Without secrets: those are in `secrets` and `needs`. */
  env: Record<string, string>;
  /** Secret values given with this launch (written to the host's secrets file), by host-side name. */
  secrets: Secrets;
  /** Every secret name the server needs from the host. */
  needs: string[];
  extraStart: number;
}

function shown(p: NodePlan): string {
  return redactText(commandLine({ argv: redactArgv(p.argv), env: redactEnv(p.env) }));
}

interface DirectPlan {
  profile: ResolvedProfile;
  hosts: string[];
  multi: boolean;
  port: number;
  rendered: Awaited<ReturnType<typeof renderFor>>;
  plans: NodePlan[];
  distInitAddr: string | undefined;
  perNode: number;
}

function profileOf(req: LaunchRequest): ResolvedProfile {
  // --gpus picks the GPUs for this launch (on every node of a multi-node one), like the profile's gpus would.
  return req.gpus ? { ...req.profile, gpus: req.gpus } : req.profile;
}

async function planAll(engine: Engine, req: LaunchRequest, d: Omit<DirectPlan, 'plans'>): Promise<NodePlan[]> {
  const r = d.rendered;
  const out: NodePlan[] = [];
  for (const [rank, hostName] of d.hosts.entries()) {
    const gpus = await planGpus(engine, hostName, d.perNode, d.profile.gpus, {
      dryRun: req.dryRun,
      groupKey: req.groupKey,
    });
    // Each node runs the same server with its own host's Python and environment (the profile's env on top).
    const nodeCfg = hostOf(engine, hostName).cfg;
    // The node's host env may hold secrets of its own (a token in the config): they go the same way.
    const hostSplit = splitSecrets(nodeCfg.env, []);
    const hostEnv = { ...hostSplit.env, ...r.profileEnv };
    const env = needsVisibleDevices(gpus) ? { CUDA_VISIBLE_DEVICES: gpus.gpus.join(','), ...hostEnv } : hostEnv;
    const nodeArgs = d.multi
      ? ['--nnodes', String(d.hosts.length), '--node-rank', String(rank), '--dist-init-addr', d.distInitAddr!]
      : [];
    const secrets = { ...hostSplit.secrets, ...r.secrets };
    const needs = [...new Set([...hostSplit.needs, ...r.needs])].sort();
    out.push({
      rank,
      hostName,
      gpus,
      argv: [nodeCfg.python, ...r.argv.slice(1), ...nodeArgs],
      env: Object.fromEntries(Object.entries(env).filter(([, v]) => v !== SECRET)),
      secrets,
      needs,
      extraStart: r.extraStart,
    });
  }
  return out;
}

async function plan(
  engine: Engine,
  req: LaunchRequest,
  reconcileHosts: (hosts: string[]) => Promise<unknown>,
): Promise<Plan> {
  const hosts = req.nodes && req.nodes.length > 1 ? req.nodes : [req.hostName];
  if (hosts[0] !== req.hostName) throw new Error('launch: hostName must be node 0');
  const multi = hosts.length > 1;
  const profile = profileOf(req);
  const perNode = profile.gpus?.length ?? gpusPerNode(profile.tp, hosts.length);
  if (multi && profile.gpus && profile.gpus.length * hosts.length !== (profile.tp ?? 1)) {
    throw new UserError(
      `a ${hosts.length}-node launch of tp ${profile.tp ?? 1} runs ${(profile.tp ?? 1) / hosts.length} GPUs per node, but ${profile.gpus.length} are named`,
      'name the GPUs of one node with --gpus (the same on every node), or leave them to the bot',
    );
  }
  // A lease whose attempt ended while no bot watched (a restart) must not hold a launch back: ask the hosts first.
  if (!req.dryRun) await reconcileHosts(hosts);
  // A launch that may move takes its free port now: the command line shown and stored is the one that runs.
  const wanted = req.port ?? profile.port;
  const moved: PortPlan | undefined =
    req.movePort && !req.dryRun ? await planPort(engine, hosts, wanted, { move: true }) : undefined;
  const port = moved?.port ?? wanted;
  const rendered = await renderFor(engine, port === wanted ? req : { ...req, port }, profile);
  const distInitAddr = multi ? await distInit(engine, hosts[0]!, req.distPort, req.dryRun) : undefined;
  const base = { profile, hosts, multi, port, rendered, distInitAddr, perNode };
  const plans = await planAll(engine, req, base);
  const detail: DirectPlan = { ...base, plans };
  return {
    commandLine: shown(plans[0]!),
    dialectNote: rendered.dialectNote,
    detail,
    ...(moved?.movedBecause ? { movedPort: { port, movedBecause: moved.movedBecause } } : {}),
  };
}

/** Leases the port and GPUs in the ledger (choosing GPUs again when a racing launch took them) and opens the attempt. */
async function open(engine: Engine, req: LaunchRequest, p: Plan): Promise<Opened> {
  const d = p.detail as DirectPlan;
  let plans = d.plans;
  const { port } = d;
  await planPort(
    engine,
    plans.map((n) => n.hostName),
    port,
  );
  let opened = tryOpen(engine, req, d.rendered, port, plans, d.distInitAddr);
  for (let retry = 1; 'refused' in opened; retry++) {
    // GPUs the bot chose were taken by a launch that won the race for them: choose again (a few times) rather than
    // refuse a launch that fits on the GPUs still free. Named GPUs and a taken port are refused at once.
    if (retry > 3 || !plans.some((n) => n.gpus.chosen) || !/held by attempt/.test(opened.refused.message))
      throw opened.refused;
    plans = await planAll(engine, req, d);
    opened = tryOpen(engine, req, d.rendered, port, plans, d.distInitAddr);
  }
  const attempt = opened.attempt;
  // The launching process answers for the attempt from now on: if it dies before it follows the log, another bot can
  // tell (src/lifecycle/follower.ts).
  markFollower(engine, attempt.id);
  return { attempt, plan: { ...p, detail: { ...d, plans } satisfies DirectPlan } };
}

/** Captures the host's environment once, then starts every node, head first; a node that fails closes the attempt. */
async function startNodes(engine: Engine, req: LaunchRequest, { attempt, plan: p }: Opened): Promise<Attempt> {
  const { plans, multi } = p.detail as DirectPlan;
  // Once per host and SGLang version (cached in the ledger), for upstream reports; before the server starts, so
  // check_env's CUDA contexts never compete with the server's memory sizing. It never throws.
  await captureEnvironment(engine, req.hostName, { attemptId: attempt.id });
  // The head first: it opens the rendezvous store the workers connect to (they retry until it answers).
  for (const n of plans) {
    try {
      const where = await startNode(engine, attempt, n);
      if (n.rank === 0) {
        engine.attempts.update(attempt.id, { status: 'loading', ...where });
      } else {
        engine.attempts.updateNode(attempt.id, n.rank, where);
      }
    } catch (e) {
      // Whatever already started is stopped: a partial multi-node server only waits for the missing node.
      if (n.rank > 0) {
        await stopNodes(engine, engine.attempts.get(attempt.id)!).catch((err: Error) =>
          engine.log.error({ err: err.message, attempt: attempt.id }, 'could not stop the started nodes'),
        );
      }
      const kind = e instanceof RemoteError ? e.details.kind : undefined;
      const notStarted = kind === 'connect' || kind === 'host-key' || kind === 'auth' || e instanceof LaunchRefused;
      engine.attempts.finish(attempt.id, {
        status: 'failed',
        outcome: e instanceof LaunchRefused ? 'launch_refused' : notStarted ? 'launch_failed' : 'launch_unknown',
        detail: multi ? `node ${n.rank} (${n.hostName}): ${(e as Error).message}` : (e as Error).message,
        at: engine.clock.now(),
      });
      throw e;
    }
  }
  engine.attempts.event(attempt.id, engine.clock.now(), 'started', {
    pgid: engine.attempts.get(attempt.id)!.pgid,
    ...(multi ? { nodes: plans.map((n) => ({ rank: n.rank, host: n.hostName, gpus: n.gpus.gpus })) } : {}),
  });
  return engine.attempts.get(attempt.id)!;
}

async function state(engine: Engine, attempt: Attempt): Promise<ServerState> {
  const { host, cfg } = hostOf(engine, attempt.host);
  const st = await readRemoteState(host, cfg, runIdFor(attempt));
  if (st.state === 'none') return { state: 'none', exitCode: null, text: 'no record on the host' };
  return {
    state: st.state === 'dead' ? 'ended' : 'running',
    exitCode: st.exitCode,
    text: st.state,
    uptimeS: st.uptimeS,
  };
}

export const directBackend: ServerBackend = {
  kind: 'direct',
  plan,
  open,
  startNodes,
  admitted: async (engine, attempt) => ({ attempt: engine.attempts.get(attempt.id) ?? attempt }),
  state,
  followArgv(_engine, node: NodeRef, offset) {
    return script(FOLLOW, 'glm-follow', [node.logPath ?? '', String(offset), String(node.pgid), node.pgidStart ?? '']);
  },
  async nodeGone(engine, node) {
    const { host, cfg } = hostOf(engine, node.host);
    const st = await readRemoteState(host, cfg, node.runId);
    return st.state === 'none' || st.state === 'dead';
  },
  stop: (engine, attempt, skipRanks) => stopNodes(engine, attempt, skipRanks),
  reconcile: reconcileDirect,
};

class LaunchRefused extends RemoteError {}

/**
 * Opens the attempt with its leases on every node, or says why not: the ledger's answer first (it names who holds
 * what), then attempts.open, which checks and inserts in one transaction.
 */
function tryOpen(
  engine: Engine,
  req: LaunchRequest,
  r: Awaited<ReturnType<typeof renderFor>>,
  port: number,
  plans: NodePlan[],
  distInitAddr: string | undefined,
): { attempt: Attempt } | { refused: UserError } {
  const head = plans[0]!;
  const stored: ResolvedProfile = { ...req.profile, env: r.marked.env, extra_args: r.marked.extra_args };
  try {
    for (const p of plans) {
      const c = engine.attempts.conflict(p.hostName, port, p.gpus.gpus, req.groupKey);
      if (c) return { refused: c.error };
    }
    const attempt = engine.attempts.open({
      host: req.hostName,
      profile: req.profile.name,
      // The marked profile: the ledger keeps markers, the host keeps the values (a re-launch takes them from there).
      profileJson: JSON.stringify(redactValue(stored)),
      flags: redactValue(flagView(stored)),
      argv: redactArgv(head.argv),
      env: {
        ...redactEnv(head.env),
        ...Object.fromEntries(head.needs.filter((n) => !n.startsWith('GLM_ARG_')).map((n) => [n, SECRET])),
      },
      commandLine: shown(head),
      port,
      gpus: head.gpus.gpus.join(','),
      sglangVersion: r.sglangVersion,
      actor: req.actor,
      origin: req.origin,
      startedAt: engine.clock.now(),
      groupKey: req.groupKey,
      leases: plans.map((p) => ({ host: p.hostName, gpus: p.gpus.gpus })),
      nodes: plans.slice(1).map((p) => ({ rank: p.rank, host: p.hostName, gpus: p.gpus.gpus })),
      distInitAddr,
    });
    return { attempt };
  } catch (e) {
    if (e instanceof UserError) return { refused: e };
    throw e;
  }
}

/** Starts one node's server detached on its host; returns where the host recorded it. */
async function startNode(engine: Engine, attempt: Attempt, p: NodePlan) {
  const { host, cfg } = hostOf(engine, p.hostName);
  // The environment and the secrets travel on stdin, never on a command line (visible in ps for the server's life).
  const stdin = [
    ...Object.entries(p.env).map(([k, v]) => `E ${envLine(k, v)}`),
    ...Object.entries(p.secrets).map(([k, v]) => `S ${envLine(k, v)}`),
  ].join('\n');
  const out = await host.exec(
    script(LAUNCH, 'glm-launch', [
      cfg.workdir,
      runIdFor(attempt, p.rank),
      cfg.env_file ?? '',
      cfg.bin_dirs.join(':'),
      p.gpus.gpus.join(','),
      p.needs.join(' '),
      '--',
      ...serverArgv(p.argv, p.extraStart),
    ]),
    { timeoutMs: 30_000, stdin: `${stdin}\n` },
  );
  const tag = out.stdout.trim().split('\n').pop() ?? '';
  if (!tag.startsWith('GLM_STARTED')) {
    const [, pgid, run, gpus] = tag.split(' ');
    const missing = tag.startsWith('GLM_NO_SECRET') ? tag.split(' ').slice(1).filter(Boolean) : [];
    const detail = tag.startsWith('GLM_RUNNING')
      ? `the host already runs a server on GPUs ${gpus} that this ledger does not know (pgid ${pgid}, ${run}), e.g. started by another bot`
      : missing.length
        ? `the host has no value for the secret${missing.length > 1 ? 's' : ''} ${missing.join(', ')} this profile needs (the ledger and variant files keep only a marker)`
        : tag === 'GLM_BUSY'
          ? 'another launch or stop holds the host lock'
          : tag.startsWith('GLM_RUN_EXISTS')
            ? `its run directory ${tag.slice(15)} already exists: another bot using a copy of this ledger (same ledger id ${engine.attempts.ledgerId}) shares the workdir ${cfg.workdir}`
            : `launcher failed (exit ${out.code}): ${out.stderr.trim().split('\n').slice(-3).join(' | ')}`;
    throw new LaunchRefused(`launch on ${p.hostName} refused: ${detail}`, {
      host: p.hostName,
      exitCode: out.code,
      stderrTail: out.stderr.slice(-2000),
      hint: tag.startsWith('GLM_RUNNING')
        ? `stop it where it was started, or on the host: kill -TERM -${pgid}; or launch on other GPUs (--gpus)`
        : missing.length
          ? `give it again with --set (e.g. --set env.${missing[0]!.startsWith('GLM_ARG_') ? 'NAME' : missing[0]}=...), or put it in the host's env_file`
          : tag.startsWith('GLM_RUN_EXISTS')
            ? `give each bot its own ledger (data_dir) or its own hosts.${p.hostName}.workdir; nothing was started or removed`
            : undefined,
    });
  }
  const [, pg, st, runDir] = tag.split(' ');
  return { pgid: Number(pg), pgidStart: st!, runDir: runDir!, logPath: `${runDir}/out.log` };
}

/** One `NAME='value'` line of a file the host's sh sources; the name checked, the value quoted once. */
function envLine(name: string, value: string): string {
  if (!ENV_NAME.test(name)) throw new UserError(`invalid environment variable name '${name}'`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a control character would end or corrupt the line
  if (/[\x00-\x1f\x7f]/.test(value)) {
    throw new UserError(
      `environment variable ${name}: its value has a control character (a newline?)`,
      'give it on one line',
    );
  }
  return `${name}=${shq(value)}`;
}

/** `addr:port` of the head's rendezvous store: its cluster address and the group's port, else a free one found there. */
async function distInit(engine: Engine, head: string, port: number | undefined, dryRun?: boolean): Promise<string> {
  const { cfg } = hostOf(engine, head);
  const addr = distAddress(cfg);
  if (!addr) {
    throw new UserError(
      `no address for the other nodes to reach ${head} on`,
      `set hosts.${head}.dist_addr in the config to its IP address on the network the nodes share`,
    );
  }
  if (port) return `${addr}:${port}`;
  try {
    return `${addr}:${await findFreePort(engine, head, 20000)}`;
  } catch (e) {
    if (dryRun) return `${addr}:PORT`;
    throw e;
  }
}
