// Part src/smoke: owns smoke checks: prompts with expected answers, baselines, regressions.
// May import: access, config, errors.ts, format, hosts, ledger, lifecycle, logs, profiles.
//
// A smoke check: prompts with expected answers, streamed through /v1/chat/completions and the native /generate,
// against the server running on a host, or against a fresh launch of a profile that is stopped afterwards (to test
// a nightly SGLang build or a profile change). Launch and stop are the engine's own; nothing here starts a server
// another way.

import type { Role } from '../access/roles.ts';
import { UserError } from '../errors.ts';
import type { RemoteHost } from '../hosts/types.ts';
import type { Attempt } from '../ledger/attempts.ts';
import type { SmokeRow, Verdict } from '../ledger/smoke.ts';
import { serverAuth } from '../lifecycle/api-key.ts';
import { type Engine, hostOf } from '../lifecycle/engine.ts';
import { recordExit } from '../lifecycle/launch/outcome.ts';
import type { LaunchEvent } from '../lifecycle/launch/types.ts';
import { launch } from '../lifecycle/launch.ts';
import { gpusPerNode, launchBlocker } from '../lifecycle/leases.ts';
import { reconcile } from '../lifecycle/reconcile.ts';
import { readServerMetrics, type ServerMetrics } from '../lifecycle/sglang-metrics.ts';
import { stop } from '../lifecycle/stop.ts';
import type { DiagnoserFactory, Diagnosis } from '../logs/diagnosis.ts';
import type { ResolvedProfile } from '../profiles/index.ts';
import { type Answer, ask } from './ask.ts';
import { judge } from './checks.ts';
import { classifyDelta, type LogMark, type LogVerdict, markLog, readSince } from './logdelta.ts';
import { type EffectiveSmoke, effectiveSmoke } from './settings.ts';

export interface SmokeRequest {
  hostName: string;
  /** Smoke this profile: the running server if it serves it, else a launch of it. */
  profile?: string;
  /** Always launch (and stop) the profile, even if it is already running. */
  launch?: boolean;
  /**
   * Launch mode: serve the fresh launch on this port (refused when taken, as `launch --port` is); without it a taken
   * profile port is exchanged for a free one. Running mode: smoke the server on this port.
   */
  port?: number;
  budgetS?: number;
  actor: string;
  origin: string;
  /** The asker's role, for a launch (src/access/operator.ts). */
  role: Role;
}

export interface PromptResult {
  name: string;
  endpoint: Answer['endpoint'];
  ok: boolean;
  problems: string[];
  answer: string;
  tokens: number;
  ttftMs: number | null;
  decodeTokS: number | null;
}

/**
 * What a run is compared with. Two baselines that do not drift with a slow decline (each night a little slower than
 * the last, all within the threshold of the night before): the median of the last passing runs, and the best of the
 * month. A regressed run is never a pass, so it never lowers either.
 */
export interface Baseline {
  kind: 'median' | 'best';
  /** How a person reads it: "the median of the last 5 passing runs (#3-#7)", "smoke run #1 (2026-03-10 01:30)". */
  label: string;
  /** The runs it was made of, newest first. */
  runIds: number[];
  ttftMs: number | null;
  tokS: number | null;
}

export interface Comparison {
  /** The newest passing run (what `smoke --history` shows as "vs #"). */
  baselineId: number;
  baselineAt: number;
  /** Against the median baseline. */
  ttftMs: { now: number; then: number; pct: number } | null;
  tokS: { now: number; then: number; pct: number } | null;
  baselines: Baseline[];
  /** Each regression, naming the baseline it is against. */
  regressions: string[];
  /** The labels of the baselines a regression is against. */
  against: string[];
  thresholdPct: number;
}

/** How many recent passes the median baseline takes, and how far back the best one looks. */
export const MEDIAN_OF = 5;
export const BEST_WINDOW_MS = 30 * 24 * 3600_000;

