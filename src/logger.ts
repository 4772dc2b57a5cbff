// pino everywhere, never console. Secrets are removed twice: by key (redact paths) and from the whole line as a
// value (streamWrite parses it, redacts every field and string, and serialises it again: the line stays JSON).
import pino, { type Logger } from 'pino';
import { redactLogLine } from './redact.ts';

export type { Logger };

export function createLogger(opts: { level?: string; destination?: pino.DestinationStream } = {}): Logger {
  return pino(
    {
      level: opts.level ?? process.env.GLM_LOG_LEVEL ?? 'info',
      base: { app: 'glm-ops' },
      redact: {
        paths: ['token', '*.token', 'env.HF_TOKEN', '*.env.HF_TOKEN', 'headers.authorization', '*.password', 'apiKey'],
        censor: '[REDACTED]',
      },
      hooks: { streamWrite: redactLogLine },
    },
    opts.destination ?? pino.destination({ dest: process.env.GLM_LOG_FILE ?? 2, sync: false }),
  );
}
