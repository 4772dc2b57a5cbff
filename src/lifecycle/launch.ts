// Launch: profile + host -> an attempt in the ledger -> the server started detached on the host -> its log
// followed until it is ready (ready line, /health 200, and a first real request answered) or it fails.
import { assertMayLaunch } from '../access/operator.ts';
import type { Role } from '../access/roles.ts';
import { UserError } from '../errors.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { exitedClassification, type Phase } from '../logs/classify/index.ts';
import type { DiagnoserFactory, Diagnosis } from '../logs/diagnosis.ts';
import { parseMilestone } from '../logs/milestones.ts';
import type { ResolvedProfile } from '../profiles/index.ts';
import { rememberApiKey, serverAuth, statusText } from './api-key.ts';
import type { Ending, Plan } from './backend.ts';
import { backendFor } from './backends.ts';
import { type Engine, hostOf, publish } from './engine.ts';
import { markFollower } from './follower.ts';
import {
  archOf,
  type HardwareWarning,
  hardwareWarnings,
  type KnownBadEntry,
  loadHardwareCatalog,
  uncheckedArchNote,
} from './hardware.ts';
import { readComputeCap, readVersions } from './host-info.ts';
import { logStart, stampOf } from './log-read.ts';
import { failNodes, watchNodes } from './node-watch.ts';
import { advance, initialProgress, type Progress } from './progress.ts';
import { watchAttempt } from './watch.ts';

export interface LaunchRequest {
  profile: ResolvedProfile;
  hostName: string;
  actor: string;
  origin: string;
  /** The asker's role: an operator may change only what access.operator_may_set allows (src/access/operator.ts). */
  role: Role;
  dryRun?: boolean;
  /** After the ready line, send one real request: the seeds' NaN only showed on the first request. Default on. */
  firstRequest?: boolean;
  /** Serve on this port instead of the profile's. */
  port?: number;
  /**
   * When the port is taken (by one of our servers or anything else), serve on a free one instead of refusing: for
   * a launch beside a running server of the same profile (a smoke's fresh launch). The direct backend; a cluster's
   * scheduler places its jobs itself.
   */
  movePort?: boolean;
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
  /**
   * ended: the backend (a scheduler) ended it before it ran; request_failed: the server is up but its first real
   * request got an error status (e.g. 401); it keeps running.
   */
  outcome: 'dry-run' | 'ready' | 'crashed' | 'exited' | 'timeout' | 'hang' | 'ended' | 'request_failed';
  /** Known crashes of this configuration on this hardware (shown by a dry run). */
  warnings?: HardwareWarning[];
  /** Checks that could not run (e.g. the GPU architecture is unknown), for the person to know. */
  notes?: string[];
  commandLine: string;
  attempt?: Attempt;
  diagnosis?: Diagnosis;
  /** A dry run on a cluster: the batch script exactly as it would be submitted, and the submission. */
  script?: string;
  submit?: string;
  /** The port it serves on, when `movePort` moved it off a taken one, and why. */
  movedPort?: Plan['movedPort'];
}

export async function launch(
  engine: Engine,
  req: LaunchRequest,
  emit: (e: LaunchEvent) => void,
  diagnoser: DiagnoserFactory,
): Promise<LaunchResult> {
  // Every launch passes here, whatever the face or command: what the asker's role may not set goes no further.
  assertMayLaunch(engine, req.profile, req.role);
  const backend = backendFor(engine, req.hostName);
  const plan = await backend.plan(engine, req);
  emit({ kind: 'command', commandLine: plan.commandLine, dialectNote: plan.dialectNote });
  const { warnings, notes } = await knownCrashes(engine, req);
  if (req.dryRun) {
    return {
      outcome: 'dry-run',
      commandLine: plan.commandLine,
      script: plan.script,
      submit: plan.submit,
      warnings,
      notes,
    };
  }
  if (warnings.length > 0 && !req.confirmed) {
    const known = knownCrashText(req, warnings, notes);
    const yes = req.confirm ? await req.confirm(`${known}\nlaunch it anyway? [y/N]`) : false;
    if (!yes) throw knownCrashRefusal(req.confirm ? `not launched: ${known}` : known);
  }
  const attempt = await backend.start(engine, req, plan);
  rememberApiKey(engine, attempt.id, req.profile);
  publish(engine, emit, { kind: 'started', attempt });
  const followed = await follow(engine, attempt, req.firstRequest ?? true, emit, diagnoser);
  const result = notes.length > 0 ? { ...followed, notes } : followed;
  return plan.movedPort ? { ...result, movedPort: plan.movedPort } : result;
}

function knownCrashText(req: LaunchRequest, warnings: HardwareWarning[], notes: string[]): string {
  return `${req.profile.name} on ${req.hostName} is known to crash:\n${warnings.map((w) => `  - ${w.text}${w.evidence.length ? ` (${w.evidence.join(', ')})` : ''}`).join('\n')}${notes.map((n) => `\n  note: ${n}`).join('')}`;
}

const knownCrashRefusal = (text: string) =>
  new UserError(
    text,
    'launch it anyway with --yes (e.g. to reproduce the crash for a bug report), or pick another configuration (next)',
  );

/**
 * Every check that can refuse this launch, run without starting or stopping anything: the asker's role may launch
 * it, its backend accepts the request as given, the host answers and runs SGLang, the configuration is not known to
 * crash here (unless confirmed), and no attempt other than `replacing` holds its port or named GPUs. "Stop #N and
 * launch" runs it before the stop, so a refusal leaves #N running. Throws the refusal the launch itself would give.
 */
