// Part src/alerts: owns attempt events turned into chat messages and deduplicated crash alerts, through the outbox.
// May import: chat, clock.ts, ledger, lifecycle, logs.
//
// Turns an attempt's life into chat messages through the outbox: one parent message per attempt, updated in place
// with every step of its load (and its elapsed time, kept moving by tick() while a load is stuck, which then says
// "no progress for N min"); its thread gets only phase changes (weights, KV cache, CUDA graphs, warm-up), alerts and
// results; one alert per crash, deduplicated by the classifier's key (the same crash again bumps a count on the first
// alert instead of posting a new one).

import { randomUUID } from 'node:crypto';
import type { Delivery } from '../chat/delivery.ts';
import { viewText } from '../chat/text.ts';
import type { ChatMessage, View } from '../chat/types.ts';
import type { Clock } from '../clock.ts';
import type { AlertTable } from '../ledger/alerts.ts';
import { type Attempt, attemptWhere } from '../ledger/attempts.ts';
import type { Outbox } from '../ledger/outbox.ts';
import type { LaunchEvent } from '../lifecycle/launch/types.ts';
import type { Diagnosis } from '../logs/diagnosis.ts';
import { type AlertSources, buildAlert } from './build.ts';

export interface NotifierOptions {
  channel: string;
  /** Post and update a parent message per attempt (Slack); the terminal prints progress itself. */
  parentMessages: boolean;
  milestonesInThread: boolean;
  simulated: (host: string) => boolean;
}

/** The outbox ref key of an attempt's message (its thread): reports link to it. */
export const parentKey = (id: number) => `attempt:${id}:parent`;

/** How long a loading attempt may go without a new step before its message says so. */
export const QUIET_MS = 60_000;
/** The key of an attempt's last parent update: once it is in the outbox, the attempt's end has been told. */
const endKey = (id: number) => `${parentKey(id)}:end`;

/** An attempt's message state for how it ended, from the ledger row. */
function endState(a: Attempt): string {
  if (a.status === 'crashed') return 'crashed';
  return a.status;
}

