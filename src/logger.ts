// pino everywhere, never console. Secrets are removed twice: by key (redact paths) and in free text (streamWrite).
import pino, { type Logger } from 'pino';
import { redactText } from './redact.ts';

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
      hooks: { streamWrite: (s) => redactText(s) },
    },
    opts.destination ?? pino.destination({ dest: process.env.GLM_LOG_FILE ?? 2, sync: false }),
  );
}
