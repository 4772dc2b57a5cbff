// One smoke prompt against one endpoint, streamed: the answer, time to first token, and decode speed. Both
// endpoints' stream shapes go through zod (an answer from a server is outside input like any other).
import { z } from 'zod';
import type { RemoteHost } from '../hosts/types.ts';
import { streamSse } from './stream.ts';

export type Endpoint = 'chat' | 'generate';

export interface Answer {
  endpoint: Endpoint;
  text: string;
  /** Tokens generated, as the server counted them (usage / meta_info), else the events seen. */
  tokens: number;
  ttftMs: number | null;
  /** Tokens per second after the first token; null with fewer than two tokens. */
  decodeTokS: number | null;
  e2eMs: number;
  finishReason: string | null;
  /** The request failed: reset mid-stream, an error event, a non-200 answer. */
  error: string | null;
}

const ErrorEvent = z.object({ error: z.union([z.string(), z.object({ message: z.string() }).passthrough()]) });
const ChatChunk = z
  .object({
    choices: z
      .array(
        z
          .object({
            delta: z
              .object({ content: z.string().nullish(), reasoning_content: z.string().nullish() })
              .passthrough()
              .optional(),
            finish_reason: z.string().nullish(),
          })
          .passthrough(),
      )
      .default([]),
    usage: z.object({ completion_tokens: z.number() }).passthrough().nullish(),
  })
  .passthrough();
const GenerateChunk = z
  .object({
    text: z.string(),
    meta_info: z
      .object({
        completion_tokens: z.number().optional(),
        finish_reason: z.union([z.object({ type: z.string() }).passthrough(), z.null()]).optional(),
      })
      .passthrough()
      .default({}),
  })
  .passthrough();

interface Acc {
  text: string;
  tokens: number;
  events: number;
  first: number | null;
  last: number | null;
  finish: string | null;
  error: string | null;
}

function errorOf(data: unknown): string | null {
  const e = ErrorEvent.safeParse(data);
  if (!e.success) return null;
  return typeof e.data.error === 'string' ? e.data.error : e.data.error.message;
}

export async function ask(
  host: RemoteHost,
  port: number,
  endpoint: Endpoint,
  prompt: string,
  maxTokens: number,
  opts: { timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const acc: Acc = { text: '', tokens: 0, events: 0, first: null, last: null, finish: null, error: null };
  const body =
    endpoint === 'chat'
      ? {
          messages: [{ role: 'user', content: prompt }],
          temperature: 0,
          max_tokens: maxTokens,
          stream: true,
          stream_options: { include_usage: true },
        }
      : { text: prompt, sampling_params: { temperature: 0, max_new_tokens: maxTokens }, stream: true };
  const onEvent = (data: string, at: number) => {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      acc.error ??= `an event that is not JSON: ${data.slice(0, 80)}`;
      return;
    }
    const err = errorOf(json);
    if (err) {
      acc.error ??= `error event: ${err}`;
      return;
    }
    if (endpoint === 'chat') {
      const c = ChatChunk.safeParse(json);
      if (!c.success) {
        acc.error ??= 'an event of unexpected shape';
        return;
      }
      if (c.data.usage) acc.tokens = c.data.usage.completion_tokens;
      for (const ch of c.data.choices) {
        // Reasoning counts for the first token and the pace, not for the answer that is checked.
        const piece = ch.delta?.content ?? '';
        const produced = (ch.delta?.content ?? '') !== '' || (ch.delta?.reasoning_content ?? '') !== '';
        if (produced) {
          acc.first ??= at;
          acc.last = at;
          acc.events += 1;
        }
        acc.text += piece;
        if (ch.finish_reason) acc.finish = ch.finish_reason;
      }
    } else {
      const g = GenerateChunk.safeParse(json);
      if (!g.success) {
        acc.error ??= 'an event of unexpected shape';
        return;
      }
      // The native stream repeats the whole text so far; tolerate servers that send increments instead.
      const t = g.data.text;
      const grew = t.startsWith(acc.text) ? t.length > acc.text.length : t.length > 0;
      acc.text = t.startsWith(acc.text) ? t : acc.text + t;
      const n = g.data.meta_info.completion_tokens;
      if (grew || (n !== undefined && n > acc.tokens)) {
        acc.first ??= at;
        acc.last = at;
        acc.events += 1;
      }
      if (n !== undefined) acc.tokens = n;
      const f = g.data.meta_info.finish_reason;
      if (f) acc.finish = f.type;
    }
  };
  const r = await streamSse(
    host,
    port,
    {
      path: endpoint === 'chat' ? '/v1/chat/completions' : '/generate',
      body,
      timeoutMs: opts.timeoutMs,
      headers: opts.headers,
    },
    onEvent,
  );
  const tokens = acc.tokens || acc.events;
  const decodeMs = acc.first !== null && acc.last !== null ? acc.last - acc.first : 0;
  const error = r.error ? (r.body ? `${r.error}: ${r.body.slice(0, 200)}` : r.error) : acc.error;
  return {
    endpoint,
    text: acc.text,
    tokens,
    ttftMs: acc.first !== null ? acc.first - r.startedAt : null,
    decodeTokS: tokens >= 2 && decodeMs > 0 ? ((tokens - 1) * 1000) / decodeMs : null,
    e2eMs: r.endedAt - r.startedAt,
    finishReason: acc.finish === 'abort' ? 'abort' : acc.finish,
    error: error ?? (acc.finish === 'abort' ? 'the server aborted the request' : null),
  };
}
