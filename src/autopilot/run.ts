// Part src/autopilot: owns autopilot runs: find a working configuration, tune it under an SLO, report the winner.
// May import: access, advice, bench-load, chat, errors.ts, fleet, format, ledger, lifecycle, logs, profiles, reports,
//   runtime, smoke.
//
// Autopilot: from a crashing profile to the fastest configuration that works, unattended, within a budget. The loop
// a person ran by hand: launch; on a crash read its class and take the next suggestion for it (never one already
// tried on this host and model); on ready run the smoke checks; the first that passes is the working configuration.
// Then tune the throughput knobs with `bench` at the target load (src/autopilot/search.ts), keep only what meets the
// SLO, and save the winner as a profile. Every launch is an ordinary attempt of the run's group (one chat thread);
// the run's state is in the ledger after every trial, so a restarted bot resumes it; its GPUs are held between
// trials; cancel, the deadline or the attempt budget stop every server it started.
import { adviseFor } from '../advice/advise.ts';
import { runBench } from '../bench-load/run.ts';
import { UserError } from '../errors.ts';
import { bisect, bisectUnits } from '../fleet/bisect.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { type Engine, hostOf } from '../lifecycle/engine.ts';
import { knownCrashes } from '../lifecycle/launch/check.ts';
import type { LaunchResult } from '../lifecycle/launch/types.ts';
import { planGpus } from '../lifecycle/leases.ts';
import { flagView, type ResolvedProfile } from '../profiles/index.ts';
import { previewVariant, resolveProfileName, saveVariant } from '../profiles/saved.ts';
import { isFailing } from '../reports/draft.ts';
import { crashKeyOf } from '../reports/upstream.ts';
import { runSmoke } from '../smoke/run.ts';
import { loopsOf } from './loops.ts';
import { finishRun } from './report.ts';
import { configKey, KNOBS, type KnobName, type KnobValues, searchState, type TrialResult } from './search.ts';
import { meetsSlo } from './slo.ts';
import { type AutopilotParams, type AutopilotRun, autopilotStore, type Trial } from './store.ts';
import {
  type AutopilotOutcome,
  type Ctl,
  type Hooks,
  launchesOf,
  launchTrial,
  stopGroup,
  updateView,
} from './trial.ts';

type Stop = 'cancel' | 'shutdown' | 'deadline';

/** Asks a run to stop: in this process at once, in another through the ledger (its loop polls the flag). */
export function cancelAutopilot(engine: Pick<Engine, 'ledger'>, id: number): boolean {
  autopilotStore(engine.ledger).requestCancel(id);
  const l = loopsOf(engine).get(id);
  l?.abort.abort('cancel');
  return Boolean(l);
}

/** A run's heartbeat older than this means the bot that ran it is gone. */
export const STALE_MS = 30_000;

export async function startAutopilot(
  engine: Engine,
  req: { hostName: string; profile: ResolvedProfile; actor: string; origin: string; params: AutopilotParams },
  hooks: Hooks,
): Promise<AutopilotOutcome> {
  const store = autopilotStore(engine.ledger);
  const busy = store.unfinished(req.hostName)[0];
  if (busy)
    throw new UserError(
      `autopilot run #${busy.id} (${busy.profile}, ${busy.actor}) is not finished on ${req.hostName}`,
      { kind: 'command', lead: 'wait for it, or stop it with', command: 'autopilot --cancel' },
    );
  // The GPUs are chosen once and held for the whole run: every trial runs on them, and nobody else gets them between.
  const plan = await planGpus(engine, req.hostName, req.profile.gpus?.length ?? req.profile.tp ?? 1, req.profile.gpus);
  const now = engine.clock.now();
  const groupKey = `autopilot:${now}:${req.profile.name}`;
  const run = store.open({
    host: req.hostName,
    profile: req.profile.name,
    actor: req.actor,
    origin: req.origin,
    phase: 'find',
    params: req.params,
    state: { tried: [], nextProfile: req.profile.name },
    groupKey,
    gpus: plan.gpus,
    startedAt: now,
    deadlineAt: now + req.params.hours * 3600_000,
  });
  engine.notifier?.openGroup(groupKey, `autopilot run #${run.id}: ${req.profile.name} on ${req.hostName}`);
  updateView(engine, run, 'starting');
  return drive(engine, run, hooks);
}

