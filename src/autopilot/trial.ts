// One trial of an autopilot run and what both the run's loop (src/autopilot/run.ts) and its report
// (src/autopilot/report.ts) do with the run: launch on its held GPUs, stop its servers, count its launches, re-render
// its one message. Kept apart so the loop and the report each import it, not each other.
import type { Attempt } from '../ledger/attempts.ts';
import type { Engine } from '../lifecycle/engine.ts';
import type { LaunchResult } from '../lifecycle/launch/types.ts';
import { launch } from '../lifecycle/launch.ts';
import { stop } from '../lifecycle/stop.ts';
import type { DiagnoserFactory } from '../logs/diagnosis.ts';
import type { ResolvedProfile } from '../profiles/index.ts';
import { type AutopilotRun, autopilotStore, type Trial } from './store.ts';
import { type AutopilotView, runView } from './view.ts';

export interface Hooks {
  say(text: string): void;
  diagnoser: DiagnoserFactory;
}

export interface AutopilotOutcome {
  run: AutopilotRun;
  trials: Trial[];
  /** Why it ended: found and tuned, budget, cancel, no working configuration, a restart. */
  ending: string;
  winner: string | null;
  profileFile: string | null;
  chartPath: string | null;
  draftFile: string | null;
  report: string;
}

export interface Ctl {
  engine: Engine;
  store: ReturnType<typeof autopilotStore>;
  hooks: Hooks;
  abort: AbortController;
  runId: number;
}

/** Launches this run has made (attempts of its group), against --attempts. */
export function launchesOf(engine: Pick<Engine, 'attempts'>, run: AutopilotRun): Attempt[] {
  return engine.attempts.list({ limit: 100_000 }).filter((a) => a.groupKey === run.groupKey);
}

/** Stops every live server of the run, but `keep`. */
export async function stopGroup(
  ctl: Ctl,
  run: AutopilotRun,
  keep: number | null,
  opts: { startedOnly?: boolean } = {},
): Promise<void> {
  for (const a of ctl.engine.attempts.allActiveOn(run.host)) {
    if (a.groupKey !== run.groupKey || a.id === keep) continue;
    if (opts.startedOnly && a.pgid === null) continue;
    await stop(ctl.engine, run.host, run.actor, a.id).catch((e: Error) =>
      ctl.engine.log.warn({ err: e.message, attempt: a.id }, 'autopilot: stop failed'),
    );
  }
}

/** Launches one configuration of the run on its held GPUs and port, after stopping what the group still runs. */
export async function launchTrial(ctl: Ctl, run: AutopilotRun, profile: ResolvedProfile): Promise<LaunchResult> {
  await stopGroup(ctl, run, null); // the next trial needs the same GPUs
  return launch(
    ctl.engine,
    {
      profile,
      hostName: run.host,
      actor: run.actor,
      origin: run.origin,
      role: run.params.role,
      port: run.params.port,
      groupKey: run.groupKey,
      gpus: run.gpus,
      confirmed: true,
    },
    () => {},
    ctl.hooks.diagnoser,
  );
}

/** The one parent message of the run, re-rendered in place. */
export function updateView(
  engine: Pick<Engine, 'attempts' | 'ledger' | 'clock' | 'notifier'>,
  run: AutopilotRun,
  detail: string,
): void {
  const trials = autopilotStore(engine.ledger).trials(run.id);
  const view: AutopilotView = runView(run, trials, launchesOf(engine, run).length, engine.clock.now(), detail);
  engine.notifier?.updateGroup?.(run.groupKey, view);
}
