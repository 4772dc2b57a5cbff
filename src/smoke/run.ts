// A smoke check: prompts with expected answers, streamed through /v1/chat/completions and the native /generate,
// against the server running on a host, or against a fresh launch of a profile that is stopped afterwards (to test
// a nightly SGLang build or a profile change). Launch and stop are the engine's own; nothing here starts a server
// another way.
import { UserError } from '../errors.ts';
import type { RemoteHost } from '../hosts/types.ts';
import type { Attempt } from '../ledger/attempts.ts';
import type { ResolvedProfile } from '../profiles/index.ts';
import type { DiagnoserFactory, Diagnosis } from '../server/diagnosis.ts';
import { type Engine, hostOf } from '../server/engine.ts';
import { type LaunchEvent, launch, recordExit } from '../server/launch.ts';
import { stop } from '../server/stop.ts';
import { type Answer, ask } from './ask.ts';
import { judge } from './checks.ts';
import { classifyDelta, type LogMark, type LogVerdict, markLog, readSince } from './logdelta.ts';
import { type EffectiveSmoke, effectiveSmoke } from './settings.ts';
import { createSmokeStore, type SmokeRow, type Verdict } from './store.ts';

export interface SmokeRequest {
  hostName: string;
  /** Smoke this profile: the running server if it serves it, else a launch of it. */
  profile?: string;
  /** Always launch (and stop) the profile, even if it is already running. */
  launch?: boolean;
  budgetS?: number;
  actor: string;
  origin: string;
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

export interface Comparison {
  baselineId: number;
  baselineAt: number;
  ttftMs: { now: number; then: number; pct: number } | null;
  tokS: { now: number; then: number; pct: number } | null;
  regressions: string[];
  thresholdPct: number;
}

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
}

interface Hooks {
  say(text: string): void;
  onLaunchEvent?(e: LaunchEvent): void;
  diagnoser: DiagnoserFactory;
}

function profileOf(engine: Engine, name: string, attempt?: Attempt): ResolvedProfile {
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
  const active = engine.attempts.activeOn(req.hostName);
  let mode: 'running' | 'launch';
  if (req.launch) {
    if (!req.profile) throw new UserError('smoke --launch needs --profile P', 'e.g. smoke --launch --profile small');
    mode = 'launch';
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
  const notes: string[] = [];
  const store = createSmokeStore(engine.db);

  let attempt: Attempt | null = mode === 'running' ? active! : null;
  let prompts: PromptResult[] = [];
  let health: SmokeResult['health'] = { status: null, error: 'not checked' };
  let log: LogVerdict | null = null;
  let launchFailure: Diagnosis | null = null;

  if (mode === 'launch') {
    const l = await launchWithin(engine, req, profile, deadline, hooks, notes);
    attempt = l.attempt;
    launchFailure = l.diagnosis;
  }
  if (attempt && attempt.status === 'ready' && !launchFailure) {
    const r = await smokeAttempt(engine, attempt, settings, deadline, hooks, notes);
    prompts = r.prompts;
    health = r.health;
    log = r.log;
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
  const baseline = store.lastPass(req.hostName, profileName);
  const comparison = baseline ? compare(baseline, ttftMs, tokS, settings.regressionPct) : null;
  let verdict: Verdict = correct ? 'pass' : 'fail';
  if (correct && comparison && comparison.regressions.length > 0) verdict = 'regression';
  if (!attempt) verdict = 'error';

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
): Promise<{ attempt: Attempt | null; diagnosis: Diagnosis | null }> {
  let timer: NodeJS.Timeout | undefined;
  const emit = (e: LaunchEvent) => hooks.onLaunchEvent?.(e);
  // The smoke's own prompts are the first real requests: a model that NaNs on its first request fails the smoke,
  // with the smoke's evidence, rather than the launch.
  const launching = launch(
    engine,
    { profile, hostName: req.hostName, actor: req.actor, origin: req.origin, firstRequest: false, confirmed: true },
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
      const a = await ask(host, attempt.port, endpoint, text, p.max_tokens, { timeoutMs: Math.min(left, 120_000) });
      const j = a.error ? { ok: false, problems: [`request failed: ${a.error}`] } : judge(a.text, p.expect);
      prompts.push({
        name: p.name,
        endpoint,
        ok: j.ok,
        problems: j.problems,
        answer: a.text.slice(0, 300),
        tokens: a.tokens,
        ttftMs: a.ttftMs,
        decodeTokS: a.decodeTokS,
      });
      hooks.say(`  ${j.ok ? 'ok  ' : 'FAIL'} ${p.name} (${endpoint})${j.ok ? '' : `: ${j.problems.join('; ')}`}`);
      if (a.error) serverDown = !(await healthy(host, attempt.port));
    }
  }
  const health = await healthOf(host, attempt.port);
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
  if (log?.crashed && log.diagnosis && health.status !== 200) {
    // The server died under the smoke: close the attempt as crashed and raise the usual alert.
    await recordExit(engine, engine.attempts.get(attempt.id) ?? attempt, log.diagnosis, (e) =>
      hooks.onLaunchEvent?.(e),
    ).catch((e: Error) => engine.log.warn({ err: e.message }, 'smoke: recording the crash failed'));
  }
  return { prompts, health, log };
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

export function compare(base: SmokeRow, ttftMs: number | null, tokS: number | null, pct: number): Comparison {
  const change = (now: number | null, then: number | null) =>
    now !== null && then !== null && then > 0 ? { now, then, pct: ((now - then) / then) * 100 } : null;
  const t = change(ttftMs, base.ttftMs);
  const s = change(tokS, base.tokS);
  const regressions: string[] = [];
  if (t && t.pct > pct && t.now - t.then > TTFT_NOISE_MS)
    regressions.push(`time to first token ${t.pct.toFixed(0)}% slower`);
  if (s && -s.pct > pct) regressions.push(`decode ${(-s.pct).toFixed(0)}% fewer tokens/s`);
  return { baselineId: base.id, baselineAt: base.at, ttftMs: t, tokS: s, regressions, thresholdPct: pct };
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