export interface SmokeResult {
  row: SmokeRow;
  mode: 'running' | 'launch';
  attempt: Attempt | null;
  prompts: PromptResult[];
  health: { status: number | null; error?: string };
  log: { bytes: number; crashed: boolean; diagnosis: Diagnosis | null } | null;
  comparison: Comparison | null;
  /** What else happened: budget exceeded, launch failed, server stopped. */
  notes: string[];
  /** The server's own /metrics after the prompts (SGLang --enable-metrics), or why not; null: not smoked. */
  serverMetrics: ServerMetrics | { error: string } | null;
  /** The bot closed while the smoke's launch loaded: no verdict on the server (its row says `error`). */
  interrupted: boolean;
}

interface Hooks {
  say(text: string): void;
  onLaunchEvent?(e: LaunchEvent): void;
  diagnoser: DiagnoserFactory;
}

/**
 * The running server a smoke would test: the one on --port, else the newest one serving --profile, else the newest
 * on the host.
 */
function serverToSmoke(engine: Pick<Engine, 'attempts'>, req: SmokeRequest): Attempt | undefined {
  const all = engine.attempts.allActiveOn(req.hostName);
  if (req.port !== undefined && !req.launch) {
    const on = all.find((a) => a.port === req.port);
    if (!on)
      throw new UserError(
        `nothing this bot started serves on port ${req.port} of ${req.hostName}${all.length ? `: ${all.map((a) => `attempt #${a.id} (${a.profile}) on port ${a.port}`).join(', ')}` : ''}`,
        all.length
          ? `smoke one of those with --port, or launch one with: smoke --profile P --launch --port ${req.port}`
          : `smoke a fresh launch with: smoke --host ${req.hostName} --profile P --launch --port ${req.port}`,
      );
    return on;
  }
  return all.filter((a) => a.profile === req.profile).at(-1) ?? all.at(-1);
}

function profileOf(engine: Pick<Engine, 'profiles'>, name: string, attempt?: Attempt): ResolvedProfile {
  try {
    return engine.profiles.get(name);
  } catch (e) {
    // A running attempt whose profile file was renamed since: its own record still has the settings.
    if (attempt) return { ...(JSON.parse(attempt.profileJson) as ResolvedProfile), name };
    throw e;
  }
}