/** Runs a restarted bot finds unfinished (interrupted, or whose bot stopped beating): driven again from the ledger. */
export function resumeAutopilots(engine: Engine, hooks: Hooks): Array<Promise<AutopilotOutcome>> {
  const now = engine.clock.now();
  const mine = loopsOf(engine);
  return autopilotStore(engine.ledger)
    .unfinished()
    .filter((r) => !mine.has(r.id) && (r.status === 'interrupted' || now - r.heartbeatAt > STALE_MS))
    .map((r) => {
      hooks.say(`autopilot run #${r.id}: resumed after a restart (${r.phase} phase)`);
      engine.notifier?.groupReply?.(r.groupKey, `resumed after a bot restart, in the ${r.phase} phase`);
      return drive(engine, r, hooks);
    });
}

async function drive(engine: Engine, run0: AutopilotRun, hooks: Hooks): Promise<AutopilotOutcome> {
  const store = autopilotStore(engine.ledger);
  const abort = new AbortController();
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });
  loopsOf(engine).set(run0.id, { abort, done });
  store.update(run0.id, { status: 'running', heartbeatAt: engine.clock.now() });
  let run = store.get(run0.id)!;
  const ctl: Ctl = { engine, store, hooks, abort, runId: run.id };
  // The deadline and a cancel from another process end the trial in flight, not only the next one.
  const poll = setInterval(() => {
    try {
      store.update(run.id, { heartbeatAt: engine.clock.now() });
      if (store.cancelRequested(run.id)) abort.abort('cancel');
      else if (engine.clock.now() >= run.deadlineAt) abort.abort('deadline');
    } catch {
      // the ledger is closing with the bot
    }
  }, 250);
  // A server still being started has no process group yet to signal: the loop stops it once its launch returns.
  const onAbort = () => {
    if (abort.signal.reason !== 'shutdown') void stopGroup(ctl, run, null, { startedOnly: true });
  };
  abort.signal.addEventListener('abort', onAbort);
  let ending = '';
  try {
    // A run resumed after a restart: what its last trial left running is stopped (that trial is run again).
    await stopGroup(ctl, run, null);
    if (run.phase === 'find') {
      const working = await findWorking(ctl, run);
      run = store.get(run.id)!;
      if (working) {
        store.update(run.id, { phase: 'tune', state: { ...run.state, working: working.name } });
        run = store.get(run.id)!;
      } else ending = why(ctl) ?? 'no working configuration found: the suggestions ran out';
    }
    if (!ending && run.phase === 'tune') {
      ending = (await tune(ctl, run)) ?? 'tuned: no step improved throughput any more under the SLO';
    }
  } catch (e) {
    ending = why(ctl) ?? `failed: ${(e as Error).message}`;
    engine.log.error({ err: (e as Error).message, run: run.id }, 'autopilot failed');
  } finally {
    clearInterval(poll);
    abort.signal.removeEventListener('abort', onAbort);
  }
  try {
    run = store.get(run.id)!;
    if (abort.signal.reason === 'shutdown') {
      // The next bot resumes it; nothing is stopped or reported now.
      store.update(run.id, { status: 'interrupted' });
      return {
        run,
        trials: store.trials(run.id),
        ending: 'interrupted by a bot restart: it resumes at the next start',
        winner: null,
        profileFile: null,
        chartPath: null,
        draftFile: null,
        report: '',
      };
    }
    return await finishRun(ctl, run, ending, abort.signal.reason === 'cancel');
  } finally {
    loopsOf(engine).delete(run.id);
    resolveDone();
  }
}

function why(ctl: Ctl): string | undefined {
  const r = ctl.abort.signal.reason as Stop | undefined;
  if (!ctl.abort.signal.aborted) return undefined;
  return r === 'cancel' ? 'cancelled' : r === 'deadline' ? 'budget: the time ran out' : 'interrupted by a bot restart';
}

/** Why the budget stops the run before another launch, if it does. */
function overBudget(ctl: Ctl, run: AutopilotRun, reserve = 0): string | undefined {
  if (ctl.abort.signal.aborted) return why(ctl);
  if (launchesOf(ctl.engine, run).length + reserve >= run.params.attempts)
    return `budget: ${run.params.attempts} launches used`;
  if (ctl.engine.clock.now() >= run.deadlineAt) return 'budget: the time ran out';
  return undefined;
}

