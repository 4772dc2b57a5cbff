// In front of Bolt's HTTP receiver: refuse what no honest Slack request is before anything is parsed or run.
// - A body over MAX_BODY_BYTES (far above any slash command or button payload) gets 413 while it streams in.
// - The signature and age are checked here (Bolt's own verifier, on the body we buffered), and every accepted
//   signature is remembered for the 5 minutes a timestamp stays valid: the same signed request delivered again is
//   refused (a replay), instead of running again.
// - Slack's own redeliveries carry X-Slack-Retry-Num: they are acknowledged (200) and not run a second time.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isValidSlackRequest } from '@slack/bolt';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';

export const MAX_BODY_BYTES = 128 * 1024;
// Slack refuses timestamps older than 5 minutes; a signature can only be replayed inside that window.
const WINDOW_MS = 5 * 60 * 1000;

export interface RequestGuard {
  /** Calls `next` with the body buffered on `req.rawBody` (Bolt reads it from there), or answers the request itself. */
  handle(req: IncomingMessage, res: ServerResponse, next: () => void): void;
}

export function createRequestGuard(opts: { signingSecret: string; clock: Clock; log: Logger }): RequestGuard {
  // Signature -> when it stops mattering (its timestamp is then too old for Bolt anyway).
  const seen = new Map<string, number>();
  const forget = (now: number) => {
    for (const [sig, until] of seen) if (until <= now) seen.delete(sig);
  };
  return {
    handle(req, res, next) {
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > MAX_BODY_BYTES) return tooLarge(res, req);
      const chunks: Buffer[] = [];
      let size = 0;
      let refused = false;
      req.on('data', (c: Buffer) => {
        if (refused) return;
        size += c.length;
        if (size > MAX_BODY_BYTES) {
          refused = true;
          chunks.length = 0;
          tooLarge(res, req);
          return;
        }
        chunks.push(c);
      });
      req.on('end', () => {
        if (refused) return;
        const body = Buffer.concat(chunks);
        const text = body.toString();
        const signature = header(req, 'x-slack-signature');
        const ts = Number(header(req, 'x-slack-request-timestamp'));
        const now = opts.clock.now();
        const valid =
          signature !== undefined &&
          Number.isFinite(ts) &&
          isValidSlackRequest({
            signingSecret: opts.signingSecret,
            body: text,
            headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': ts },
            nowMilliseconds: now,
          });
        // ssl_check carries no signature; Bolt answers it (and strips anything smuggled with it).
        if (!valid && !/^ssl_check=1(&|$)/.test(text)) {
          res.writeHead(401).end();
          return;
        }
        if (valid && signature) {
          forget(now);
          const retry = header(req, 'x-slack-retry-num');
          const replay = seen.has(signature);
          seen.set(signature, now + WINDOW_MS);
          if (replay || retry !== undefined) {
            opts.log.warn(
              { retry: retry ?? null, replay },
              replay ? 'replayed request refused' : 'Slack redelivery acknowledged, not run again',
            );
            if (replay)
              res.writeHead(409, { 'content-type': 'text/plain' }).end('this signed request was already handled');
            else res.writeHead(200).end();
            return;
          }
        }
        (req as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
        next();
      });
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

function tooLarge(res: ServerResponse, req: IncomingMessage): void {
  if (!res.headersSent) {
    res.writeHead(413, { 'content-type': 'text/plain', connection: 'close' });
    res.end(`request body over ${MAX_BODY_BYTES} bytes, more than Slack ever sends`);
  }
  req.resume();
}
