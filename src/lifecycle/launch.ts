// Launch: one request, top to bottom. Each step is a small file in ./launch/:
//   1. plan      (plan.ts)     the asker's role may launch it; the host's backend renders exactly what would run
//   2. check     (check.ts)    known crashes of this configuration here (hardware catalog, the ledger), confirmed or refused
//   3. open      (open.ts)     the attempt opens in the ledger with its GPU leases and port
//   4. start     (start.ts)    the server starts (or is submitted) on every node, head first
//   5. follow    (follow.ts)   every node's log: milestones, the classifier, hangs and the ready timeout
//   6. ready     (ready.ts)    on the ready line: /health 200 and one real request answered; else ./outcome.ts
// A dry run stops after step 2 with the exact command (and, on a cluster, the batch script).

import type { DiagnoserFactory } from '../logs/diagnosis.ts';
import type { Engine } from './engine.ts';
import { confirmKnownCrashes, knownCrashes } from './launch/check.ts';
import { follow } from './launch/follow.ts';
import { openAttempt } from './launch/open.ts';
import { planLaunch } from './launch/plan.ts';
import { startNodes } from './launch/start.ts';
import type { LaunchEvent, LaunchRequest, LaunchResult } from './launch/types.ts';

export async function launch(
  engine: Engine,
  req: LaunchRequest,
  emit: (e: LaunchEvent) => void,
  diagnoser: DiagnoserFactory,
): Promise<LaunchResult> {
  const planned = await planLaunch(engine, req);
  const { plan } = planned;
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
  await confirmKnownCrashes(req, { warnings, notes });
  const opened = await openAttempt(engine, req, planned);
  const attempt = await startNodes(engine, req, planned.backend, opened, emit);
  const followed = await follow(engine, attempt, req.firstRequest ?? true, emit, diagnoser);
  const result = notes.length > 0 ? { ...followed, notes } : followed;
  return plan.movedPort ? { ...result, movedPort: plan.movedPort } : result;
}