function say(ctl: Ctl, run: AutopilotRun, text: string): void {
  ctl.hooks.say(text);
  ctl.engine.notifier?.groupReply?.(run.groupKey, text);
}

function addTrial(ctl: Ctl, run: AutopilotRun, t: Omit<Trial, 'n' | 'runId' | 'at'>): Trial {
  const trial = ctl.store.addTrial({ ...t, runId: run.id, at: ctl.engine.clock.now() });
  updateView(ctl.engine, ctl.store.get(run.id)!, `${t.phase}: trial ${trial.n} ${t.outcome}`);
  return trial;
}

// ------------------------------------------------------------------------------------------------- find phase

async function findWorking(ctl: Ctl, run0: AutopilotRun): Promise<ResolvedProfile | null> {
  const { engine, store } = ctl;
  let run = run0;
  // Each find step either launches (counted) or is skipped as known to crash (free): bounded either way.
  for (let guard = 0; guard < run.params.attempts * 4 + 4; guard++) {
    const name = run.state.nextProfile;
    if (!name) return null;
    const profile = resolveProfileName(engine, name);
    const { warnings } = await knownCrashes(engine, { hostName: run.host, profile });
    let crash: { category: string; phase: string; signatureId?: string; attemptId: number } | null = null;
    if (warnings.length > 0 && !run.params.allowKnownCrash) {
      const category = warnings.find((w) => w.outcome)?.outcome ?? 'other';
      addTrial(ctl, run, {
        phase: 'find',
        attemptId: null,
        profile: name,
        changes: changesText(engine, run, profile),
        knobs: null,
        outcome: 'skipped_known',
        category,
        throughput: null,
        ttftP99: null,
        itlP50: null,
        meetsSlo: null,
        note: warnings[0]!.text,
      });
      say(ctl, run, `skipped ${name}, known to crash here (${category}): ${warnings[0]!.text}`);
      crash = { category, phase: 'unknown', attemptId: 0 };
    } else {
      const stopWhy = overBudget(ctl, run);
      if (stopWhy) return null;
      say(ctl, run, `launching ${name}`);
      const r = await launchTrial(ctl, run, profile);
      if (ctl.abort.signal.aborted) return null;
      if (r.outcome === 'ready' && r.attempt) {
        const smoke = await runSmoke(
          engine,
          { hostName: run.host, actor: run.actor, origin: run.origin, role: run.params.role },
          { say: () => {}, diagnoser: ctl.hooks.diagnoser },
        );
        const passed = smoke.row.verdict === 'pass' || smoke.row.verdict === 'regression';
        // Only a crash the smoke's log shows names the failure (a failure record the server served on does not).
        const diag = smoke.log?.crashed ? smoke.log.diagnosis : null;
        addTrial(ctl, run, {
          phase: 'find',
          attemptId: r.attempt.id,
          profile: name,
          changes: changesText(engine, run, profile),
          knobs: null,
          outcome: passed ? 'works' : 'smoke_failed',
          category: passed ? null : (diag?.category ?? smoke.row.crashCategory ?? 'other'),
          throughput: null,
          ttftP99: null,
          itlP50: null,
          meetsSlo: null,
          note: smoke.row.summary,
        });
        if (passed) {
          say(ctl, run, `${name} works: smoke ${smoke.row.passed}/${smoke.row.total} (attempt #${r.attempt.id})`);
          return profile;
        }
        crash = {
          category: diag?.category ?? 'other',
          phase: diag?.phase ?? 'runtime',
          attemptId: r.attempt.id,
          ...signatureOf(diag),
        };
      } else {
        const d = r.diagnosis;
        addTrial(ctl, run, {
          phase: 'find',
          attemptId: r.attempt?.id ?? null,
          profile: name,
          changes: changesText(engine, run, profile),
          knobs: null,
          outcome: r.outcome === 'crashed' ? 'crashed' : 'not_ready',
          category: d?.category ?? r.outcome,
          throughput: null,
          ttftP99: null,
          itlP50: null,
          meetsSlo: null,
          note: d?.summary ?? null,
        });
        crash = {
          category: d?.category ?? 'other',
          phase: d?.phase ?? 'unknown',
          attemptId: r.attempt?.id ?? 0,
          ...signatureOf(d),
        };
        say(ctl, run, `${name}: ${r.outcome} (${crash.category} during ${crash.phase})`);
      }
      await stopGroup(ctl, run, null);
    }
    const tried = [...run.state.tried, name];
    const next = nextSuggestion(ctl, run, profile, crash, tried);
    if (next) {
      store.update(run.id, { state: { ...run.state, tried, nextProfile: next } });
    } else if (!run.state.bisected) {
      store.update(run.id, { state: { ...run.state, tried, nextProfile: undefined, bisected: true } });
      run = store.get(run.id)!;
      const viaBisect = await bisectFallback(ctl, run, tried);
      store.update(run.id, { state: { ...run.state, nextProfile: viaBisect ?? undefined } });
    } else {
      store.update(run.id, { state: { ...run.state, tried, nextProfile: undefined } });
    }
    run = store.get(run.id)!;
  }
  return null;
}

