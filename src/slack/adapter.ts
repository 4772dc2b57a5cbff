// The Slack ChatAdapter: what the outbox delivers becomes chat.postMessage / chat.update / file upload calls, or a
// reply through a command's response_url. Every string that leaves is scrubbed of secrets first. Failures are sorted
// into TransientChatError (the outbox waits and retries the same item) and plain errors (recorded, skipped).
// Every channel post carries its outbox id in the message's metadata (https://docs.slack.dev/messaging/message-metadata):
// after a try that may have gone through, the channel's history (conversations.history) or the thread's
// (conversations.replies), read with include_all_metadata, is searched for it before posting again. A file is known
// by the id Slack gives it before it is shared (https://docs.slack.dev/messaging/working-with-files): after a lost
// answer, files.info's `shares` says whether it reached its channel or thread before it is uploaded again.
import { createHash } from 'node:crypto';
import type { types, webApi } from '@slack/bolt';
import {
  type ChatAdapter,
  type ChatMessage,
  type ChatRef,
  type PostTag,
  TransientChatError,
  type UploadTag,
} from '../chat/types.ts';
import type { Logger } from '../logger.ts';
import { redactValue } from '../redact.ts';
import { renderMessage } from './blocks.ts';
import { chatError } from './client.ts';

/** Where a command's answer goes: the person who asked, through the command's response_url while it lasts. */
export interface SlackReply {
  user: string;
  responseUrl?: string;
  /** Replace the "working on it" message the ack showed. */
  replaceOriginal?: boolean;
}

/**
 * What the Slack face itself puts in the outbox, beside the plain ChatMessage fields. `mrkdwn` and `blocks` are built
 * by this face with untrusted parts already escaped (they may carry mentions and buttons); other faces' messages
 * never have them and are rendered from their text or view.
 */
export interface SlackPayload extends ChatMessage {
  reply?: SlackReply;
  mrkdwn?: string;
  blocks?: types.KnownBlock[];
  filename?: string;
}

/** Secrets never leave: every string in what we send is scrubbed (text, blocks, file contents, titles). */
export const scrub = redactValue;

/** response_url must be Slack's (or the configured API host's: a proxy, GovSlack, the tests' stand-in). */
export function responseUrlAllowed(url: string, apiUrl: string): boolean {
  try {
    const u = new URL(url);
    const api = new URL(apiUrl);
    if (u.origin === api.origin) return true;
    return u.protocol === 'https:' && /^hooks\.slack(-gov)?\.com$/.test(u.hostname);
  } catch {
    return false;
  }
}

/** The metadata event type of the bot's posts; its payload is the outbox row (`id`, `created` in ms). */
export const OUTBOX_EVENT = 'glm_outbox';

/** How far before its row was queued a message may carry a Slack ts (the bot's clock against Slack's). */
const CLOCK_SKEW_MS = 10 * 60_000;
const LOOKUP_PAGES = 10;

