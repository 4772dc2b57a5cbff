// Launch: profile + host -> an attempt in the ledger -> the server started detached on the host -> its log
// followed until it is ready (ready line, /health 200, and a first real request answered) or it fails.
import { assertMayLaunch } from '../access/operator.ts';
import type { Role } from '../commands/define.ts';
import { UserError } from '../errors.ts';
import {
  archOf,
  type HardwareWarning,
  hardwareWarnings,
  type KnownBadEntry,
  loadHardwareCatalog,
} from '../fleet/hardware.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { exitedClassification, type Phase } from '../logs/classify/index.ts';
import { parseMilestone } from '../logs/milestones.ts';
import type { ResolvedProfile } from '../profiles/index.ts';
import type { Ending, Plan } from './backend.ts';
import { backendFor } from './backends.ts';
import type { DiagnoserFactory, Diagnosis } from './diagnosis.ts';
import { type Engine, hostOf, publish } from './engine.ts';
import { readComputeCap } from './host-info.ts';
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
  | { kind: 'failed'; attempt: Attempt; outcome: string; diagnosis: Diagnosis; exitCode: number | null };

export interface LaunchResult {
  outcome: 'dry-run' | 'ready' | 'crashed' | 'exited' | 'timeout' | 'hang' | 'ended';
  /** Known crashes of this configuration on this hardware (shown by a dry run). */
  warnings?: HardwareWarning[];
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
  const warnings = await knownCrashes(engine, req);
  if (req.dryRun) {
    return { outcome: 'dry-run', commandLine: plan.commandLine, script: plan.script, submit: plan.submit, warnings };
  }
  if (warnings.length > 0 && !req.confirmed) {
    const known = `${req.profile.name} on ${req.hostName} is known to crash:\n${warnings.map((w) => `  - ${w.text}${w.evidence.length ? ` (${w.evidence.join(', ')})` : ''}`).join('\n')}`;
    const yes = req.confirm ? await req.confirm(`${known}\nlaunch it anyway? [y/N]`) : false;
    if (!yes) {
      throw new UserError(
        req.confirm ? `not launched: ${known}` : known,
        'launch it anyway with --yes (e.g. to reproduce the crash for a bug report), or pick another configuration (next)',
      );
    }
  }
  const attempt = await backend.start(engine, req, plan);
  publish(engine, emit, { kind: 'started', attempt });
  const result = await follow(engine, attempt, req.firstRequest ?? true, emit, diagnoser);
  return plan.movedPort ? { ...result, movedPort: plan.movedPort } : result;
}

let hardwareCatalog: KnownBadEntry[] | undefined;

/** What the hardware catalog and this host's past attempts say about this configuration. */
export async function knownCrashes(
  engine: Engine,
  req: Pick<LaunchRequest, 'hostName' | 'profile'>,
): Promise<HardwareWarning[]> {
  const { host, cfg } = hostOf(engine, req.hostName);
  const cap = await readComputeCap(host, cfg).catch(() => null);
  hardwareCatalog ??= loadHardwareCatalog();
  const past = engine.attempts.list({ host: req.hostName, limit: 500 });
  return hardwareWarnings(req.profile, archOf(cap ?? undefined), hardwareCatalog, past);
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
          checking = confirmReady(engine, host, attempt, firstRequest).then(
            (ok) => {
              if (ok && !diag.crashed()) {
                outcome = 'ready';
                abort.abort();
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
    engine.attempts.update(attempt.id, { status: 'ready', readyAt: now, lastMilestone: 'ready' });
    engine.attempts.event(attempt.id, now, 'ready', {});
    const a = engine.attempts.get(attempt.id)!;
    publish(engine, emit, { kind: 'ready', attempt: a, seconds: (now - attempt.startedAt) / 1000 });
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

async function confirmReady(
  engine: Engine,
  host: ReturnType<typeof hostOf>['host'],
  attempt: Attempt,
  firstRequest: boolean,
): Promise<boolean> {
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
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        text: 'The capital city of France is',
        sampling_params: { max_new_tokens: 8, temperature: 0 },
      }),
      timeoutMs: 60_000,
    });
    engine.attempts.event(attempt.id, engine.clock.now(), 'first_request', { status: r.status });
    return r.status === 200;
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
