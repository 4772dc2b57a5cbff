// The persistent outbox: every post, update and upload the bot makes goes here first, so a chat outage or a bot
// restart delays a message but never loses or repeats it. Keys make enqueueing idempotent; a message's ref (Slack
// ts) is stored under its ref key so later updates and thread replies find it, even across restarts.
import { redactValue } from '../redact.ts';
import type { Db } from './db.ts';

export type OutboxKind = 'post' | 'update' | 'upload';

export interface OutboxItem {
  id: number;
  key: string;
  kind: OutboxKind;
  channel: string;
  /** post: the ref key this message will be known by. update: the ref key of the message to change. */
  refKey: string | null;
  /** post/upload in a thread: the ref key of the thread's parent. */
  parentKey: string | null;
  payload: unknown;
  attempts: number;
  nextAt: number;
  createdAt: number;
  /** An earlier try may have been carried out by the chat: look for it before posting again. */
  uncertain: boolean;
}

type Row = Record<string, unknown>;

const fromRow = (r: Row): OutboxItem => ({
  id: r.id as number,
  key: r.key as string,
  kind: r.kind as OutboxKind,
  channel: r.channel as string,
  refKey: (r.ref_key as string) ?? null,
  parentKey: (r.parent_key as string) ?? null,
  createdAt: r.created_at as number,
  payload: JSON.parse(r.payload_json as string),
  attempts: r.attempts as number,
  nextAt: r.next_at as number,
  uncertain: r.uncertain === 1,
});

/**
 * One face's view of the outbox. Several faces can share a ledger (the Slack bot, and a person running `glm status`
 * on the same data directory): each only sees and sends its own messages, because every key is stored under the
 * face's prefix.
 */
export function createOutbox(db: Db, face = 'terminal') {
  const prefix = `${face}|`;
  const pre = (k: string | undefined | null) => (k === undefined || k === null ? null : prefix + k);
  const strip = (item: OutboxItem): OutboxItem => ({
    ...item,
    key: item.key.slice(prefix.length),
    refKey: item.refKey?.slice(prefix.length) ?? null,
    parentKey: item.parentKey?.slice(prefix.length) ?? null,
  });
  return {
    face,
    /**
     * Queues a message. Same key twice: the first wins, except for updates, which coalesce (only the newest state of
     * a message matters, so a burst of progress becomes one chat.update).
     */
    enqueue(item: {
      key: string;
      kind: OutboxKind;
      channel: string;
      refKey?: string;
      parentKey?: string;
      payload: unknown;
      at: number;
    }): void {
      // Redacted before it is stored: a message waiting for Slack is as public as one sent.
      const payload = JSON.stringify(redactValue(item.payload));
      if (item.kind === 'update') {
        const pending = db
          .prepare(
            "SELECT id FROM outbox WHERE kind = 'update' AND ref_key = ? AND status = 'pending' AND uncertain = 0 ORDER BY id DESC LIMIT 1",
          )
          .get(pre(item.refKey)) as Row | undefined;
        if (pending) {
          // The newest state replaces the one not sent yet, under the newest key: has(key) stays true for it. A row
          // whose send is under way (uncertain) is not touched: its call already carries the older state, and the
          // newest would be lost when it is marked sent.
          db.prepare('UPDATE OR IGNORE outbox SET payload_json = ?, key = ? WHERE id = ?').run(
            payload,
            pre(item.key),
            pending.id,
          );
          return;
        }
      }
      db.prepare(
        `INSERT OR IGNORE INTO outbox (key, kind, channel, ref_key, parent_key, payload_json, status, attempts, next_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
      ).run(pre(item.key), item.kind, item.channel, pre(item.refKey), pre(item.parentKey), payload, item.at, item.at);
    },
    has(key: string): boolean {
      return db.prepare('SELECT 1 FROM outbox WHERE key = ?').get(prefix + key) !== undefined;
    },
    /** Pending items in the order they were queued (per-thread order is global order). */
    pending(limit = 100): OutboxItem[] {
      return (
        db
          .prepare("SELECT * FROM outbox WHERE status = 'pending' AND substr(key, 1, ?) = ? ORDER BY id LIMIT ?")
          .all(prefix.length, prefix, limit) as Row[]
      )
        .map(fromRow)
        .map(strip);
    },
    markSent(id: number, at: number): void {
      db.prepare("UPDATE outbox SET status = 'sent', sent_at = ? WHERE id = ?").run(at, id);
    },
    markFailed(id: number, error: string, at: number): void {
      db.prepare("UPDATE outbox SET status = 'failed', error = ?, sent_at = ? WHERE id = ?").run(error, at, id);
    },
    retryLater(id: number, nextAt: number, error: string): void {
      db.prepare('UPDATE outbox SET attempts = attempts + 1, next_at = ?, error = ? WHERE id = ?').run(
        nextAt,
        error,
        id,
      );
    },
    /**
     * Marks a try as under way before it is made (so a bot killed mid-call looks before posting again after its
     * restart); returns whether an earlier try was already uncertain.
     */
    trying(id: number): boolean {
      const r = db.prepare('SELECT uncertain FROM outbox WHERE id = ?').get(id) as Row | undefined;
      db.prepare('UPDATE outbox SET uncertain = 1 WHERE id = ?').run(id);
      return r?.uncertain === 1;
    },
    /** After a try that certainly did not reach the chat (429, connection refused): back to what it was. */
    untried(id: number, uncertain: boolean): void {
      db.prepare('UPDATE outbox SET uncertain = ? WHERE id = ?').run(uncertain ? 1 : 0, id);
    },
    /** Deletes delivered (and given-up) rows finished before `before`, every face's; returns how many. */
    prune(before: number): number {
      return db.prepare("DELETE FROM outbox WHERE status IN ('sent', 'failed') AND sent_at < ?").run(before).changes;
    },
    saveRef(refKey: string, channel: string, ts: string): void {
      db.prepare('INSERT OR REPLACE INTO message_refs (ref_key, channel, ts) VALUES (?, ?, ?)').run(
        prefix + refKey,
        channel,
        ts,
      );
    },
    ref(refKey: string): { channel: string; ts: string } | undefined {
      return db.prepare('SELECT channel, ts FROM message_refs WHERE ref_key = ?').get(prefix + refKey) as
        | { channel: string; ts: string }
        | undefined;
    },
    counts(): Record<string, number> {
      const rows = db
        .prepare('SELECT status, COUNT(*) AS n FROM outbox WHERE substr(key, 1, ?) = ? GROUP BY status')
        .all(prefix.length, prefix) as Array<{
        status: string;
        n: number;
      }>;
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },
  };
}

export type Outbox = ReturnType<typeof createOutbox>;
