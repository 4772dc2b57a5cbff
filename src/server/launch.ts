// Launch: profile + host -> an attempt in the ledger -> the server started detached on the host -> its log
// followed until it is ready (ready line, /health 200, and a first real request answered) or it fails.
import { distAddress } from '../config/load.ts';
import { RemoteError, UserError } from '../errors.ts';
import {
  archOf,
  type HardwareWarning,
  hardwareWarnings,
  type KnownBadEntry,
  loadHardwareCatalog,
  uncheckedArchNote,
} from '../fleet/hardware.ts';
import { type GpuPlan, gpusPerNode, needsVisibleDevices, planGpus } from '../fleet/leases.ts';
import { shq } from '../hosts/quote.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { exitedClassification, type Phase } from '../logs/classify/index.ts';
import { parseMilestone } from '../logs/milestones.ts';
import { commandLine, dialectForVersion, flagView, type ResolvedProfile, renderLaunch } from '../profiles/index.ts';
import { ENV_NAME } from '../profiles/schema.ts';
import { type Secrets, serverArgv, splitSecrets } from '../profiles/secrets.ts';
import { redactArgv, redactEnv, redactText, redactValue, SECRET } from '../redact.ts';
import { captureEnvironment } from '../reports/env.ts';
import { rememberApiKey, serverAuth, statusText } from './api-key.ts';
import type { DiagnoserFactory, Diagnosis } from './diagnosis.ts';
import { type Engine, hostOf, publish } from './engine.ts';
import { markFollower } from './follower.ts';
import { readComputeCap, readVersions } from './host-info.ts';
import { logStart, stampOf } from './log-read.ts';
import { failNodes, watchNodes } from './node-watch.ts';
import { advance, initialProgress, type Progress } from './progress.ts';
import { reconcile } from './reconcile.ts';
import { readRemoteState, runIdFor } from './remote-state.ts';
import { FREE_PORT, LAUNCH, script } from './scripts.ts';
import { stopNodes } from './stop.ts';
import { watchAttempt } from './watch.ts';

export interface LaunchRequest {
  profile: ResolvedProfile;
  hostName: string;
  actor: string;
  origin: string;
  dryRun?: boolean;
  /** After the ready line, send one real request: the seeds' NaN only showed on the first request. Default on. */
  firstRequest?: boolean;
  /** Serve on this port instead of the profile's. */
  port?: number;
  /** Attempts made together (a bisection) share this chat thread. */
  groupKey?: string;
  /** Launch even when the hardware catalog or the ledger says this configuration crashes on this host. */
  confirmed?: boolean;
  /** Asks the person (interactive faces); without it, a known crash needs `confirmed`. */
  confirm?: (question: string) => Promise<boolean>;
  /** A multi-node launch: every node's host, node 0 (the head, `hostName`) first. */
  nodes?: string[];
  /** The head's rendezvous port (a host group's dist_port); default: a free one found on the head. */
  distPort?: number;
  /** These GPUs (per node) instead of the profile's or the bot's choice. */
  gpus?: number[];
}

export type LaunchEvent =
  | { kind: 'command'; commandLine: string; dialectNote?: string }
  | { kind: 'started'; attempt: Attempt }
  | { kind: 'milestone'; text: string; progress: Progress }
  | { kind: 'ready'; attempt: Attempt; seconds: number }
  | { kind: 'failed'; attempt: Attempt; outcome: string; diagnosis: Diagnosis; exitCode: number | null }
  /** Someone (or the scheduler, or a bisection) stopped it; `text` says how it went. */
  | { kind: 'stopped'; attempt: Attempt; actor: string; text: string };

export interface LaunchResult {
  /** request_failed: the server is up but its first real request got an error status (e.g. 401); it keeps running. */
  outcome: 'dry-run' | 'ready' | 'crashed' | 'exited' | 'timeout' | 'hang' | 'request_failed';
  /** Known crashes of this configuration on this hardware (shown by a dry run). */
  warnings?: HardwareWarning[];
  /** Checks that could not run (e.g. the GPU architecture is unknown), for the person to know. */
  notes?: string[];
  commandLine: string;
  attempt?: Attempt;
  diagnosis?: Diagnosis;
}