export function createNotifier(
  deps: { alerts: AlertTable; outbox: Outbox; delivery: Delivery; clock: Clock; sources: AlertSources },
  opts: NotifierOptions,
) {
  const { alerts, outbox, delivery, clock } = deps;
  // Attempts loading now: the step their message shows and when it came, so tick() can keep the time moving.
  const loading = new Map<number, { attempt: Attempt; detail: string; at: number }>();

  function attemptView(a: Attempt, state: string, detail: string): ChatMessage {
    const view: View = {
      type: 'attempt',
      attemptId: a.id,
      profile: a.profile,
      host: attemptWhere(a),
      actor: a.actor,
      state,
      detail,
      elapsedS: Math.round((clock.now() - a.startedAt) / 1000),
      simulated: opts.simulated(a.host),
    };
    return { text: viewText(view) ?? state, view };
  }

  /** The thread an attempt's messages go to: its own parent message, or its group's (a bisection's steps). */
  const threadOf = (a: Attempt) => a.groupKey ?? parentKey(a.id);

  function updateParent(a: Attempt, state: string, detail: string): void {
    if (!opts.parentMessages) return;
    // A late progress line or state never overwrites how the attempt ended.
    if (outbox.has(endKey(a.id))) return;
    if (a.groupKey) {
      // A step of a group has no message of its own: its outcome is one reply in the group's thread.
      if (state === 'loading') return;
      outbox.enqueue({
        key: `${a.groupKey}:step:${a.id}:${state}`,
        kind: 'post',
        channel: opts.channel,
        parentKey: a.groupKey,
        payload: attemptView(a, state, detail),
        at: clock.now(),
      });
      return;
    }
    outbox.enqueue({
      key: `${parentKey(a.id)}:u:${clock.now()}:${state}`,
      kind: 'update',
      channel: opts.channel,
      refKey: parentKey(a.id),
      payload: attemptView(a, state, detail),
      at: clock.now(),
    });
  }

  /**
   * When an attempt's crash was seen, for the alert's latency: its root line read (the early alert records the time
   * in the ledger), else the attempt's end (the exit seen, or found by a reconcile).
   */
  function seenOf(a: Attempt): NonNullable<ChatMessage['alert']> {
    const early = deps.sources.attempts.events(a.id).find((ev) => ev.kind === 'crash_seen');
    const lineSeenAt = (early?.data as { lineSeenAt?: number } | undefined)?.lineSeenAt;
    if (typeof lineSeenAt === 'number') return { seenAt: lineSeenAt, from: 'log' };
    return { seenAt: deps.sources.attempts.get(a.id)?.endedAt ?? clock.now(), from: 'exit' };
  }

  async function alert(a: Attempt, e: Extract<LaunchEvent, { kind: 'failed' }>): Promise<void> {
    const d = e.diagnosis;
    const now = clock.now();
    const prior = alerts.get(d.dedupKey);
    if (prior && prior.attempt_id !== a.id) {
      // This attempt was already counted (its crash is told early and again at exit).
      const pointerKey = `alert:${a.id}:same-as:${prior.attempt_id}`;
      if (outbox.has(pointerKey)) return;
      const count = prior.count + 1;
      alerts.recount(d.dedupKey, count, now);
      // The alert now speaks of the newest attempt with this crash (what changed for it), naming where it began.
      const view = await buildAlert(deps.sources, a, d, count, prior.attempt_id);
      outbox.enqueue({
        key: `${prior.ref_key}:count:${count}`,
        kind: 'update',
        channel: opts.channel,
        refKey: prior.ref_key,
        payload: { text: viewText(view) ?? '', view },
        at: now,
      });
      outbox.enqueue({
        key: pointerKey,
        kind: 'post',
        channel: opts.channel,
        parentKey: opts.parentMessages ? threadOf(a) : undefined,
        payload: {
          text: `same crash as attempt #${prior.attempt_id} (${d.category} during ${d.phase}); seen ${count} times: see its alert`,
          alert: seenOf(a),
        } satisfies ChatMessage,
        at: now,
      });
      return;
    }
    if (prior) return; // this attempt's crash was already alerted (e.g. seen again after a restart)
    const refKey = `alert:${a.id}`;
    alerts.add({ dedupKey: d.dedupKey, attemptId: a.id, category: d.category, at: now, refKey });
    const view = await buildAlert(deps.sources, a, d, 1);
    outbox.enqueue({
      key: refKey,
      kind: 'post',
      channel: opts.channel,
      refKey,
      parentKey: opts.parentMessages ? threadOf(a) : undefined,
      // A bisection's crashes are expected: they stay in its thread instead of being broadcast to the channel.
      payload: { text: viewText(view) ?? '', view, broadcast: !a.groupKey, alert: seenOf(a) } satisfies ChatMessage,
      at: now,
    });
  }

  /**
   * Every way an attempt ends comes here (a crash, an exit, a stop by command, button, scheduler or bisection, a
   * reconcile after a restart): its message shows the end (no Stop/Probe any more) and, when given, its thread says
   * how. Once per attempt, across restarts: the end key is remembered in the outbox.
   */
  function ended(a: Attempt, state: string, detail: string, thread?: ChatMessage): void {
    if (!opts.parentMessages) return;
    if (a.groupKey) {
      // A step of a group (a bisection) has no message of its own: its one reply in the group's thread says it.
      updateParent(a, state, detail);
      return;
    }
    // Only an attempt this face posted a message for (one launched from another face has none here).
    if (!outbox.has(parentKey(a.id)) || outbox.has(endKey(a.id))) return;
    outbox.enqueue({
      key: endKey(a.id),
      kind: 'update',
      channel: opts.channel,
      refKey: parentKey(a.id),
      payload: attemptView(a, state, detail),
      at: clock.now(),
    });
    if (thread) {
      outbox.enqueue({
        key: `${endKey(a.id)}:thread`,
        kind: 'post',
        channel: opts.channel,
        parentKey: parentKey(a.id),
        payload: thread,
        at: clock.now(),
      });
    }
  }

  // Alerts are built asynchronously (findings lookups); idle() lets a closing bot wait for them to be queued.
  const inflight = new Set<Promise<void>>();

  return {
    onEvent(e: LaunchEvent): Promise<void> {
      const p = handle(e).finally(() => inflight.delete(p));
      inflight.add(p);
      return p;
    },
    /** Opens a thread for attempts made together (a bisection): its steps reply there. */
    openGroup(key: string, text: string): void {
      if (!opts.parentMessages) return;
      outbox.enqueue({ key, kind: 'post', channel: opts.channel, refKey: key, payload: { text }, at: clock.now() });
      delivery.poke();
    },
    /** Re-renders a group's own message in place (an autopilot run's progress). */
    updateGroup(key: string, view: View): void {
      if (!opts.parentMessages) return;
      outbox.enqueue({
        key: `${key}:u:${clock.now()}:${randomUUID()}`,
        kind: 'update',
        channel: opts.channel,
        refKey: key,
        payload: { text: viewText(view) ?? '', view },
        at: clock.now(),
      });
      delivery.poke();
    },
    /** A file in a group's thread (an autopilot run's chart). */
    groupUpload(key: string, file: { filename: string; title: string; content: string; encoding?: 'base64' }): void {
      if (!opts.parentMessages) return;
      outbox.enqueue({
        key: `${key}:f:${file.filename}`,
        kind: 'upload',
        channel: opts.channel,
        parentKey: key,
        payload: file,
        at: clock.now(),
      });
      delivery.poke();
    },
    /** A line in a group's thread. */
    groupReply(key: string, text: string): void {
      if (!opts.parentMessages) return;
      outbox.enqueue({
        key: `${key}:r:${clock.now()}:${randomUUID()}`,
        kind: 'post',
        channel: opts.channel,
        parentKey: key,
        payload: { text },
        at: clock.now(),
      });
      delivery.poke();
    },
    /**
     * After a restart: attempts that ended while this bot was away (closed by another process, or before it could
     * tell) get their end told now, and their crash alerted (once: alerts are deduplicated by the classifier's key).
     */
    async catchUp(): Promise<number> {
      let told = 0;
      for (const a of deps.sources.attempts.list({ limit: 200 })) {
        if (a.active || a.groupKey || !outbox.has(parentKey(a.id)) || outbox.has(endKey(a.id))) continue;
        told += 1;
        const d = a.classification as Diagnosis | null;
        const state = endState(a);
        ended(a, state, state === 'crashed' ? (d?.category ?? a.outcome ?? '') : (a.outcomeDetail ?? ''));
        if (state === 'crashed' && d && d.category !== 'none') {
          await alert(a, { kind: 'failed', attempt: a, outcome: d.category, diagnosis: d, exitCode: a.exitCode });
        }
      }
      delivery.poke();
      return told;
    },
    async idle(): Promise<void> {
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
    },
    /** A step of the load: the parent shows it; the thread hears of it only when it starts a new `phase`. */
    progress(a: Attempt, text: string, phase: string): void {
      loading.set(a.id, { attempt: a, detail: text, at: clock.now() });
      // A scheduler's job waiting for its nodes says so in its message ("queued: Resources (position 2)").
      updateParent(a, a.status === 'queued' ? 'queued' : 'loading', text);
      if (opts.milestonesInThread && !a.groupKey) {
        // Keyed by the phase: a follower that re-reads the log after a restart posts nothing twice.
        outbox.enqueue({
          key: `attempt:${a.id}:phase:${phase}`,
          kind: 'post',
          channel: opts.channel,
          parentKey: parentKey(a.id),
          payload: { text },
          at: clock.now(),
        });
      }
      delivery.poke();
    },
    /**
     * Re-renders every loading attempt's message with its elapsed time, adding "no progress for N min" once its last
     * step is QUIET_MS old; the bot calls it on a timer. An attempt that ended by a way this notifier did not hear of
     * is dropped (the ledger says so).
     */
    tick(): void {
      const now = clock.now();
      for (const [id, l] of loading) {
        const a = deps.sources.attempts.get(id);
        if (!a || (a.status !== 'starting' && a.status !== 'loading')) {
          loading.delete(id);
          continue;
        }
        const quiet = now - l.at;
        const detail =
          quiet >= QUIET_MS ? `${l.detail || a.status}; no progress for ${Math.floor(quiet / 60_000)} min` : l.detail;
        updateParent(a, 'loading', detail);
      }
      if (loading.size > 0) delivery.poke();
    },
  };

  async function handle(e: LaunchEvent): Promise<void> {
    const now = clock.now();
    if (e.kind === 'started') loading.set(e.attempt.id, { attempt: e.attempt, detail: '', at: now });
    else if (e.kind === 'ready' || e.kind === 'failed' || e.kind === 'stopped') loading.delete(e.attempt.id);
    if (e.kind === 'started' && opts.parentMessages && e.attempt.groupKey) {
      updateParent(e.attempt, 'starting', e.attempt.profile);
    } else if (e.kind === 'started' && opts.parentMessages) {
      outbox.enqueue({
        key: parentKey(e.attempt.id),
        kind: 'post',
        channel: opts.channel,
        refKey: parentKey(e.attempt.id),
        payload: attemptView(e.attempt, 'starting', ''),
        at: now,
      });
    } else if (e.kind === 'milestone') {
      // milestones reach the notifier through progress(), which knows the attempt
    } else if (e.kind === 'ready') {
      updateParent(e.attempt, 'ready', `in ${Math.round(e.seconds)} s`);
    } else if (
      e.kind === 'failed' &&
      e.diagnosis.category === 'none' &&
      e.outcome !== 'exited' &&
      e.outcome !== 'lost' &&
      e.outcome !== 'hang'
    ) {
      // An ending the scheduler named (time limit, preempted, node failure, cancelled elsewhere, out of memory): not a
      // crash of the server, so no crash class; told in the thread and the channel with Slurm's own words. Its message
      // is finalised as every other end is.
      if (e.attempt.active) updateParent(e.attempt, e.outcome, e.diagnosis.summary);
      else ended(e.attempt, e.outcome, e.diagnosis.summary);
      outbox.enqueue({
        key: `alert:${e.attempt.id}:ended`,
        kind: 'post',
        channel: opts.channel,
        parentKey: opts.parentMessages ? threadOf(e.attempt) : undefined,
        payload: {
          text: `attempt #${e.attempt.id} ${e.attempt.profile} on ${attemptWhere(e.attempt)} by ${e.attempt.actor}: ${e.outcome}: ${e.diagnosis.summary}`,
          broadcast: !e.attempt.groupKey,
        },
        at: now,
      });
    } else if (e.kind === 'failed') {
      if (e.outcome === 'request_failed') {
        // Up but refusing the bot's request: no crash to alert, the server still runs (and can be stopped).
        updateParent(e.attempt, 'request failed', e.diagnosis.summary);
      } else if (e.outcome === 'hang') {
        // Left running for inspection: not an end.
        updateParent(e.attempt, 'hung', e.diagnosis.category);
        await alert(e.attempt, e);
      } else if (e.attempt.active) {
        // Told early (the root line read, the server not gone yet): the end comes with the exit.
        updateParent(e.attempt, 'crashed', e.diagnosis.category);
        await alert(e.attempt, e);
      } else {
        const state = e.outcome === 'exited' || e.outcome === 'lost' ? e.outcome : 'crashed';
        ended(e.attempt, state, state === 'crashed' ? e.diagnosis.category : (e.attempt.outcomeDetail ?? ''));
        if (state === 'crashed') await alert(e.attempt, e);
      }
    } else if (e.kind === 'stopped') {
      ended(e.attempt, 'stopped', `by ${e.actor}`, {
        text: `stopped by ${e.actor}: ${e.text}`,
        view: { type: 'stopped', attemptId: e.attempt.id, actor: e.actor, text: e.text },
      });
    }
    delivery.poke();
  }
}

export type Notifier = ReturnType<typeof createNotifier>;
