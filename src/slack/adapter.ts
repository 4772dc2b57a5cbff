// The Slack ChatAdapter: what the outbox delivers becomes chat.postMessage / chat.update / filesUploadV2 calls, or a
// reply through a command's response_url. Every string that leaves is scrubbed of secrets first. Failures are sorted
// into TransientChatError (the outbox waits and retries the same item) and plain errors (recorded, skipped).
import { createHash } from 'node:crypto';
import type { types, webApi } from '@slack/bolt';
import { type ChatAdapter, type ChatMessage, type ChatRef, TransientChatError } from '../chat/types.ts';
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

export function createSlackAdapter(opts: {
  client: webApi.WebClient;
  apiUrl: string;
  timeoutMs: number;
  log: Logger;
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
      return await f();
    } catch (e) {
      throw chatError(e, what);
    }
  }

  async function upload(
    dest: { channel: string; threadTs?: string },
    file: { filename: string; content: string; title?: string; encoding?: 'base64' },
  ): Promise<void> {
    // Binary files (charts) are sent as bytes; text is scrubbed of secrets first.
    const binary = file.encoding === 'base64';
    const clean = binary ? { ...file, title: scrub({ ...file, content: '' }).title } : scrub(file);
    const file_ = binary
      ? { filename: file.filename, title: clean.title ?? file.filename, file: Buffer.from(file.content, 'base64') }
      : { filename: clean.filename, title: clean.title ?? clean.filename, content: clean.content };
    await call('files upload', () =>
      dest.threadTs
        ? client.filesUploadV2({ ...file_, channel_id: dest.channel, thread_ts: dest.threadTs })
        : client.filesUploadV2({ ...file_, channel_id: dest.channel }),
    );
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
    async post(dest, m): Promise<ChatRef> {
      const msg = m as SlackPayload;
      const c = content(msg);
      const key = createHash('sha256')
        .update(JSON.stringify([dest, msg]))
        .digest('hex');
      let ref = posted.get(key);
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
        await upload({ channel: ref.channel, threadTs: msg.reply ? undefined : (dest.threadTs ?? ref.ts) }, c.overflow);
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