async function renderFor(engine: Engine, req: LaunchRequest, profile: ResolvedProfile) {
  const { host, cfg } = hostOf(engine, req.hostName);
  let dialect = cfg.flag_dialect === 'auto' ? undefined : cfg.flag_dialect;
  let dialectNote: string | undefined;
  let sglangVersion: string | undefined;
  try {
    const v = await readVersions(host, cfg);
    sglangVersion = v.sglang;
    if (!dialect) dialect = dialectForVersion(v.sglang);
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

export async function launch(
  engine: Engine,
  req: LaunchRequest,
  emit: (e: LaunchEvent) => void,
  diagnoser: DiagnoserFactory,
): Promise<LaunchResult> {
  const hosts = req.nodes && req.nodes.length > 1 ? req.nodes : [req.hostName];
  if (hosts[0] !== req.hostName) throw new Error('launch: hostName must be node 0');
  const multi = hosts.length > 1;
  // --gpus picks the GPUs for this launch (on every node of a multi-node one), like the profile's gpus would.
  const profile: ResolvedProfile = req.gpus ? { ...req.profile, gpus: req.gpus } : req.profile;
  const perNode = profile.gpus?.length ?? gpusPerNode(profile.tp, hosts.length);
  if (multi && profile.gpus && profile.gpus.length * hosts.length !== (profile.tp ?? 1)) {
    throw new UserError(
      `a ${hosts.length}-node launch of tp ${profile.tp ?? 1} runs ${(profile.tp ?? 1) / hosts.length} GPUs per node, but ${profile.gpus.length} are named`,
      'name the GPUs of one node with --gpus (the same on every node), or leave them to the bot',
    );
  }
  const r = await renderFor(engine, req, profile);
  const port = req.port ?? profile.port;
  // A lease whose attempt ended while no bot watched (a restart) must not hold a launch back: ask the hosts first.
  if (!req.dryRun) await reconcile(engine, hosts, { skipStarting: true });
  const distInitAddr = multi ? await distInit(engine, hosts[0]!, req.distPort, req.dryRun) : undefined;
  const planAll = async (): Promise<NodePlan[]> => {
    const out: NodePlan[] = [];
    for (const [rank, hostName] of hosts.entries()) {
      const gpus = await planGpus(engine, hostName, perNode, profile.gpus, { dryRun: req.dryRun });
      // Each node runs the same server with its own host's Python and environment (the profile's env on top).
      const nodeCfg = hostOf(engine, hostName).cfg;
      // The node's host env may hold secrets of its own (a token in the config): they go the same way.
      const hostSplit = splitSecrets(nodeCfg.env, []);
      const hostEnv = { ...hostSplit.env, ...r.profileEnv };
      const env = needsVisibleDevices(gpus) ? { CUDA_VISIBLE_DEVICES: gpus.gpus.join(','), ...hostEnv } : hostEnv;
      const nodeArgs = multi
        ? ['--nnodes', String(hosts.length), '--node-rank', String(rank), '--dist-init-addr', distInitAddr!]
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
  };
  let plans = await planAll();
  emit({ kind: 'command', commandLine: shown(plans[0]!), dialectNote: r.dialectNote });
  const { warnings, notes } = await knownCrashes(engine, req);
  if (req.dryRun) return { outcome: 'dry-run', commandLine: shown(plans[0]!), warnings, notes };
  if (warnings.length > 0 && !req.confirmed) {
    const known = knownCrashText(req, warnings, notes);
    const yes = req.confirm ? await req.confirm(`${known}\nlaunch it anyway? [y/N]`) : false;
    if (!yes) throw knownCrashRefusal(req.confirm ? `not launched: ${known}` : known);
  }

  // A port one of our own servers uses is refused naming it; only then is a port nobody we know of answers on probed.
  for (const p of plans) {
    const c = engine.attempts.conflict(p.hostName, port, []);
    if (c) throw c.error;
  }
  for (const p of plans) await assertPortFree(engine, p.hostName, port);
  let opened = tryOpen(engine, req, r, port, plans, distInitAddr);
  for (let retry = 1; 'refused' in opened; retry++) {
    // GPUs the bot chose were taken by a launch that won the race for them: choose again (a few times) rather than
    // refuse a launch that fits on the GPUs still free. Named GPUs and a taken port are refused at once.
    if (retry > 3 || !plans.some((p) => p.gpus.chosen) || !/held by attempt/.test(opened.refused.message))
      throw opened.refused;
    plans = await planAll();
    opened = tryOpen(engine, req, r, port, plans, distInitAddr);
  }
  let attempt = opened.attempt;
  rememberApiKey(engine, attempt.id, profile);
  // The launching process answers for the attempt from now on: if it dies before it follows the log, another bot can
  // tell (src/server/follower.ts).
  markFollower(engine, attempt.id);
  // Once per host and SGLang version (cached in the ledger), for upstream reports; before the server starts, so
  // check_env's CUDA contexts never compete with the server's memory sizing. It never throws.
  await captureEnvironment(engine, req.hostName, { attemptId: attempt.id });
  // The head first: it opens the rendezvous store the workers connect to (they retry until it answers).
  for (const p of plans) {
    try {
      const where = await startNode(engine, attempt, p);
      if (p.rank === 0) {
        engine.attempts.update(attempt.id, { status: 'loading', ...where });
      } else {
        engine.attempts.updateNode(attempt.id, p.rank, where);
      }
    } catch (e) {
      // Whatever already started is stopped: a partial multi-node server only waits for the missing node.
      if (p.rank > 0) {
        await stopNodes(engine, engine.attempts.get(attempt.id)!).catch((err: Error) =>
          engine.log.error({ err: err.message, attempt: attempt.id }, 'could not stop the started nodes'),
        );
      }
      const kind = e instanceof RemoteError ? e.details.kind : undefined;
      const notStarted = kind === 'connect' || kind === 'host-key' || kind === 'auth' || e instanceof LaunchRefused;
      engine.attempts.finish(attempt.id, {
        status: 'failed',
        outcome: e instanceof LaunchRefused ? 'launch_refused' : notStarted ? 'launch_failed' : 'launch_unknown',
        detail: multi ? `node ${p.rank} (${p.hostName}): ${(e as Error).message}` : (e as Error).message,
        at: engine.clock.now(),
      });
      throw e;
    }
  }
  engine.attempts.event(attempt.id, engine.clock.now(), 'started', {
    pgid: engine.attempts.get(attempt.id)!.pgid,
    ...(multi ? { nodes: plans.map((p) => ({ rank: p.rank, host: p.hostName, gpus: p.gpus.gpus })) } : {}),
  });
  attempt = engine.attempts.get(attempt.id)!;
  publish(engine, emit, { kind: 'started', attempt });
  const result = await follow(engine, attempt, req.firstRequest ?? true, emit, diagnoser);
  return notes.length > 0 ? { ...result, notes } : result;
}

class LaunchRefused extends RemoteError {}

function knownCrashText(req: LaunchRequest, warnings: HardwareWarning[], notes: string[]): string {
  return `${req.profile.name} on ${req.hostName} is known to crash:\n${warnings.map((w) => `  - ${w.text}${w.evidence.length ? ` (${w.evidence.join(', ')})` : ''}`).join('\n')}${notes.map((n) => `\n  note: ${n}`).join('')}`;
}

const knownCrashRefusal = (text: string) =>
  new UserError(
    text,
    'launch it anyway with --yes (e.g. to reproduce the crash for a bug report), or pick another configuration (next)',
  );

/**
 * Every check that can refuse this launch, run without starting or stopping anything: the host answers and runs
 * SGLang, the configuration is not known to crash here (unless confirmed), and no attempt other than `replacing`
 * holds its port or named GPUs. "Stop #N and launch" runs it before the stop, so a refusal leaves #N running.
 * Throws the refusal the launch itself would give.
 */
export async function checkLaunch(engine: Engine, req: LaunchRequest, replacing?: number): Promise<void> {
  const hosts = req.nodes && req.nodes.length > 1 ? req.nodes : [req.hostName];
  const profile: ResolvedProfile = req.gpus ? { ...req.profile, gpus: req.gpus } : req.profile;
  await renderFor(engine, { ...req, dryRun: false }, profile);
  const { warnings, notes } = await knownCrashes(engine, req);
  if (warnings.length > 0 && !req.confirmed) throw knownCrashRefusal(knownCrashText(req, warnings, notes));
  const port = req.port ?? profile.port;
  for (const h of hosts) {
    const c = engine.attempts.conflict(h, port, profile.gpus ?? []);
    if (c && c.holder.id !== replacing) throw c.error;
  }
}

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
      const c = engine.attempts.conflict(p.hostName, port, p.gpus.gpus);
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
  const { host, cfg } = hostOf(engine, head);
  const addr = distAddress(cfg);
  if (!addr) {
    throw new UserError(
      `no address for the other nodes to reach ${head} on`,
      `set hosts.${head}.dist_addr in the config to its IP address on the network the nodes share`,
    );
  }
  if (port) return `${addr}:${port}`;
  try {
    const r = await host.exec(script(FREE_PORT, 'glm-free-port', ['20000']));
    const found = Number(r.stdout.trim());
    if (!Number.isInteger(found) || found <= 0) throw new Error(`no free port found: ${r.stdout.trim()}`);
    return `${addr}:${found}`;
  } catch (e) {
    if (dryRun) return `${addr}:PORT`;
    throw e;
  }
}

let hardwareCatalog: KnownBadEntry[] | undefined;

/**
 * What the hardware catalog and this host's past attempts say about this configuration, and which of those checks
 * could not run (an unknown architecture skips the catalog's per-architecture entries: said, never silent).
 */
async function knownCrashes(
  engine: Engine,
  req: LaunchRequest,
): Promise<{ warnings: HardwareWarning[]; notes: string[] }> {
  const { host, cfg } = hostOf(engine, req.hostName);
  let why = '';
  const cap = await readComputeCap(host, cfg).catch((e: Error) => {
    why = `nvidia-smi could not be read: ${e.message}`;
    return null;
  });
  hardwareCatalog ??= loadHardwareCatalog();
  const past = engine.attempts.list({ host: req.hostName, limit: 500 });
  const arch = archOf(cap ?? undefined);
  const notes: string[] = [];
  if (!arch) {
    why ||= cap === null ? 'no nvidia-smi on the host' : `unrecognised compute capability '${cap}'`;
    notes.push(uncheckedArchNote(req.profile, req.hostName, why, hardwareCatalog));
  }
  return { warnings: hardwareWarnings(req.profile, arch, hardwareCatalog, past), notes };
}

async function assertPortFree(engine: Engine, hostName: string, port: number): Promise<void> {
  const { host } = hostOf(engine, hostName);
  try {
    await host.http(port, { method: 'GET', path: '/health', timeoutMs: 2000 });
  } catch {
    return; // nothing answers: free
  }
  throw new UserError(
    `port ${port} on ${hostName} is already in use by a process this bot did not start`,
    'stop that process, or give the profile another port',
  );
}

/** Follows a loading attempt to its outcome. Also used to re-attach after a restart. */
export async function follow(
  engine: Engine,
  attempt: Attempt,
  firstRequest: boolean,
  emit: (e: LaunchEvent) => void,
  diagnoser: DiagnoserFactory,
): Promise<LaunchResult> {
  const { host } = hostOf(engine, attempt.host);
  markFollower(engine, attempt.id);
  let progress = initialProgress();
  const told = new Set<string>();
  let outcome: LaunchResult['outcome'] | undefined;
  const timeoutMs = engine.loaded.config.timeouts.ready_s * 1000;
  const abort = new AbortController();
  // Every node's log; a worker that crashes or exits ends the attempt, whatever the head is doing.
  const nodes = watchNodes(engine, attempt, diagnoser, abort);
  const { diag, early } = nodes;
  const timer = setTimeout(() => {
    outcome = 'timeout';
    abort.abort();
  }, timeoutMs);
  // A hang prints nothing, so it is noticed by the clock, not by a line.
  let hang: Diagnosis | null = null;
  const stallTimer = setInterval(() => {
    hang = diag.stalled?.(engine.clock.now()) ?? null;
    if (hang && !outcome) {
      outcome = 'hang';
      abort.abort();
    }
  }, 250);
  let checking: Promise<void> | undefined;
  let refused: string | undefined;
  let readyStamp: number | undefined;

  await watchAttempt(
    engine,
    attempt,
    {
      onLine: (line) => {
        diag.push(line.text, line.lineNo);
        early.check();
        if (diag.crashed()) return undefined; // keep reading until the server is gone: later lines may matter
        const m = parseMilestone(line.text);
        if (!m) return undefined;
        const step = advance(progress, m);
        progress = step.progress;
        // Every TP rank logs the same milestone: tell it once.
        if (step.text && !told.has(step.text)) {
          told.add(step.text);
          engine.attempts.update(attempt.id, { lastMilestone: step.text });
          engine.attempts.event(attempt.id, engine.clock.now(), 'milestone', { text: step.text });
          emit({ kind: 'milestone', text: step.text, progress });
          engine.notifier?.progress(attempt, step.text, progress.stage);
        }
        if (m.kind === 'ready' && !checking) {
          readyStamp = stampOf(line.text);
          checking = confirmReady(engine, host, attempt, firstRequest).then(
            async (r) => {
              if (r === true && !diag.crashed()) {
                outcome = 'ready';
                abort.abort();
              } else if (typeof r === 'string') {
                // An answer with an error status: a crash it caused shows in the log within moments (and wins);
                // otherwise it is the verdict now, not after timeouts.ready_s.
                await engine.clock.sleep(1000);
                if (!diag.crashed() && !outcome) {
                  refused = r;
                  outcome = 'request_failed';
                  abort.abort();
                }
              }
            },
            () => {},
          );
        }
        return undefined;
      },
    },
    abort.signal,
  );
  clearTimeout(timer);
  clearInterval(stallTimer);
  await checking;
  const nodeFailure = await nodes.settle(outcome !== 'ready' && outcome !== 'hang' && outcome !== 'timeout');
  if (nodeFailure && outcome !== 'ready') {
    const f = await failNodes(engine, attempt, nodeFailure, emit);
    return { outcome: 'crashed', commandLine: attempt.commandLine, attempt: f.attempt, diagnosis: f.diagnosis };
  }

  if (outcome === 'ready' && !diag.crashed()) {
    const now = engine.clock.now();
    // When the server got ready, by its own log (a follower that re-attached late notices it later than that).
    const start =
      readyStamp === undefined || !attempt.logPath ? undefined : await logStart(engine, attempt.host, attempt.logPath);
    const readyAt =
      start !== undefined && readyStamp !== undefined
        ? Math.min(now, attempt.startedAt + Math.max(0, readyStamp - start))
        : now;
    engine.attempts.update(attempt.id, { status: 'ready', readyAt, lastMilestone: 'ready' });
    engine.attempts.event(attempt.id, now, 'ready', {});
    const a = engine.attempts.get(attempt.id)!;
    publish(engine, emit, { kind: 'ready', attempt: a, seconds: (readyAt - attempt.startedAt) / 1000 });
    return { outcome: 'ready', commandLine: attempt.commandLine, attempt: a };
  }
  if (outcome === 'hang' && hang) {
    // The server still runs (someone may want a py-spy dump): report, keep the attempt live, leave stopping to people.
    const d: Diagnosis = hang;
    engine.attempts.update(attempt.id, { classification: d });
    engine.attempts.event(attempt.id, engine.clock.now(), 'hang', { summary: d.summary });
    const a = engine.attempts.get(attempt.id)!;
    publish(engine, emit, { kind: 'failed', attempt: a, outcome: 'hang', diagnosis: d, exitCode: null });
    return { outcome: 'hang', commandLine: attempt.commandLine, attempt: a, diagnosis: d };
  }
  if (outcome === 'request_failed' && refused) {
    // The server is up and keeps its GPUs (a wrong key is fixed by stopping it and launching again): live, reported.
    const d: Diagnosis = {
      category: 'first_request_failed',
      phase: 'first_request',
      summary: `the server is up, but its first request (POST /generate) was answered ${refused}`,
      evidence: [],
      rank: null,
      dedupKey: `first_request/${refused.split(':')[0]}`,
      confidence: 1,
    };
    engine.attempts.update(attempt.id, { classification: d, lastMilestone: `first request: ${refused}` });
    const a = engine.attempts.get(attempt.id)!;
    publish(engine, emit, { kind: 'failed', attempt: a, outcome: 'request_failed', diagnosis: d, exitCode: null });
    return { outcome: 'request_failed', commandLine: attempt.commandLine, attempt: a, diagnosis: d };
  }
  if (outcome === 'timeout') {
    // Like a hang, the server still runs and still holds its GPUs: the attempt stays live (its lease with it) until
    // someone stops it or it ends; closing it here would free GPUs that are still in use.
    const d = diag.result();
    engine.attempts.event(attempt.id, engine.clock.now(), 'ready_timeout', {
      seconds: timeoutMs / 1000,
      stage: progress.stage,
    });
    return {
      outcome: 'timeout',
      commandLine: attempt.commandLine,
      attempt: engine.attempts.get(attempt.id),
      diagnosis: d,
    };
  }
  // The server is gone, or the watch ended for another reason: the host's record and the log decide the outcome.
  return recordExit(engine, attempt, diag.result(), emit);
}

/** true: ready; false: not (yet) answering; a string: the first request's error status and body's first line. */
async function confirmReady(
  engine: Engine,
  host: ReturnType<typeof hostOf>['host'],
  attempt: Attempt,
  firstRequest: boolean,
): Promise<boolean | string> {
  for (let i = 0; i < 20; i++) {
    try {
      const h = await host.http(attempt.port, { method: 'GET', path: '/health', timeoutMs: 5000 });
      if (h.status === 200) break;
    } catch {
      // not up yet
    }
    if (i === 19) return false;
    await engine.clock.sleep(250);
  }
  if (!firstRequest) return true;
  try {
    const r = await host.http(attempt.port, {
      method: 'POST',
      path: '/generate',
      headers: { 'content-type': 'application/json', ...(await serverAuth(engine, attempt)) },
      body: JSON.stringify({
        text: 'The capital city of France is',
        sampling_params: { max_new_tokens: 8, temperature: 0 },
      }),
      timeoutMs: 60_000,
    });
    engine.attempts.event(attempt.id, engine.clock.now(), 'first_request', { status: r.status });
    return r.status === 200 ? true : statusText(r.status, r.body);
  } catch (e) {
    engine.attempts.event(attempt.id, engine.clock.now(), 'first_request', { error: (e as Error).message });
    return false;
  }
}

export async function recordExit(
  engine: Engine,
  attempt: Attempt,
  fromLog: Diagnosis,
  emit: (e: LaunchEvent) => void,
): Promise<LaunchResult> {
  const { host, cfg } = hostOf(engine, attempt.host);
  let exitCode: number | null = null;
  try {
    const st = await readRemoteState(host, cfg, runIdFor(attempt));
    if (st.state !== 'none') exitCode = st.exitCode;
  } catch {
    // unreachable now: the outcome still stands from the log
  }
  // The head is gone: workers of a multi-node server would wait for it forever.
  if (attempt.nodeHosts.length > 1) {
    await stopNodes(engine, attempt, [0]).catch((e: Error) =>
      engine.log.error({ err: e.message, attempt: attempt.id }, 'could not stop the worker nodes'),
    );
  }
  // Exited non-zero with nothing in the log: a crash of unknown cause, never `none`.
  const diagnosis =
    fromLog.category === 'none' && exitCode !== null && exitCode !== 0
      ? exitedClassification(fromLog.phase as Phase, { code: exitCode, signal: null }, null)
      : fromLog;
  const crashed = diagnosis.category !== 'none' || (exitCode !== null && exitCode !== 0);
  const outcome = crashed ? diagnosis.category : 'exited';
  const closed = engine.attempts.finish(attempt.id, {
    status: crashed ? 'crashed' : 'exited',
    outcome,
    detail: diagnosis.summary,
    exitCode,
    at: engine.clock.now(),
  });
  engine.attempts.update(attempt.id, { classification: diagnosis });
  const a = engine.attempts.get(attempt.id)!;
  // A stop that raced us already closed the attempt as stopped: report what the ledger says.
  if (closed) publish(engine, emit, { kind: 'failed', attempt: a, outcome, diagnosis, exitCode });
  return { outcome: crashed ? 'crashed' : 'exited', commandLine: attempt.commandLine, attempt: a, diagnosis };
}