export async function checkLaunch(engine: Engine, req: LaunchRequest, replacing?: number): Promise<void> {
  assertMayLaunch(engine, req.profile, req.role);
  const hosts = req.nodes && req.nodes.length > 1 ? req.nodes : [req.hostName];
  const profile: ResolvedProfile = req.gpus ? { ...req.profile, gpus: req.gpus } : req.profile;
  // A dry run's plan takes nothing (no leases, no ports) and refuses what the backend would (e.g. --gpus on Slurm).
  const backend = backendFor(engine, req.hostName);
  await backend.plan(engine, { ...req, dryRun: true });
  if (backend.kind === 'direct') {
    // The host the server would start on answers and runs SGLang (a cluster's login node need not have it).
    const { host, cfg } = hostOf(engine, req.hostName);
    await readVersions(host, cfg);
  }
  const { warnings, notes } = await knownCrashes(engine, req);
  if (warnings.length > 0 && !req.confirmed) throw knownCrashRefusal(knownCrashText(req, warnings, notes));
  const port = req.port ?? profile.port;
  for (const h of hosts) {
    const c = engine.attempts.conflict(h, port, profile.gpus ?? [], req.groupKey);
    if (c && (!c.holder || c.holder.id !== replacing)) throw c.error;
  }
}

let hardwareCatalog: KnownBadEntry[] | undefined;

/**
 * What the hardware catalog and this host's past attempts say about this configuration, and which of those checks
 * could not run (an unknown architecture skips the catalog's per-architecture entries: said, never silent).
 */
export async function knownCrashes(
  engine: Engine,
  req: Pick<LaunchRequest, 'hostName' | 'profile'>,
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

/** Follows a loading attempt to its outcome. Also used to re-attach after a restart. */
export async function follow(
  engine: Engine,
  attempt: Attempt,
  firstRequest: boolean,
  emit: (e: LaunchEvent) => void,
  diagnoser: DiagnoserFactory,
): Promise<LaunchResult> {
  // A scheduler's job may still wait in its queue: the log starts once it runs.
  const admitted = await backendFor(engine, attempt.host).admitted(engine, attempt, emit);
  if ('ended' in admitted) return recordEnding(engine, attempt, admitted.ended, emit);
  attempt = admitted.attempt;
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
  // A job's server listens on its compute node: the tunnel from the login node goes there.
  const address = attempt.serverAddr ?? undefined;
  for (let i = 0; i < 20; i++) {
    try {
      const h = await host.http(attempt.port, { method: 'GET', path: '/health', timeoutMs: 5000, address });
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
      address,
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
  const backend = backendFor(engine, attempt.host);
  let exitCode: number | null = null;
  let ending: Ending | undefined;
  try {
    const st = await backend.state(engine, attempt);
    if (st.state !== 'none') exitCode = st.exitCode;
    ending = st.ending;
  } catch {
    // unreachable now: the outcome still stands from the log
  }
  // The head is gone: workers of a multi-node server would wait for it forever.
  if (attempt.nodeHosts.length > 1) {
    await backend
      .stop(engine, attempt, [0])
      .catch((e: Error) =>
        engine.log.error({ err: e.message, attempt: attempt.id }, 'could not stop the worker nodes'),
      );
  }
  // A stop asked for (here or by another bot process) ended it: the stop's record, whoever writes first.
  if (engine.attempts.events(attempt.id).some((e) => e.kind === 'stop_requested')) {
    engine.attempts.finish(attempt.id, {
      status: 'stopped',
      outcome: 'stopped',
      detail: 'stopped on request',
      exitCode,
      at: engine.clock.now(),
    });
    return {
      outcome: 'exited',
      commandLine: attempt.commandLine,
      attempt: engine.attempts.get(attempt.id)!,
      diagnosis: fromLog,
    };
  }
  // A crash the log names wins; else the scheduler's own ending (time limit, preempted, ...) says what happened.
  if (fromLog.category === 'none' && ending) return recordEnding(engine, attempt, ending, emit, fromLog);
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

/** Closes an attempt with an ending its backend named (Slurm's TIMEOUT, PREEMPTED, a submit refused...). */
export function recordEnding(
  engine: Engine,
  attempt: Attempt,
  ending: Ending,
  emit: (e: LaunchEvent) => void,
  diagnosis?: Diagnosis,
): LaunchResult {
  const closed = engine.attempts.finish(attempt.id, { ...ending, at: engine.clock.now() });
  // Not a crash of the server: the scheduler ended it. The log's evidence (if any) stays with it.
  const d: Diagnosis = {
    category: 'none',
    phase: diagnosis?.phase ?? 'scheduler',
    evidence: diagnosis?.evidence ?? [],
    rank: null,
    dedupKey: `${ending.outcome}:${attempt.id}`,
    confidence: 1,
    summary: ending.detail,
    reason: `the scheduler's own record of the job: ${ending.outcome}`,
  };
  const a = engine.attempts.get(attempt.id)!;
  if (closed) {
    engine.attempts.event(attempt.id, engine.clock.now(), 'ended', { outcome: ending.outcome, detail: ending.detail });
    publish(engine, emit, {
      kind: 'failed',
      attempt: a,
      outcome: ending.outcome,
      diagnosis: d,
      exitCode: ending.exitCode,
    });
  }
  return { outcome: 'ended', commandLine: attempt.commandLine, attempt: a, diagnosis: d };
}
