// Sends the outbox in order through a ChatAdapter. Transient failures (429 with Retry-After, 5xx, network) wait and
// retry the same item, so nothing behind it in its channel overtakes it (other channels go on); permanent ones are
// recorded and skipped. A post whose try may have been carried out (a timeout, a reset, a 5xx, or the bot killed
// mid-call: recorded in the row before the call) is looked up in the chat by its outbox id before it is posted
// again, and an upload by the file id it was given (kept before the file is shared), so a restart never posts or
// uploads twice. Updates to one message are spaced out (Slack's chat.update is Tier 3); the
// outbox coalesces them meanwhile. Delivered rows are pruned after a retention period.
import type { Clock } from '../clock.ts';
import type { Outbox, OutboxItem } from '../ledger/outbox.ts';
import type { Logger } from '../logger.ts';
import { type ChatAdapter, type ChatMessage, type ChatRef, TransientChatError, type UploadTag } from './types.ts';

export interface Delivery {
  /** Sends what can be sent now; resolves when the queue is empty or must wait. */
  drain(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
  /** Wakes the loop after an enqueue. */
  poke(): void;
  /** Waits until nothing is pending (or the time is up); for tests and a one-shot CLI exit. */
  flush(timeoutMs: number): Promise<boolean>;
}

export function createDelivery(opts: {
  outbox: Outbox;
  adapter: ChatAdapter;
  clock: Clock;
  log: Logger;
  updateIntervalMs?: number;
  maxBackoffMs?: number;
  /** How long delivered rows are kept (their keys make enqueueing idempotent meanwhile); default 30 days. */
  retentionMs?: number;
  /** Told of every item delivered (metrics: a crash alert's latency), when it went out. */
  onSent?: (item: OutboxItem, at: number) => void;
}): Delivery {
  const { outbox, adapter, clock, log } = opts;
  const updateInterval = opts.updateIntervalMs ?? 3000;
  const maxBackoff = opts.maxBackoffMs ?? 60_000;
  const retention = opts.retentionMs ?? 30 * 24 * 3600_000;
  let prunedAt = Number.NEGATIVE_INFINITY;
  const lastUpdate = new Map<string, number>();
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let draining: Promise<void> | undefined;

  async function send(item: OutboxItem): Promise<'sent' | 'wait'> {
    const msg = item.payload as ChatMessage & {
      filename?: string;
      content?: string;
      title?: string;
      encoding?: 'base64';
    };
    const parent = item.parentKey ? outbox.ref(item.parentKey) : undefined;
    if (msg.view?.type === 'report') {
      // Links to the bot's own messages (an attempt's thread) are known only once those went out.
      for (const l of msg.view.links) if (l.refKey) l.ref = outbox.ref(l.refKey);
    }
    if (item.kind === 'post') {
      const recheck = outbox.trying(item.id);
      let ref: ChatRef;
      try {
        ref = await adapter.post({ channel: parent?.channel ?? item.channel, threadTs: parent?.ts }, msg, {
          tag: { id: item.id, created: item.createdAt },
          recheck,
          since: item.createdAt,
          upload: uploadTag(item, recheck),
        });
      } catch (e) {
        if (!(e instanceof TransientChatError && e.maybeDelivered)) outbox.untried(item.id, recheck);
        throw e;
      }
      if (item.refKey) outbox.saveRef(item.refKey, ref.channel, ref.ts);
      return 'sent';
    }
    if (item.kind === 'update') {
      const ref = item.refKey ? outbox.ref(item.refKey) : undefined;
      if (!ref) throw new Error(`no message to update for ${item.refKey} (its post failed)`);
      const last = lastUpdate.get(item.refKey!) ?? 0;
      if (clock.now() - last < updateInterval) return 'wait';
      // Under way: a newer state queued meanwhile gets a row of its own instead of being folded into this one.
      outbox.trying(item.id);
      try {
        await adapter.update(ref, msg);
      } catch (e) {
        outbox.untried(item.id, false);
        throw e;
      }
      lastUpdate.set(item.refKey!, clock.now());
      return 'sent';
    }
    // An upload whose share may have been carried out is looked up by its file id before it is uploaded again.
    const recheck = outbox.trying(item.id);
    try {
      await adapter.upload(
        { channel: parent?.channel ?? item.channel, threadTs: parent?.ts },
        { filename: msg.filename ?? 'file.txt', content: msg.content ?? '', title: msg.title, encoding: msg.encoding },
        uploadTag(item, recheck),
      );
    } catch (e) {
      if (!(e instanceof TransientChatError && e.maybeDelivered)) outbox.untried(item.id, recheck);
      throw e;
    }
    return 'sent';
  }

  /** The file id an item's upload got is kept with the message refs, under a key of its own outbox id. */
  function uploadTag(item: OutboxItem, recheck: boolean): UploadTag {
    const key = `file#${item.id}`;
    return {
      recheck,
      fileId: outbox.ref(key)?.ts,
      remember: (fileId) => outbox.saveRef(key, item.channel, fileId),
    };
  }

  function prune(): void {
    const now = clock.now();
    if (now - prunedAt < 3600_000) return;
    prunedAt = now;
    const n = outbox.prune(now - retention);
    if (n > 0) log.info({ rows: n, retentionDays: retention / 86_400_000 }, 'outbox: pruned delivered messages');
  }

  /**
   * Sends pending items in order. An update that must wait for its message's spacing is passed over (it is only the
   * newest state of that message, and the outbox keeps coalescing it) so it never holds back an alert queued behind
   * it; a transient failure (or a retry not yet due) stops its channel for the round, keeping order for everything
   * after it there, while other channels go on.
   */
  async function drainOnce(): Promise<number | undefined> {
    prune();
    for (;;) {
      const batch = outbox.pending(200);
      if (batch.length === 0) return undefined;
      const spaced = new Set<string>();
      const held = new Set<string>();
      let soonest: number | undefined;
      const soon = (ms: number) => {
        soonest = Math.min(soonest ?? Number.POSITIVE_INFINITY, ms);
      };
      let sent = 0;
      for (const item of batch) {
        const now = clock.now();
        if (held.has(item.channel)) continue;
        if (item.kind === 'update' && item.refKey && spaced.has(item.refKey)) continue;
        if (item.nextAt > now) {
          held.add(item.channel);
          soon(item.nextAt - now);
          continue;
        }
        try {
          const r = await send(item);
          if (r === 'wait') {
            spaced.add(item.refKey!);
            const until = (lastUpdate.get(item.refKey!) ?? 0) + updateInterval;
            soon(Math.max(until - clock.now(), 1));
            continue;
          }
          const at = clock.now();
          outbox.markSent(item.id, at);
          opts.onSent?.(item, at);
          sent += 1;
        } catch (e) {
          if (e instanceof TransientChatError) {
            const backoff = Math.min(2 ** item.attempts * 500, maxBackoff);
            const wait = Math.max(e.retryAfterMs ?? 0, backoff);
            outbox.retryLater(item.id, clock.now() + wait, e.message);
            log.warn(
              { outboxId: item.id, key: item.key, channel: item.channel, waitMs: wait, err: e.message },
              e.maybeDelivered
                ? 'chat delivery will retry (it may have gone through: it will be looked up first)'
                : 'chat delivery will retry',
            );
            held.add(item.channel);
            soon(wait);
            continue;
          }
          outbox.markFailed(item.id, (e as Error).message, clock.now());
          log.error({ outboxId: item.id, key: item.key, err: (e as Error).message }, 'chat delivery failed for good');
        }
      }
      // Everything left is waiting for its spacing, or a full batch went out and more may be queued.
      if (sent === 0 || batch.length < 200) return soonest;
    }
  }

  function drain(): Promise<void> {
    draining ??= drainOnce()
      .then(() => undefined)
      .finally(() => {
        draining = undefined;
      });
    return draining;
  }

  return {
    drain,
    poke() {
      wake?.();
    },
    start() {
      if (running) return;
      running = true;
      loop = (async () => {
        while (running) {
          let wait: number | undefined;
          try {
            draining ??= drainOnce().then((w) => {
              wait = w;
            });
            await draining;
          } finally {
            draining = undefined;
          }
          if (!running) break;
          await new Promise<void>((resolve) => {
            // A wake clears the timer too: a stopped delivery leaves nothing that keeps the process alive (a one-shot
            // `glm` command exited a second late waiting on it).
            const timer = setTimeout(resolve, Math.min(wait ?? 1000, 1000));
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
      })();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
    },
    async flush(timeoutMs) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        await drain();
        if (outbox.pending(1).length === 0) return true;
        await new Promise((r) => setTimeout(r, 20));
      }
      return outbox.pending(1).length === 0;
    },
  };
}
