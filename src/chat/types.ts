// Part src/chat: owns the chat seam (ChatAdapter, views), the console face and outbox delivery.
// May import: clock.ts, findings, format, ledger, logger.ts, logs.
//
// The chat seam. Faces (terminal, Slack) implement ChatAdapter; what the bot says is a structured view plus a plain
// text fallback, so each face renders it its own way (text lines, Block Kit) from the same data.
import type { Diagnosis } from '../logs/diagnosis.ts';

export interface ChatRef {
  channel: string;
  ts: string;
}

// Excerpts of the team's findings, as the findings index returns them.
export type { Excerpt } from '../findings/excerpt.ts';

import type { Excerpt } from '../findings/excerpt.ts';

export type View =
  | {
      type: 'attempt';
      attemptId: number;
      profile: string;
      host: string;
      actor: string;
      state: string;
      detail: string;
      elapsedS: number;
      simulated: boolean;
    }
  | {
      type: 'alert';
      attemptId: number;
      profile: string;
      host: string;
      actor: string;
      diagnosis: Diagnosis;
      flagChanges: Array<{ flag: string; from: string; to: string }>;
      comparedWith: string | null;
      /** Why there is no "what changed": e.g. no earlier good attempt of this model. */
      noComparison?: string;
      /** The errors this server survived before this crash, in one line (`2 different errors were survived before this ...`). */
      survivedBefore?: string;
      excerpts: Excerpt[];
      alreadyTried: Array<{ attemptId: number; profile: string; outcome: string }>;
      count: number;
      /** A repeat (count > 1): the attempt where this crash was first seen; `attemptId` is the newest. */
      firstAttemptId?: number;
      nextSteps: string[];
      /** Public reports of the most similar known crashes (the shipped corpus), best first. */
      known: Array<{ ref: string; url: string; title: string; state: string }>;
    }
  | {
      /** A scheduled job's report: its verdict first (what notifications and search show), who is on call. */
      type: 'report';
      verdict: string;
      title: string;
      /** Facts a reader needs at a glance: profile, SGLang version, how long the run took. */
      facts: string[];
      body: string;
      /** Slack user (U...) or user group (S...) IDs to mention: the on-call, on a failure. */
      mention: string[];
      /**
       * `refKey`: a message the bot posted (an attempt's thread), resolved at delivery into `ref` (and by the face
       * into `url`, its permalink); `text`: a plain fact (a log's path on its host).
       */
      links: Array<{ label: string; refKey?: string; ref?: ChatRef; url?: string; text?: string }>;
    }
  | {
      /** An autopilot run's one message: updated in place while it runs (src/autopilot). */
      type: 'autopilot';
      runId: number;
      profile: string;
      host: string;
      actor: string;
      status: string;
      phase: string;
      launches: number;
      budget: number;
      /** The configuration of the newest trial. */
      current: string;
      best: string;
      timeLeftS: number;
      detail: string;
    }
  | {
      /** An attempt stopped (by a person, the scheduler or a bisection): told in its thread. */
      type: 'stopped';
      attemptId: number;
      actor: string;
      text: string;
    }
  | { type: 'text' };

export interface ChatMessage {
  /** Plain text: the terminal's output and Slack's notification fallback. */
  text: string;
  view?: View;
  /** Slack: also show a thread reply in the channel. */
  broadcast?: boolean;
  /**
   * On a crash alert: when its crash was seen (its root line read from the log, or the server's end seen), so the
   * delivery can measure the alert's latency (glm_alert_latency_seconds).
   */
  alert?: { seenAt: number; from: 'log' | 'exit' };
}

/**
 * Who a post is in the outbox, so the chat can find it again. `recheck`: an earlier try may have been accepted (it
 * timed out, the connection reset, a 5xx, or the bot died mid-call), so look for `tag` among the messages since
 * `since` before posting again.
 */
export interface PostTag {
  tag: { id: number; created: number };
  recheck: boolean;
  since: number;
  /** The file a long post's overflow goes to, protected the same way as an upload of its own. */
  upload?: UploadTag;
}

/**
 * Who an upload is in the outbox. A file gets its id before it is shared into the channel; `remember` keeps that id
 * in the ledger before the share is asked for, so after a try whose answer was lost (`recheck`), even across a
 * restart, the chat is asked whether file `fileId` was shared there before it is uploaded again.
 */
export interface UploadTag {
  recheck: boolean;
  fileId?: string;
  remember(fileId: string): void;
}

export interface ChatAdapter {
  post(dest: { channel: string; threadTs?: string }, msg: ChatMessage, tag?: PostTag): Promise<ChatRef>;
  update(ref: ChatRef, msg: ChatMessage): Promise<void>;
  /** `content` is text, or base64 of binary data (a PNG chart) when `encoding` says so. */
  upload(
    dest: { channel: string; threadTs?: string },
    file: { filename: string; content: string; title?: string; encoding?: 'base64' },
    tag?: UploadTag,
  ): Promise<void>;
}

/**
 * An error a ChatAdapter throws to say "try again later" (429, 5xx, network). `maybeDelivered`: the request may have
 * been carried out though its answer was lost (a timeout, a reset connection, a 5xx), as opposed to refused before
 * anything happened (429, connection refused).
 */
export class TransientChatError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    readonly maybeDelivered = false,
  ) {
    super(message);
  }
}
