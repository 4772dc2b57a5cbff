// Launch, step 5: follow. Every node's log is read as it grows: milestones move the attempt's progress (told once
// though every TP rank logs them), the classifier reads every line for a crash, the clock notices a hang and the
// ready timeout. On the ready line, step 6 (./ready.ts) confirms the server answers; the outcome is recorded by
// ./ready.ts or ./outcome.ts. Also used to re-attach to a loading attempt after a restart (src/lifecycle/resume.ts).
import type { Attempt } from '../../ledger/attempts.ts';
import { crashedBeforeExit, type DiagnoserFactory, type Diagnosis } from '../../logs/diagnosis.ts';
import { parseMilestone } from '../../logs/milestones.ts';
import { backendFor } from '../backends.ts';
import { type Engine, hostOf } from '../engine.ts';
import { markFollower } from '../follower.ts';
import { stampOf } from '../log-read.ts';
import { failNodes, watchNodes } from '../node-watch.ts';
import { advance, initialProgress } from '../progress.ts';
import { requeuedAgain } from '../requeue.ts';
import { stopRequested } from '../stop.ts';
import { watchAttempt } from '../watch.ts';
import { asFollower, closingOf } from '../watching.ts';
import { recordEnding } from './ending.ts';
import { closedByStop, recordExit, recordHang, recordRequestFailed, recordTimeout, stopperClosed } from './outcome.ts';
import { confirmReady, recordReady } from './ready.ts';
import type { LaunchEvent, LaunchResult } from './types.ts';

/**
 * Follows a loading attempt to its outcome. Also used to re-attach after a restart. A bot that closes meanwhile ends
 * it `interrupted`, the attempt left as it is (src/lifecycle/resume.ts: the next bot follows it on).
 */
export function follow(...args: Parameters<typeof followRun>): Promise<LaunchResult> {
  return asFollower(args[0], followRun(...args));
}

const interrupted = (engine: Engine, attempt: Attempt): LaunchResult => ({
  outcome: 'interrupted',
  commandLine: attempt.commandLine,
  attempt: engine.attempts.get(attempt.id) ?? attempt,
});

async function followRun(
  engine: Engine,
  attempt: Attempt,
  firstRequest: boolean,
  emit: (e: LaunchEvent) => void,
  diagnoser: DiagnoserFactory,
): Promise<LaunchResult> {
  const closing = closingOf(engine);
  if (closing.aborted) return interrupted(engine, attempt);
  // A scheduler's job may still wait in its queue: the log starts once it runs.
  const admitted = await backendFor(engine, attempt.host).admitted(engine, attempt, emit);
  if (closing.aborted) return interrupted(engine, attempt);
  if ('ended' in admitted) {
    // Taken out of the queue by a stop (a held or pending job cancelled): the stop's end, not one Slurm names, and
    // the stopper's record of it (how, the state Slurm had it in), written once Slurm confirms the job is over.
    if (stopRequested(engine, attempt.id)) await stopperClosed(engine, attempt.id);
    return (
      closedByStop(engine, attempt, admitted.ended.exitCode) ?? recordEnding(engine, attempt, admitted.ended, emit)
    );
  }
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
    outcome ??= 'timeout';
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
  const onClosing = () => {
    outcome ??= 'interrupted';
    abort.abort();
  };
  closing.addEventListener('abort', onClosing, { once: true });

  await watchAttempt(
    engine,
    attempt,
    {
      onLine: (line) => {
        diag.push(line.text, line.lineNo);
        early.check();
        // keep reading until the server is gone: later lines may matter (a failure record alone is no crash yet: the
        // server may get ready and serve on)
        if (crashedBeforeExit(diag)) return undefined;
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
          checking = confirmReady(engine, host, attempt, firstRequest, closing).then(
            async (r) => {
              // (a bot closing meanwhile has ended the follow: interrupted stays)
              if (r === true && !crashedBeforeExit(diag) && outcome !== 'interrupted') {
                outcome = 'ready';
                abort.abort();
              } else if (typeof r === 'string') {
                // An answer with an error status: a crash it caused shows in the log within moments (and wins);
                // otherwise it is the verdict now, not after timeouts.ready_s.
                await engine.clock.sleep(1000);
                if (!crashedBeforeExit(diag) && !outcome) {
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
  closing.removeEventListener('abort', onClosing);
  await checking;
  if (outcome === 'interrupted') {
    await nodes.settle(false);
    return interrupted(engine, attempt);
  }
  // The server went because its scheduler requeued the job (the profile's slurm.requeue): it will run again, so the
  // attempt waits in the queue and its next run is followed like the first.
  const requeued = backendFor(engine, attempt.host).requeued;
  if (
    !outcome &&
    requeued &&
    (await requeuedAgain(engine, attempt, () => requeued(engine, attempt), emit, diag.crashed() ? diag.result() : null))
  ) {
    await nodes.settle(false);
    return follow(engine, engine.attempts.get(attempt.id)!, firstRequest, emit, diagnoser);
  }
  const nodeFailure = await nodes.settle(outcome !== 'ready' && outcome !== 'hang' && outcome !== 'timeout');
  // A worker that lost its peer because the head went (stopped from outside, or crashed of its own cause): the
  // head's end is told, as one node's would be (recordExit below, which stops the workers).
  const explained = nodeFailure && outcome !== 'ready' ? await nodes.explain(diag.result(), nodeFailure) : null;
  if (nodeFailure && outcome !== 'ready' && !explained) {
    const f = await failNodes(engine, attempt, nodeFailure, emit);
    return { outcome: 'crashed', commandLine: attempt.commandLine, attempt: f.attempt, diagnosis: f.diagnosis };
  }

  if (outcome === 'ready' && !crashedBeforeExit(diag)) return recordReady(engine, attempt, readyStamp, emit);
  if (outcome === 'hang' && hang) return recordHang(engine, attempt, hang, emit);
  if (outcome === 'request_failed' && refused) return recordRequestFailed(engine, attempt, refused, emit);
  if (outcome === 'timeout') return recordTimeout(engine, attempt, diag.result(), timeoutMs, progress.stage);
  // The server is gone, or the watch ended for another reason: the host's record and the log decide the outcome.
  return recordExit(engine, attempt, diag.result(), emit);
}
