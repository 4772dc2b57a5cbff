// Sends the outbox in order through a ChatAdapter. Transient failures (429 with Retry-After, 5xx, network) wait and
// retry the same item, so nothing behind it overtakes it; permanent ones are recorded and skipped. Updates to one
// message are spaced out (Slack's chat.update is Tier 3); the outbox coalesces them meanwhile.
import type { Clock } from '../clock.ts';
import type { Outbox, OutboxItem } from '../ledger/outbox.ts';
import type { Logger } from '../logger.ts';
import { type ChatAdapter, type ChatMessage, TransientChatError } from './types.ts';

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
}): Delivery {
  const { outbox, adapter, clock, log } = opts;
  const updateInterval = opts.updateIntervalMs ?? 3000;
  const maxBackoff = opts.maxBackoffMs ?? 60_000;
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
    if (item.kind === 'post') {
      const ref = await adapter.post({ channel: parent?.channel ?? item.channel, threadTs: parent?.ts }, msg);
      if (item.refKey) outbox.saveRef(item.refKey, ref.channel, ref.ts);
      return 'sent';
    }
    if (item.kind === 'update') {
      const ref = item.refKey ? outbox.ref(item.refKey) : undefined;
      if (!ref) throw new Error(`no message to update for ${item.refKey} (its post failed)`);
      const last = lastUpdate.get(item.refKey!) ?? 0;
      if (clock.now() - last < updateInterval) return 'wait';
      await adapter.update(ref, msg);
      lastUpdate.set(item.refKey!, clock.now());
      return 'sent';
    }
    await adapter.upload(
      { channel: parent?.channel ?? item.channel, threadTs: parent?.ts },
      { filename: msg.filename ?? 'file.txt', content: msg.content ?? '', title: msg.title, encoding: msg.encoding },
    );
    return 'sent';
  }

  /**
   * Sends pending items in order. An update that must wait for its message's spacing is passed over (it is only the
   * newest state of that message, and the outbox keeps coalescing it) so it never holds back an alert queued behind
   * it; a transient failure stops the round, keeping order for everything after it.
   */
  async function drainOnce(): Promise<number | undefined> {
    for (;;) {
      const batch = outbox.pending(200);
      if (batch.length === 0) return undefined;
      const spaced = new Set<string>();
      let soonest: number | undefined;
      let sent = 0;
      for (const item of batch) {
        const now = clock.now();
        if (item.kind === 'update' && item.refKey && spaced.has(item.refKey)) continue;
        if (item.nextAt > now) return Math.min(item.nextAt - now, soonest ?? Number.POSITIVE_INFINITY);
        try {
          const r = await send(item);
          if (r === 'wait') {
            spaced.add(item.refKey!);
            const until = (lastUpdate.get(item.refKey!) ?? 0) + updateInterval;
            soonest = Math.min(soonest ?? Number.POSITIVE_INFINITY, Math.max(until - clock.now(), 1));
            continue;
          }
          outbox.markSent(item.id, clock.now());
          sent += 1;
        } catch (e) {
          if (e instanceof TransientChatError) {
            const backoff = Math.min(2 ** item.attempts * 500, maxBackoff);
            const wait = Math.max(e.retryAfterMs ?? 0, backoff);
            outbox.retryLater(item.id, clock.now() + wait, e.message);
            log.warn({ outboxId: item.id, key: item.key, waitMs: wait, err: e.message }, 'chat delivery will retry');
            return wait;
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
            wake = resolve;
            setTimeout(resolve, Math.min(wait ?? 1000, 1000));
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