function signatureOf(d: unknown): { signatureId?: string } {
  const id = crashKeyOf(d)?.signatureId;
  return id ? { signatureId: id } : {};
}

/** The first suggestion for this crash that this run has not tried and the ledger has not seen on this host. */
function nextSuggestion(
  ctl: Ctl,
  run: AutopilotRun,
  base: ResolvedProfile,
  crash: { category: string; phase: string; signatureId?: string; attemptId: number },
  tried: string[],
): string | null {
  const { engine } = ctl;
  // Never a configuration that failed here before; one that served is fair to take again.
  const onHost = engine.attempts.list({ host: run.host, limit: 100_000 }).filter(isFailing);
  const crashed = crash.attemptId ? engine.attempts.get(crash.attemptId) : undefined;
  const arch = crashed ? engine.ledger.environments.forAttempt(crashed)?.facts.arch : undefined;
  const advice = adviseFor(
    engine,
    base,
    { profile: base.name, ...crash },
    { ...(arch ? { arch } : {}), limit: 20, attempts: onHost },
  );
  const triedFlags = tried.map((t) => flagView(resolveProfileName(engine, t)));
  for (const s of advice.suggestions) {
    const flags = flagView(s.profile);
    if (triedFlags.some((f) => JSON.stringify({ ...f, port: '' }) === JSON.stringify({ ...flags, port: '' }))) continue;
    if (s.existing) return s.existing;
    return saveVariant(
      engine,
      s.base,
      s.overrides,
      `autopilot run #${run.id}, after ${crash.category} of ${base.name}: ${s.reason}`,
    );
  }
  return null;
}

/** Where the suggestions run out and a profile of the same model has served here: bisect it against the start. */
async function bisectFallback(ctl: Ctl, run: AutopilotRun, tried: string[]): Promise<string | null> {
  const { engine } = ctl;
  const start = resolveProfileName(engine, run.profile);
  const served = engine.attempts
    .list({ host: run.host, limit: 100_000 })
    .filter((a) => a.readyAt !== null && a.flags['model-path'] === start.model_path && !tried.includes(a.profile))
    .reverse();
  let good: ResolvedProfile | undefined;
  for (const a of served) {
    try {
      good = resolveProfileName(engine, a.profile);
      break;
    } catch {
      // a variant file that is gone: try an older one
    }
  }
  if (!good) return null;
  const { units } = bisectUnits(good, start);
  // One launch per halving and one to confirm, at most.
  if (overBudget(ctl, run, Math.ceil(Math.log2(Math.max(2, units.size))) + 1)) return null;
  say(ctl, run, `suggestions ran out: bisecting ${good.name} (served here) against ${start.name}`);
  const r = await bisect(engine, {
    good,
    bad: start,
    hostName: run.host,
    actor: run.actor,
    origin: run.origin,
    role: run.params.role,
    port: run.params.port,
    signal: ctl.abort.signal,
    say: (t) => say(ctl, run, t),
    diagnoser: ctl.hooks.diagnoser,
    groupKey: run.groupKey,
    gpus: run.gpus,
  });
  for (const s of r.steps) {
    addTrial(ctl, run, {
      phase: 'bisect',
      attemptId: s.attemptId,
      profile: `${good.name} + ${s.applied.join(', ')}`,
      changes: s.applied.join(', '),
      knobs: null,
      outcome: s.verdict === 'good' ? 'ready' : 'crashed',
      category: s.verdict === 'good' ? null : s.outcome,
      throughput: null,
      ttftP99: null,
      itlP50: null,
      meetsSlo: null,
      note: null,
    });
  }
  if (r.cancelled || r.culprit.length === 0) return null;
  // The start without the culprit: its other settings kept, the culprit's as in the profile that served.
  const back = bisectUnits(start, good).units;
  const overrides = Object.assign({}, ...r.culprit.map((c) => back.get(c) ?? {}));
  if (Object.keys(overrides).length === 0) return null;
  previewVariant(engine, start.name, overrides, 'autopilot bisection');
  return saveVariant(
    engine,
    start.name,
    overrides,
    `autopilot run #${run.id}: ${start.name} without ${r.culprit.join(', ')}`,
  );
}