export async function runSmoke(engine: Engine, req: SmokeRequest, hooks: Hooks): Promise<SmokeResult> {
  const started = engine.clock.now();
  const wallStart = Date.now();
  const notes: string[] = [];
  // What runs there, as the host says now (an orphaned launch that got ready, a server that died unwatched).
  await reconcile(engine, [req.hostName], { skipStarting: true });
  let active = serverToSmoke(engine, req);
  let mode: 'running' | 'launch';
  if (req.launch) {
    if (!req.profile) throw new UserError('smoke --launch needs --profile P', 'e.g. smoke --launch --profile small');
    mode = 'launch';
    // Beside a running server of the profile, the fresh launch takes other GPUs and another port; when no GPUs are
    // free for it, the running server is what can be smoked, and the report says so. (A --port it holds is refused
    // by the launch, as `launch --port` is.)
    const same = active?.profile === req.profile && active.status === 'ready' ? active : undefined;
    const p = same ? profileOf(engine, req.profile) : undefined;
    const blocked =
      same && p
        ? await launchBlocker(engine, req.hostName, {
            count: p.gpus?.length ?? gpusPerNode(p.tp, 1),
            gpus: p.gpus,
          })
        : undefined;
    if (same && blocked) {
      mode = 'running';
      notes.push(`not a fresh launch: ${blocked.error.message}: smoked the running attempt #${same.id} instead`);
    } else active = undefined;
  } else if (active) {
    if (req.profile && active.profile !== req.profile)
      throw new UserError(
        `${req.hostName} serves ${active.profile} (attempt #${active.id}), not ${req.profile}`,
        `smoke what runs with: smoke --host ${req.hostName}; or stop it first to smoke ${req.profile} in a fresh launch`,
      );
    if (active.status !== 'ready')
      throw new UserError(
        `attempt #${active.id} on ${req.hostName} is still ${active.status}`,
        'wait until it is ready',
      );
    mode = 'running';
  } else {
    if (!req.profile)
      throw new UserError(
        `nothing runs on ${req.hostName}`,
        `smoke a fresh launch with: smoke --host ${req.hostName} --profile P`,
      );
    mode = 'launch';
  }
  const profileName = mode === 'launch' ? req.profile! : active!.profile;
  const profile = profileOf(engine, profileName, mode === 'running' ? active : undefined);
  const settings = effectiveSmoke(engine.loaded.config.smoke, profileName, profile.smoke);
  const budgetMs = (req.budgetS ?? settings.budgetS) * 1000;
  const deadline = wallStart + budgetMs;
  const store = engine.ledger.smoke;

  let attempt: Attempt | null = mode === 'running' ? active! : null;
  let prompts: PromptResult[] = [];
  let health: SmokeResult['health'] = { status: null, error: 'not checked' };
  let log: LogVerdict | null = null;
  let launchFailure: Diagnosis | null = null;
  let serverMetrics: SmokeResult['serverMetrics'] = null;
  let interrupted = false;

  if (mode === 'launch') {
    const l = await launchWithin(engine, req, profile, deadline, hooks, notes);
    attempt = l.attempt;
    launchFailure = l.diagnosis;
    interrupted = l.interrupted === true;
  }
  if (attempt && attempt.status === 'ready' && !launchFailure) {
    const r = await smokeAttempt(engine, attempt, settings, deadline, hooks, notes);
    prompts = r.prompts;
    health = r.health;
    log = r.log;
    serverMetrics = r.serverMetrics;
  }
  if (mode === 'launch' && attempt && engine.attempts.get(attempt.id)?.active) {
    try {
      const s = await stop(engine, req.hostName, req.actor, attempt.id);
      notes.push(`stopped attempt #${attempt.id} after the smoke (${s.how})`);
    } catch (e) {
      notes.push(`could not stop attempt #${attempt.id}: ${(e as Error).message}`);
    }
  }

  // Figures: median time to first token; decode speed over the longer answers together (a short answer's few
  // gaps are mostly network jitter).
  const answered = prompts.filter((p) => p.ttftMs !== null);
  const ttftMs = answered.length ? median(answered.map((p) => p.ttftMs!)) : null;
  const timed = prompts.filter((p) => p.decodeTokS !== null && p.tokens >= 2);
  const long = timed.filter((p) => p.tokens >= MIN_DECODE_TOKENS);
  const decoding = long.length > 0 ? long : timed;
  const decodeMs = decoding.reduce((s, p) => s + ((p.tokens - 1) * 1000) / p.decodeTokS!, 0);
  const decodeTokens = decoding.reduce((s, p) => s + p.tokens - 1, 0);
  const tokS = decodeMs > 0 ? (decodeTokens * 1000) / decodeMs : null;

  const crash = launchFailure ?? (log?.crashed ? log.diagnosis : null);
  const passed = prompts.filter((p) => p.ok).length;
  const correct =
    !crash && prompts.length === settingsCount(settings) && passed === prompts.length && health.status === 200;
  const passes = store.passesSince(req.hostName, profileName, engine.clock.now() - BEST_WINDOW_MS);
  const baseline = passes[0] ?? store.lastPass(req.hostName, profileName);
  const comparison = baseline
    ? compare(passes.length ? passes : [baseline], ttftMs, tokS, settings.regressionPct)
    : null;
  let verdict: Verdict = correct ? 'pass' : 'fail';
  if (correct && comparison && comparison.regressions.length > 0) verdict = 'regression';
  if (!attempt || interrupted) verdict = 'error';

  const summary = summarize(verdict, passed, settingsCount(settings), crash, health, comparison, notes);
  const row = store.add({
    at: started,
    host: req.hostName,
    profile: profileName,
    attemptId: attempt?.id ?? null,
    mode,
    actor: req.actor,
    origin: req.origin,
    verdict,
    passed,
    total: settingsCount(settings),
    ttftMs,
    tokS,
    baselineId: baseline?.id ?? null,
    crashCategory: crash?.category ?? null,
    summary,
    result: { prompts, health, log, comparison, notes, crash },
    durationMs: Date.now() - wallStart,
  });
  return {
    row,
    mode,
    attempt: attempt ? (engine.attempts.get(attempt.id) ?? attempt) : null,
    prompts,
    health,
    log: log ?? (launchFailure ? { bytes: 0, crashed: true, diagnosis: launchFailure } : null),
    comparison,
    notes,
    serverMetrics,
    interrupted,
  };
}

