// Bolt's and the Web API client's logs go through pino, so they get the same redaction as everything else.
import { type AppOptions, LogLevel } from '@slack/bolt';
import type { Logger } from '../logger.ts';

type SlackLogger = NonNullable<AppOptions['logger']>;

export function slackLogger(log: Logger, name = 'slack'): SlackLogger {
  let child = log.child({ part: name });
  const join = (msg: unknown[]) =>
    msg.map((m) => (typeof m === 'string' ? m : m instanceof Error ? m.message : JSON.stringify(m))).join(' ');
  return {
    // Bolt and the Web API client log a lot at debug: build the line only when it will be written.
    debug: (...m: unknown[]) => child.isLevelEnabled('debug') && child.debug(join(m)),
    info: (...m: unknown[]) => child.info(join(m)),
    warn: (...m: unknown[]) => child.warn(join(m)),
    error: (...m: unknown[]) => child.error(join(m)),
    // The bot's own level (GLM_LOG_LEVEL) decides; Bolt asking for another level is ignored.
    setLevel: () => {},
    getLevel: () => (child.level as LogLevel) ?? LogLevel.INFO,
    setName: (n: string) => {
      child = log.child({ part: n });
    },
  };
}