/** What a find-phase profile changes against the run's starting profile. */
function changesText(engine: Engine, run: AutopilotRun, p: ResolvedProfile): string {
  if (p.name === run.profile) return '(starting profile)';
  const { units } = bisectUnits(resolveProfileName(engine, run.profile), p);
  const parts = [...units.values()].flatMap((o) =>
    Object.entries(o).map(([k, v]) =>
      k === 'env'
        ? Object.entries(v as object)
            .map(([e, x]) => `env.${e}=${x}`)
            .join(', ')
        : `${k}=${v}`,
    ),
  );
  return parts.join(', ') || '(same settings)';
}

// ------------------------------------------------------------------------------------------------- tune phase

/** The knobs as the running server reports them (`/server_info`), so a knob left to SGLang starts where it is. */
async function knobsOf(engine: Engine, a: Attempt, knobs: readonly KnobName[]): Promise<KnobValues> {
  const out: KnobValues = {};
  try {
    const { host } = hostOf(engine, a.host);
    const r = await host.http(a.port, { method: 'GET', path: '/server_info', timeoutMs: 10_000 });
    const info = JSON.parse(r.body) as Record<string, unknown>;
    for (const k of knobs) {
      const v = info[k];
      if (typeof v === 'number' || typeof v === 'string') out[k] = v;
    }
  } catch {
    // an older server without /server_info: the profile's own values below
  }
  const p = JSON.parse(a.profileJson) as Record<string, unknown>;
  for (const k of knobs) {
    const v = p[k];
    if (out[k] === undefined && (typeof v === 'number' || typeof v === 'string')) out[k] = v;
  }
  return out;
}

function resultsOf(trials: Trial[]): Map<string, TrialResult> {
  const m = new Map<string, TrialResult>();
  for (const t of trials) {
    if (t.phase !== 'tune' || !t.knobs) continue;
    m.set(configKey(t.knobs), {
      crashed: t.outcome !== 'measured',
      meetsSlo: t.meetsSlo === true,
      throughput: t.throughput ?? 0,
    });
  }
  return m;
}

/** What `next` changes against `base`, as profile overrides. */
export function knobOverrides(base: KnobValues, next: KnobValues, knobs: readonly KnobName[]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const k of knobs) if (next[k] !== undefined && next[k] !== base[k]) o[k] = next[k];
  return o;
}