/** A TTFT change smaller than this is network jitter whatever its percentage (loopback TTFTs are tens of ms). */
const TTFT_NOISE_MS = 10;

/** Answers at least this long set the decode speed, when there are any. */
const MIN_DECODE_TOKENS = 16;

const settingsCount = (s: EffectiveSmoke) => s.prompts.reduce((n, p) => n + p.endpoints.length, 0);

async function launchWithin(
  engine: Engine,
  req: SmokeRequest,
  profile: ResolvedProfile,
  deadline: number,
  hooks: Hooks,
  notes: string[],
): Promise<{ attempt: Attempt | null; diagnosis: Diagnosis | null; interrupted?: true }> {
  let timer: NodeJS.Timeout | undefined;
  const emit = (e: LaunchEvent) => hooks.onLaunchEvent?.(e);
  // The smoke's own prompts are the first real requests: a model that NaNs on its first request fails the smoke,
  // with the smoke's evidence, rather than the launch.
  const launching = launch(
    engine,
    {
      profile,
      hostName: req.hostName,
      actor: req.actor,
      origin: req.origin,
      role: req.role,
      firstRequest: false,
      confirmed: true,
      port: req.port,
      // Without --port, a port taken (by a running server of this profile, say) is exchanged for a free one.
      movePort: req.port === undefined,
    },
    emit,
    hooks.diagnoser,
  );
  const overBudget = new Promise<'budget'>((resolve) => {
    timer = setTimeout(() => resolve('budget'), Math.max(0, deadline - Date.now()));
  });
  const r = await Promise.race([launching, overBudget]).finally(() => clearTimeout(timer));
  if (r === 'budget') {
    notes.push(`the time budget ran out while ${profile.name} was loading`);
    // The attempt this smoke launched (others may share the host on other GPUs).
    const a = engine.attempts
      .allActiveOn(req.hostName)
      .filter((x) => x.profile === profile.name && x.actor === req.actor)
      .at(-1);
    if (a) {
      await stop(engine, req.hostName, req.actor, a.id).catch(() => {});
      notes.push(`stopped attempt #${a.id}`);
    }
    await Promise.race([launching.catch(() => {}), new Promise((x) => setTimeout(x, 5000))]);
    return { attempt: a ?? null, diagnosis: null };
  }
  if (r.movedPort) notes.push(`${r.movedPort.movedBecause}: launched on port ${r.movedPort.port}`);
  // The bot is closing: no verdict on the server; the smoke stops its own server still (nobody else would).
  if (r.outcome === 'interrupted') {
    notes.unshift(`interrupted: the bot closed while ${profile.name} was loading`);
    return { attempt: r.attempt ?? null, diagnosis: null, interrupted: true };
  }
  if (r.outcome !== 'ready') {
    notes.push(`launch of ${profile.name} ended ${r.outcome}${r.diagnosis ? `: ${r.diagnosis.summary}` : ''}`);
    return { attempt: r.attempt ?? null, diagnosis: r.diagnosis ?? null };
  }
  return { attempt: r.attempt ?? null, diagnosis: null };
}

