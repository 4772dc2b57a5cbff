// Stop: TERM the server's process group, wait the grace period, KILL what remains; then say whether the GPUs let
// go of their memory. Only the process group this bot recorded is signalled, after checking its start time (a
// reused PID is never killed).
import { RemoteError, UserError } from '../errors.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { type Engine, hostOf } from './engine.ts';
import { type GpuReport, readGpus } from './host-info.ts';
import { runIdFor } from './remote-state.ts';
import { STOP, script } from './scripts.ts';

export interface StopResult {
  attempt: Attempt;
  how: 'TERM' | 'KILL' | 'already-gone';
  exitCode: number | null;
  gpu: GpuReport | null;
  /** true/false when nvidia-smi could tell; null when it is not there. */
  gpuReleased: boolean | null;
}

export async function stop(engine: Engine, hostName: string, actor: string): Promise<StopResult> {
  const attempt = engine.attempts.activeOn(hostName);
  if (!attempt)
    throw new UserError(
      `nothing is running on ${hostName} (according to the ledger)`,
      'see what runs where with: status',
    );
  const { host, cfg } = hostOf(engine, hostName);
  const grace = Math.round(engine.loaded.config.timeouts.stop_grace_s * 10);
  const r = await host.exec(script(STOP, 'glm-stop', [cfg.workdir, String(grace), runIdFor(attempt.id)]), {
    timeoutMs: grace * 100 + 30_000,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  const [tag, a, b, , ex] = line.split(' ');
  if (tag === 'GLM_STUCK') {
    throw new RemoteError(`processes of group ${a} on ${hostName} survived SIGKILL`, {
      host: hostName,
      hint: 'they are probably in uninterruptible I/O (D state) on a GPU; check the host with ps and nvidia-smi',
    });
  }
  if (tag === 'GLM_BUSY')
    throw new RemoteError(`another launch or stop holds the lock on ${hostName}`, {
      host: hostName,
      hint: 'try again in a moment',
    });
  if (tag === 'GLM_OTHER') {
    throw new RemoteError(`${hostName} runs ${b} (pgid ${a}), not attempt #${attempt.id}`, {
      host: hostName,
      hint: 'the host and the ledger disagree; run status to reconcile',
    });
  }
  if (tag !== 'GLM_STOPPED' && tag !== 'GLM_NOT_RUNNING') {
    throw new RemoteError(`stop on ${hostName} failed (exit ${r.code})`, {
      host: hostName,
      stderrTail: r.stderr.slice(-2000),
    });
  }
  const how = tag === 'GLM_STOPPED' ? (a as 'TERM' | 'KILL') : 'already-gone';
  const exitText = tag === 'GLM_STOPPED' ? ex : a;
  const exitCode = exitText && exitText !== '-' ? Number(exitText) : null;
  const now = engine.clock.now();
  engine.attempts.finish(attempt.id, {
    status: 'stopped',
    outcome: 'stopped',
    detail:
      how === 'already-gone' ? `stopped by ${actor}; the server had already exited` : `stopped by ${actor} (${how})`,
    exitCode,
    at: now,
  });
  engine.attempts.event(attempt.id, now, 'stopped', { actor, how });
  let gpu: GpuReport | null = null;
  let gpuReleased: boolean | null = null;
  try {
    gpu = await readGpus(host, cfg);
    gpuReleased = gpu.available ? gpu.apps.length === 0 : null;
  } catch {
    gpu = null;
  }
  return { attempt: engine.attempts.get(attempt.id)!, how, exitCode, gpu, gpuReleased };
}