export function createSlackAdapter(opts: {
  client: webApi.WebClient;
  apiUrl: string;
  timeoutMs: number;
  log: Logger;
  /** Each Web API call's outcome, for metrics: ok, retry (transient) or error. */
  onCall?: (method: string, result: 'ok' | 'retry' | 'error') => void;
}): ChatAdapter {
  const { client, log } = opts;
  // A post whose message went out but whose file upload then failed: on the retry, only the upload is repeated.
  const posted = new Map<string, ChatRef>();
  const remember = (key: string, ref: ChatRef) => {
    posted.set(key, ref);
    if (posted.size > 1000) posted.delete(posted.keys().next().value as string);
  };

  function content(msg: SlackPayload) {
    const r = renderMessage(msg, { filename: msg.filename });
    if (msg.blocks) return scrub({ ...r, blocks: msg.blocks, overflow: undefined });
    if (msg.mrkdwn && !r.overflow && msg.mrkdwn.length <= 3000) {
      return scrub({
        ...r,
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text: msg.mrkdwn } } as types.KnownBlock],
      });
    }
    return scrub(r);
  }

  async function call<T>(what: string, f: () => Promise<T>): Promise<T> {
    try {
      const r = await f();
      opts.onCall?.(what, 'ok');
      return r;
    } catch (e) {
      const err = chatError(e, what);
      opts.onCall?.(what, err instanceof TransientChatError ? 'retry' : 'error');
      throw err;
    }
  }

  /**
   * files.getUploadURLExternal, the bytes to its upload_url, files.completeUploadExternal (what filesUploadV2 does),
   * step by step: the file's id is handed to `tag.remember` before the file is shared, and after a try whose answer
   * was lost (`tag.recheck`) files.info says whether that file is already shared where it was going.
   */
  async function upload(
    dest: { channel: string; threadTs?: string },
    file: { filename: string; content: string; title?: string; encoding?: 'base64' },
    tag?: UploadTag,
  ): Promise<void> {
    if (tag?.recheck && tag.fileId && (await sharedAlready(tag.fileId, dest))) {
      log.info({ fileId: tag.fileId, channel: dest.channel }, 'file had gone through before: not uploaded again');
      return;
    }
    // Binary files (charts) are sent as bytes; text is scrubbed of secrets first.
    const binary = file.encoding === 'base64';
    const clean = binary ? { ...file, title: scrub({ ...file, content: '' }).title } : scrub(file);
    const bytes = binary ? Buffer.from(file.content, 'base64') : Buffer.from(clean.content, 'utf8');
    const filename = binary ? file.filename : clean.filename;
    const got = await call('files.getUploadURLExternal', () =>
      client.files.getUploadURLExternal({ filename, length: bytes.length }),
    );
    if (!got.upload_url || !got.file_id) throw new Error('files.getUploadURLExternal: no upload_url or file_id');
    tag?.remember(got.file_id);
    await sendBytes(got.upload_url, bytes);
    const files = [{ id: got.file_id, title: clean.title ?? filename }] as [{ id: string; title: string }];
    await call('files.completeUploadExternal', () =>
      dest.threadTs
        ? client.files.completeUploadExternal({ files, channel_id: dest.channel, thread_ts: dest.threadTs })
        : client.files.completeUploadExternal({ files, channel_id: dest.channel }),
    );
  }

  /** The file's bytes to the URL Slack gave for them (nothing is shared yet: a failure here is never a repeat). */
  async function sendBytes(url: string, bytes: Buffer): Promise<void> {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: new Uint8Array(bytes),
        redirect: 'error',
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
    } catch (e) {
      throw new TransientChatError(`file upload: ${(e as Error).message}`);
    }
    await res.text().catch(() => '');
    if (res.status === 429 || res.status >= 500) throw new TransientChatError(`file upload: HTTP ${res.status}`);
    if (res.status !== 200) throw new Error(`file upload: HTTP ${res.status}`);
  }

  /**
   * Whether file `id` is shared in the destination (its thread, or the channel itself), by files.info's `shares`.
   * A file Slack does not know was never completed; a lookup Slack refuses for good (no files:read scope) uploads
   * again: a possible repeat is better than a lost file.
   */
  async function sharedAlready(id: string, dest: { channel: string; threadTs?: string }): Promise<boolean> {
    try {
      const res = await call('files.info', () => client.files.info({ file: id }));
      const shares = res.file?.shares;
      const where = [...(shares?.public?.[dest.channel] ?? []), ...(shares?.private?.[dest.channel] ?? [])];
      return where.some((s) => (dest.threadTs ? s.thread_ts === dest.threadTs : !s.thread_ts));
    } catch (e) {
      if (e instanceof TransientChatError) throw e;
      if (!/file_not_found|file_deleted/.test((e as Error).message))
        log.warn(
          { fileId: id, channel: dest.channel, err: (e as Error).message },
          'cannot look up whether a file went through (add the files:read scope): uploading it again',
        );
      return false;
    }
  }

  /**
   * The message a previous try posted, found by its outbox tag in the channel's (or thread's) history since the row
   * was queued; undefined when it is not there. A lookup Slack refuses for good (a missing history scope, say) posts
   * anyway: a possible repeat is better than a lost message.
   */
  async function find(dest: { channel: string; threadTs?: string }, t: PostTag): Promise<ChatRef | undefined> {
    const oldest = ((t.since - CLOCK_SKEW_MS) / 1000).toFixed(6);
    let cursor: string | undefined;
    try {
      for (let page = 0; page < LOOKUP_PAGES; page++) {
        const args = { channel: dest.channel, oldest, include_all_metadata: true, limit: 200, cursor };
        const res = dest.threadTs
          ? await call('conversations.replies', () => client.conversations.replies({ ...args, ts: dest.threadTs! }))
          : await call('conversations.history', () => client.conversations.history(args));
        for (const m of res.messages ?? []) {
          const md = m.metadata as { event_type?: string; event_payload?: Record<string, unknown> } | undefined;
          if (md?.event_type !== OUTBOX_EVENT) continue;
          if (md.event_payload?.id === t.tag.id && md.event_payload?.created === t.tag.created && m.ts) {
            return { channel: dest.channel, ts: m.ts };
          }
        }
        cursor = res.response_metadata?.next_cursor || undefined;
        if (!cursor) return undefined;
      }
      return undefined;
    } catch (e) {
      if (e instanceof TransientChatError) throw e;
      log.warn(
        { channel: dest.channel, outboxId: t.tag.id, err: (e as Error).message },
        'cannot look up whether a message went through (add the channels:history and groups:history scopes): posting it again',
      );
      return undefined;
    }
  }

  /** Fills each linked message's permalink; a link Slack will not give is left out, never the report. */
  async function permalinks(links: Array<{ ref?: ChatRef; url?: string }>): Promise<void> {
    for (const l of links) {
      if (!l.ref || l.url) continue;
      try {
        const r = await client.chat.getPermalink({ channel: l.ref.channel, message_ts: l.ref.ts });
        l.url = r.permalink;
      } catch (e) {
        log.warn({ err: (e as Error).message }, 'no permalink for a linked message');
      }
    }
  }

  /** Answers through response_url; false when it can no longer be used (expired, used up, not Slack's). */
  async function respond(reply: SlackReply, body: Record<string, unknown>): Promise<boolean> {
    if (!reply.responseUrl || !responseUrlAllowed(reply.responseUrl, opts.apiUrl)) return false;
    let res: Response;
    try {
      res = await fetch(reply.responseUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        redirect: 'error',
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
    } catch (e) {
      throw new TransientChatError(`response_url: ${(e as Error).message}`);
    }
    await res.text().catch(() => '');
    if (res.status === 429) {
      throw new TransientChatError('response_url: rate limited', Number(res.headers.get('retry-after') ?? 1) * 1000);
    }
    if (res.status >= 500) throw new TransientChatError(`response_url: HTTP ${res.status}`);
    if (res.status >= 400) log.info({ status: res.status }, 'response_url no longer usable: falling back');
    return res.ok;
  }

  return {
    async post(dest, m, tag): Promise<ChatRef> {
      const msg = m as SlackPayload;
      if (msg.view?.type === 'report') await permalinks(msg.view.links);
      const c = content(msg);
      const key = createHash('sha256')
        .update(JSON.stringify([dest, msg]))
        .digest('hex');
      let ref = posted.get(key);
      if (!ref && !msg.reply && tag?.recheck) {
        ref = await find(dest, tag);
        if (ref) log.info({ outboxId: tag.tag.id, ts: ref.ts }, 'message had gone through before: not posted again');
      }
      if (!ref && msg.reply) {
        const body = {
          response_type: 'ephemeral',
          replace_original: msg.reply.replaceOriginal ?? false,
          text: c.text,
          blocks: c.blocks,
        };
        if (!(await respond(msg.reply, body))) {
          await call('chat.postEphemeral', () =>
            client.chat.postEphemeral({ channel: dest.channel, user: msg.reply!.user, text: c.text, blocks: c.blocks }),
          );
        }
        ref = { channel: dest.channel, ts: '' };
        remember(key, ref);
      } else if (!ref) {
        const base = {
          channel: dest.channel,
          text: c.text,
          blocks: c.blocks,
          unfurl_links: false,
          unfurl_media: false,
          ...(tag ? { metadata: { event_type: OUTBOX_EVENT, event_payload: { ...tag.tag } } } : {}),
        };
        const res = await call('chat.postMessage', () =>
          dest.threadTs
            ? client.chat.postMessage({ ...base, thread_ts: dest.threadTs, reply_broadcast: msg.broadcast === true })
            : client.chat.postMessage(base),
        );
        ref = { channel: res.channel ?? dest.channel, ts: res.ts ?? '' };
        remember(key, ref);
      }
      if (c.overflow) {
        // Files cannot be ephemeral: a reply's long output goes to the channel it was asked in.
        try {
          await upload(
            { channel: ref.channel, threadTs: msg.reply ? undefined : (dest.threadTs ?? ref.ts) },
            c.overflow,
            tag?.upload,
          );
        } catch (e) {
          // The message itself went out: a retry (after a restart too) must find it rather than post it again.
          if (e instanceof TransientChatError && !e.maybeDelivered)
            throw new TransientChatError(e.message, e.retryAfterMs, true);
          throw e;
        }
      }
      posted.delete(key);
      return ref;
    },

    async update(ref, m) {
      const c = content(m as SlackPayload);
      // The first post already uploaded any overflow; an update (a new count, a new state) only changes the blocks.
      await call('chat.update', () =>
        client.chat.update({ channel: ref.channel, ts: ref.ts, text: c.text, blocks: c.blocks }),
      );
    },

    upload,
  };
}
