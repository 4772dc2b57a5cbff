// The Slack Web API client, configured so that the persistent outbox does the retrying: a request timeout, no
// retries inside the client, rate limits rejected (with their Retry-After) instead of waited out in a paused queue.
// Errors are sorted here into "try again later" (TransientChatError) and "will never work" (plain Error).
import { webApi } from '@slack/bolt';
import { TransientChatError } from '../chat/types.ts';
import type { Logger } from '../logger.ts';
import { slackLogger } from './logger.ts';

/** Slack's own URL unless SLACK_API_URL points elsewhere (GovSlack, a proxy, a test stand-in). */
export function apiUrl(raw: string | undefined): string {
  const url = raw?.trim() || 'https://slack.com/api/';
  // The client appends the method name directly: keep exactly one trailing slash.
  return url.endsWith('/') ? url : `${url}/`;
}

export function clientOptions(opts: { apiUrl: string; timeoutMs: number; log: Logger }): webApi.WebClientOptions {
  return {
    slackApiUrl: opts.apiUrl,
    timeout: opts.timeoutMs,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    logger: slackLogger(opts.log, 'slack-web'),
  };
}

export function createClient(
  token: string,
  opts: { apiUrl: string; timeoutMs: number; log: Logger },
): webApi.WebClient {
  return new webApi.WebClient(token, clientOptions(opts));
}

// Platform errors (HTTP 200, ok:false) that mean "later", not "never"; of those, the ones after which the request
// may have been carried out all the same.
const TRANSIENT_PLATFORM = new Set([
  'ratelimited',
  'rate_limited',
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'team_added_to_org',
]);
const AMBIGUOUS_PLATFORM = new Set(['internal_error', 'fatal_error', 'request_timeout']);
// Network errors that happen before a request is sent: nothing can have been carried out.
const NOT_SENT = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|CERT_|certificate/i;

/** The error a ChatAdapter should throw for a failed Slack call. */
export function chatError(e: unknown, what: string): Error {
  const err = e as {
    code?: string;
    retryAfter?: number;
    statusCode?: number;
    data?: { error?: string };
    message?: string;
    original?: { code?: string; message?: string };
  };
  switch (err?.code) {
    case 'slack_webapi_rate_limited_error':
      return new TransientChatError(`${what}: rate limited`, Math.max(1, err.retryAfter ?? 1) * 1000);
    case 'slack_webapi_http_error':
      if ((err.statusCode ?? 0) >= 500 || err.statusCode === 408)
        return new TransientChatError(`${what}: HTTP ${err.statusCode}`, undefined, true);
      return new Error(`${what}: HTTP ${err.statusCode}`);
    case 'slack_webapi_request_error': {
      // Network: refused or DNS (never sent), reset or our timeout (maybe carried out).
      const detail = `${err.message ?? ''} ${err.original?.code ?? ''} ${err.original?.message ?? ''}`;
      return new TransientChatError(`${what}: ${err.message ?? 'request failed'}`, undefined, !NOT_SENT.test(detail));
    }
    case 'slack_webapi_platform_error': {
      const code = err.data?.error ?? 'unknown';
      if (TRANSIENT_PLATFORM.has(code))
        return new TransientChatError(`${what}: ${code}`, undefined, AMBIGUOUS_PLATFORM.has(code));
      return new Error(`${what}: ${code}`);
    }
    default:
      if (e instanceof TransientChatError) return e;
      return new Error(`${what}: ${err?.message ?? String(e)}`);
  }
}
