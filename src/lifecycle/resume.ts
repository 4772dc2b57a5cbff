// A long-lived bot (interactive terminal, Slack) picks up where its previous run stopped: live attempts are checked
// against their hosts (ended ones classified from their logs, told and alerted once), and the ones still running are
// followed again from the last byte handled.
import type { DiagnoserFactory } from '../logs/diagnosis.ts';
import type { Engine } from './engine.ts';
import { follow } from './launch/follow.ts';
import type { LaunchEvent } from './launch/types.ts';
import { monitorAttempt } from './monitor.ts';
import { reconcile } from './reconcile.ts';

export async function resumeWatches(
  engine: Engine,
  emit: (e: LaunchEvent) => void,
  diagnoser: DiagnoserFactory,
): Promise<number> {
  const checked = await reconcile(engine);
  // Attempts that ended while this bot was away (closed just now, or by another process): their messages and alerts.
  await engine.notifier?.catchUp().catch((e: Error) => engine.log.error({ err: e.message }, 'catch-up failed'));
  let resumed = 0;
  for (const c of checked) {
    // A job still in its scheduler's queue is followed too: follow waits for it to run.
    if (c.state !== 'running' && c.state !== 'queued') continue;
    resumed += 1;
    const a = c.attempt;
    if (a.status === 'ready') {
      monitorAttempt(engine, a, emit, diagnoser);
    } else {
      void follow(engine, a, false, emit, diagnoser)
        .then((r) => {
          if (r.outcome === 'ready' && r.attempt) monitorAttempt(engine, r.attempt, emit, diagnoser);
        })
        .catch((e: Error) => engine.log.error({ err: e.message, attempt: a.id }, 'resumed follow failed'));
    }
  }
  return resumed;
}
