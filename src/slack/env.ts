// Slack's secrets come from the environment only (never the config file): SLACK_BOT_TOKEN always; SLACK_APP_TOKEN
// for Socket Mode (no public URL needed) or SLACK_SIGNING_SECRET for HTTP mode; SLACK_API_URL optionally. With both
// mode secrets set, GLM_SLACK_MODE (socket|http) must say which: a guess would leave the other half of the setup
// silently unused (an app configured for HTTP that never gets an answer, or a socket nobody expected).
import { UserError } from '../errors.ts';
import { apiUrl } from './client.ts';

export interface SlackSettings {
  botToken: string;
  transport: 'socket' | 'http';
  appToken?: string;
  signingSecret?: string;
  apiUrl: string;
}

/** Whether the environment has what a Slack face needs (the terminal runs otherwise). */
export function slackConfigured(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.SLACK_BOT_TOKEN && (env.SLACK_APP_TOKEN || env.SLACK_SIGNING_SECRET));
}

export function readSlackEnv(env: NodeJS.ProcessEnv): SlackSettings {
  const botToken = env.SLACK_BOT_TOKEN?.trim();
  const appToken = env.SLACK_APP_TOKEN?.trim() || undefined;
  const signingSecret = env.SLACK_SIGNING_SECRET?.trim() || undefined;
  const problems: string[] = [];
  if (!botToken) problems.push('SLACK_BOT_TOKEN is not set (the Bot User OAuth Token, xoxb-...)');
  else if (!botToken.startsWith('xoxb-')) problems.push('SLACK_BOT_TOKEN should be a bot token (xoxb-...)');
  if (!appToken && !signingSecret)
    problems.push('set SLACK_APP_TOKEN (xapp-..., Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode)');
  const mode = env.GLM_SLACK_MODE?.trim().toLowerCase() || undefined;
  if (mode && mode !== 'socket' && mode !== 'http')
    problems.push(`GLM_SLACK_MODE is '${env.GLM_SLACK_MODE}': use socket or http`);
  else if (mode === 'socket' && !appToken) problems.push('GLM_SLACK_MODE=socket needs SLACK_APP_TOKEN (xapp-...)');
  else if (mode === 'http' && !signingSecret) problems.push('GLM_SLACK_MODE=http needs SLACK_SIGNING_SECRET');
  else if (!mode && appToken && signingSecret)
    problems.push(
      'both SLACK_APP_TOKEN (Socket Mode) and SLACK_SIGNING_SECRET (HTTP mode) are set: unset the one you do not use, or set GLM_SLACK_MODE=socket or GLM_SLACK_MODE=http',
    );
  if (appToken && !appToken.startsWith('xapp-'))
    problems.push('SLACK_APP_TOKEN should be an app-level token (xapp-...) with connections:write');
  if (problems.length)
    throw new UserError(`Slack is not set up: ${problems.join('; ')}`, 'see "Slack app setup" in the README');
  const transport = (mode as 'socket' | 'http' | undefined) ?? (appToken ? 'socket' : 'http');
  return {
    botToken: botToken!,
    transport,
    appToken: transport === 'socket' ? appToken : undefined,
    signingSecret: transport === 'http' ? signingSecret : undefined,
    apiUrl: apiUrl(env.SLACK_API_URL),
  };
}