async function smokeAttempt(
  engine: Engine,
  attempt: Attempt,
  settings: EffectiveSmoke,
  deadline: number,
  hooks: Hooks,
  notes: string[],
) {
  const { host } = hostOf(engine, attempt.host);
  const mark: LogMark | null = attempt.logPath ? await markLog(host, attempt.logPath).catch(() => null) : null;
  const prompts: PromptResult[] = [];
  let serverDown = false;
  for (const p of settings.prompts) {
    for (const endpoint of p.endpoints) {
      const left = deadline - Date.now();
      if (serverDown || left <= 0) {
        prompts.push(
          skipped(p.name, endpoint, serverDown ? 'not asked: the server stopped answering' : 'not asked: out of time'),
        );
        continue;
      }
      const text = endpoint === 'generate' ? (p.generate_prompt ?? p.prompt) : p.prompt;
      const a = await ask(host, attempt.port, endpoint, text, p.max_tokens, {
        timeoutMs: Math.min(left, 120_000),
        headers: await serverAuth(engine, attempt),
      });
      const j = a.error ? { ok: false, problems: [`request failed: ${a.error}`] } : judge(a.text, p.expect);
      prompts.push({
        name: p.name,
        endpoint,
        ok: j.ok,
        problems: j.problems,
        answer: a.text, // whole: the report's answers file shows it; tables cut it themselves
        tokens: a.tokens,
        ttftMs: a.ttftMs,
        decodeTokS: a.decodeTokS,
      });
      hooks.say(`  ${j.ok ? 'ok  ' : 'FAIL'} ${p.name} (${endpoint})${j.ok ? '' : `: ${j.problems.join('; ')}`}`);
      if (a.error) serverDown = !(await healthy(host, attempt.port));
    }
  }
  const [health, serverMetrics] = await Promise.all([
    healthOf(host, attempt.port),
    readServerMetrics(host, attempt.port),
  ]);
  let log: LogVerdict | null = null;
  if (mark && attempt.logPath) {
    // A dying server writes its traceback after the client saw the reset: give the lines a moment to land.
    const failed = prompts.some((p) => p.problems.some((x) => x.startsWith('request failed')));
    for (let i = 0; i < (failed || health.status !== 200 ? 10 : 1); i++) {
      const text = await readSince(host, attempt.logPath, mark).catch(() => '');
      log = classifyDelta(hooks.diagnoser, text, mark);
      if (log.crashed) break;
      await new Promise((r) => setTimeout(r, 300));
    }
  } else {
    notes.push('the attempt has no log path: its log was not checked');
  }
  // A failure record alone is no crash of a server that serves on (crashedBeforeExit); one that no longer answers its
  // health check did not serve on: the record is its crash.
  if (log && !log.crashed && log.diagnosis && log.diagnosis.category !== 'none' && health.status !== 200)
    log = { ...log, crashed: true };
  if (log?.crashed && log.diagnosis && health.status !== 200) {
    // The server died under the smoke: close the attempt as crashed and raise the usual alert.
    await recordExit(engine, engine.attempts.get(attempt.id) ?? attempt, log.diagnosis, (e) =>
      hooks.onLaunchEvent?.(e),
    ).catch((e: Error) => engine.log.warn({ err: e.message }, 'smoke: recording the crash failed'));
  }
  return { prompts, health, log, serverMetrics };
}

function skipped(name: string, endpoint: Answer['endpoint'], why: string): PromptResult {
  return { name, endpoint, ok: false, problems: [why], answer: '', tokens: 0, ttftMs: null, decodeTokS: null };
}

async function healthOf(host: RemoteHost, port: number): Promise<SmokeResult['health']> {
  try {
    const r = await host.http(port, { method: 'GET', path: '/health', timeoutMs: 25_000 });
    return { status: r.status };
  } catch (e) {
    return { status: null, error: (e as Error).message };
  }
}

