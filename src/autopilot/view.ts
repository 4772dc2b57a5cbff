// The run's one parent message: phase, launches used of the budget, what runs now, the best so far, time left. The
// same view renders as text (terminal) and Block Kit with a Stop button (Slack).
import type { View } from '../chat/types.ts';
import type { AutopilotRun, Trial } from './store.ts';

export type AutopilotView = Extract<View, { type: 'autopilot' }>;

export function runView(
  run: AutopilotRun,
  trials: Trial[],
  launches: number,
  now: number,
  detail: string,
): AutopilotView {
  const measured = trials.filter((t) => t.outcome === 'measured' && t.meetsSlo && t.throughput !== null);
  const best = measured.reduce<Trial | null>((b, t) => (!b || t.throughput! > b.throughput! ? t : b), null);
  const working = trials.find((t) => t.outcome === 'works');
  const last = trials[trials.length - 1];
  return {
    type: 'autopilot',
    runId: run.id,
    profile: run.profile,
    host: run.host,
    actor: run.actor,
    status: run.status,
    phase: run.phase,
    launches,
    budget: run.params.attempts,
    current: last ? `${last.profile} (${last.changes})` : run.profile,
    best: best
      ? `${best.profile}: ${best.throughput!.toFixed(1)} tok/s (trial ${best.n})`
      : working
        ? `${working.profile} works (not measured yet)`
        : 'none yet',
    timeLeftS: Math.max(0, Math.round((run.deadlineAt - now) / 1000)),
    detail,
  };
}