async function tune(ctl: Ctl, run0: AutopilotRun): Promise<string | undefined> {
  const { engine, store } = ctl;
  let run = run0;
  const knobs = run.params.knobs.filter((k): k is KnobName => k in KNOBS);
  const working = resolveProfileName(engine, run.state.working!);
  const measure = async (profile: ResolvedProfile, knobsOfTrial: KnobValues | null, changes: string) => {
    let live = engine.attempts
      .allActiveOn(run.host)
      .find((a) => a.groupKey === run.groupKey && a.profile === profile.name);
    let r: LaunchResult | undefined;
    if (!live) {
      const stopWhy = overBudget(ctl, run, run.params.keep ? 1 : 0);
      if (stopWhy) return stopWhy;
      say(ctl, run, `trial: ${profile.name} (${changes})`);
      r = await launchTrial(ctl, run, profile);
      if (ctl.abort.signal.aborted) return why(ctl);
      if (r.outcome === 'ready' && r.attempt) live = r.attempt;
    }
    let values = knobsOfTrial;
    if (live && !values) {
      values = await knobsOf(engine, live, knobs);
      store.update(run.id, { state: { ...run.state, base: values } });
      run = store.get(run.id)!;
    }
    if (!live) {
      const d = r?.diagnosis;
      addTrial(ctl, run, {
        phase: 'tune',
        attemptId: r?.attempt?.id ?? null,
        profile: profile.name,
        changes,
        knobs: values,
        outcome: r?.outcome === 'crashed' ? 'crashed' : 'not_ready',
        category: d?.category ?? r?.outcome ?? null,
        throughput: null,
        ttftP99: null,
        itlP50: null,
        meetsSlo: false,
        note: `boundary: ${d?.summary ?? r?.outcome}`,
      });
      say(ctl, run, `${profile.name}: ${r?.outcome} (${d?.category ?? '?'}), a boundary`);
      await stopGroup(ctl, run, null);
      return undefined;
    }
    try {
      const b = await runBench(
        engine,
        {
          hostName: run.host,
          concurrencies: [run.params.concurrency],
          inputLen: run.params.inputLen,
          outputLen: run.params.outputLen,
          requests: [run.params.requests],
          actor: run.actor,
          origin: run.origin,
        },
        () => {},
      );
      const level = b.row.levels[0]!;
      const slo = meetsSlo(level, run.params.slo);
      // Compared by the server's own clock where it gives one (SGLang's e2e_latency): a step worth 3% is not lost to
      // a busy moment of the bot's machine or its SSH tunnel; bench_serving's wall-time figure otherwise.
      const throughput = level.serverOutputThroughput ?? level.outputThroughput;
      addTrial(ctl, run, {
        phase: 'tune',
        attemptId: live.id,
        profile: profile.name,
        changes,
        knobs: values,
        outcome: 'measured',
        category: null,
        throughput,
        ttftP99: level.ttftMs.p99,
        itlP50: level.itlMs.median,
        meetsSlo: slo.ok,
        note: slo.ok ? `bench run #${b.row.id}` : `misses the SLO: ${slo.misses.join('; ')} (bench run #${b.row.id})`,
      });
      say(
        ctl,
        run,
        `${profile.name}: ${throughput.toFixed(1)} tok/s, TTFT p99 ${level.ttftMs.p99.toFixed(0)} ms, ITL p50 ${level.itlMs.median.toFixed(1)} ms${slo.ok ? '' : ` (misses the SLO: ${slo.misses.join('; ')})`}`,
      );
    } catch (e) {
      if (ctl.abort.signal.aborted) return why(ctl);
      // The server died under the load: a boundary too.
      const a = engine.attempts.get(live.id);
      addTrial(ctl, run, {
        phase: 'tune',
        attemptId: live.id,
        profile: profile.name,
        changes,
        knobs: values,
        outcome: 'bench_failed',
        category: a?.outcome ?? null,
        throughput: null,
        ttftP99: null,
        itlP50: null,
        meetsSlo: false,
        note: (e as Error).message,
      });
    }
    return undefined;
  };

  // The working configuration's own figures first (its server is still up from the smoke, unless resumed).
  if (!store.trials(run.id).some((t) => t.phase === 'tune')) {
    const stopped = await measure(working, null, '(working configuration)');
    if (stopped) return stopped;
  }
  for (;;) {
    run = store.get(run.id)!;
    const trials = store.trials(run.id);
    const base = run.state.base ?? trials.find((t) => t.phase === 'tune')?.knobs ?? {};
    const st = searchState(base, knobs, resultsOf(trials));
    if (!st.next) return undefined;
    const overrides = knobOverrides(base, st.next, knobs);
    const name = saveVariant(engine, working.name, overrides, `autopilot run #${run.id} trial`);
    const profile = resolveProfileName(engine, name);
    const changes = Object.entries(overrides)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ');
    const stopped = await measure(profile, st.next, changes);
    if (stopped) return stopped;
  }
}

export type { AutopilotOutcome, Hooks } from './trial.ts';
export { searchState };