async function healthy(host: RemoteHost, port: number): Promise<boolean> {
  return (await healthOf(host, port)).status === 200;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const iso = (t: number) => new Date(t).toISOString().slice(0, 16).replace('T', ' ');

/** The baselines made of `passes` (newest first, at least one). */
export function baselines(passes: SmokeRow[]): Baseline[] {
  const recent = passes.slice(0, MEDIAN_OF);
  const vals = (rows: SmokeRow[], f: (r: SmokeRow) => number | null) =>
    rows.map(f).filter((v): v is number => v !== null);
  const med = (xs: number[]) => (xs.length ? median(xs) : null);
  const one = (r: SmokeRow) => `smoke run #${r.id} (${iso(r.at)} UTC)`;
  const medianLabel =
    recent.length === 1
      ? one(recent[0]!)
      : `the median of the last ${recent.length} passing runs (#${recent.at(-1)!.id}-#${recent[0]!.id})`;
  const out: Baseline[] = [
    {
      kind: 'median',
      label: medianLabel,
      runIds: recent.map((r) => r.id),
      ttftMs: med(vals(recent, (r) => r.ttftMs)),
      tokS: med(vals(recent, (r) => r.tokS)),
    },
  ];
  // The best of the month, unless it is the same single run as the median.
  const fastest = passes.filter((r) => r.tokS !== null).sort((a, b) => b.tokS! - a.tokS!)[0];
  const quickest = passes.filter((r) => r.ttftMs !== null).sort((a, b) => a.ttftMs! - b.ttftMs!)[0];
  if (passes.length > 1 && (fastest || quickest)) {
    const ids = [...new Set([fastest?.id, quickest?.id].filter((x): x is number => x !== undefined))];
    const which =
      ids.length === 1
        ? one((fastest ?? quickest)!)
        : `decode: smoke run #${fastest!.id}, time to first token: smoke run #${quickest!.id}`;
    out.push({
      kind: 'best',
      label: `the best of the last ${BEST_WINDOW_MS / 86_400_000} days (${which})`,
      runIds: ids,
      ttftMs: quickest?.ttftMs ?? null,
      tokS: fastest?.tokS ?? null,
    });
  }
  return out;
}

export function compare(passes: SmokeRow[], ttftMs: number | null, tokS: number | null, pct: number): Comparison {
  const change = (now: number | null, then: number | null) =>
    now !== null && then !== null && then > 0 ? { now, then, pct: ((now - then) / then) * 100 } : null;
  const bs = baselines(passes);
  const regressions: string[] = [];
  const against: string[] = [];
  for (const b of bs) {
    const t = change(ttftMs, b.ttftMs);
    const s = change(tokS, b.tokS);
    const found: string[] = [];
    if (t && t.pct > pct && t.now - t.then > TTFT_NOISE_MS)
      found.push(`time to first token ${t.pct.toFixed(0)}% slower`);
    if (s && -s.pct > pct) found.push(`decode ${(-s.pct).toFixed(0)}% fewer tokens/s`);
    if (found.length) {
      against.push(b.label);
      regressions.push(...found.map((f) => (bs.length > 1 ? `${f} than ${b.label}` : f)));
    }
  }
  const m = bs[0]!;
  return {
    baselineId: passes[0]!.id,
    baselineAt: passes[0]!.at,
    ttftMs: change(ttftMs, m.ttftMs),
    tokS: change(tokS, m.tokS),
    baselines: bs,
    regressions,
    against,
    thresholdPct: pct,
  };
}

function summarize(
  verdict: Verdict,
  passed: number,
  total: number,
  crash: Diagnosis | null,
  health: SmokeResult['health'],
  comparison: Comparison | null,
  notes: string[],
): string {
  if (crash) return `${crash.category} during ${crash.phase}: ${crash.summary}`;
  if (verdict === 'error') return notes[0] ?? 'no server to smoke';
  if (passed < total) return `${total - passed} of ${total} answers failed`;
  if (health.status !== 200) return `the server is unhealthy after the smoke (${health.status ?? health.error})`;
  if (comparison?.regressions.length) return comparison.regressions.join(', ');
  return `${passed}/${total} answers right`;
}
