// Help text from the command definitions alone (no zod, no engine): the `help` command and the one-shot
// `glm help` (src/cli/help.ts) print the same.

import { UserError } from '../errors.ts';
import { closest } from '../suggest.ts';
import { type CommandContext, type CommandDef, helpHint } from './define.ts';

const HELP_FLAGS = new Set(['--help', '-h']);

/** `--help`/`-h` anywhere before `--` asks for help: `glm -h`, `glm launch --help` (= `help launch`). */
export function helpRewrite(tokens: string[]): string[] {
  const end = tokens.indexOf('--');
  const head = end === -1 ? tokens : tokens.slice(0, end);
  if (!head.some((t) => HELP_FLAGS.has(t))) return tokens;
  const name = head.find((t) => !HELP_FLAGS.has(t));
  return name && name !== 'help' ? ['help', name] : ['help'];
}

/**
 * `glm slack` is not a chat command (src/cli/main.ts starts the Slack face instead of the terminal), but a person at
 * a terminal looks for it here.
 */
const SLACK = {
  name: 'slack',
  summary: 'run the bot as a Slack app instead of the terminal (npx glm slack)',
  text: [
    'slack: run the bot as a Slack app instead of the terminal (terminal only)',
    'usage: npx glm slack',
    '  Socket Mode: SLACK_BOT_TOKEN=xoxb-... SLACK_APP_TOKEN=xapp-... npx glm slack',
    '    the bot connects out to Slack; no public URL',
    '  HTTP mode:   SLACK_BOT_TOKEN=xoxb-... SLACK_SIGNING_SECRET=... npx glm slack',
    "    Slack POSTs to /slack/events on slack.port (default 3000); the app's Request URL is",
    '    https://YOUR-HOST/slack/events behind an HTTPS reverse proxy',
    '  GLM_HTTP_HOST: the listen address for /slack/events and /healthz (default 0.0.0.0)',
    '  GLM_SLACK_MODE=socket|http: which mode, when both SLACK_APP_TOKEN and SLACK_SIGNING_SECRET are set',
    '  SLACK_API_URL: another Slack API base (GovSlack, a proxy)',
    'the first log line says which mode runs and on which address; see "Slack app setup" in the README',
  ].join('\n'),
};

/** The command list, or one command in detail; an unknown name is a UserError with the nearest name. */
export function helpText(
  all: readonly CommandDef[],
  where: Pick<CommandContext, 'origin' | 'longLived'>,
  command?: string,
): string {
  const terminal = where.origin === 'terminal';
  const rows = [...all.map((c) => ({ name: c.name, summary: c.summary })), ...(terminal ? [SLACK] : [])];
  if (!command) {
    const w = Math.max(...rows.map((c) => c.name.length));
    return [
      'commands:',
      ...rows.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`),
      '',
      `${helpHint(where, 'COMMAND')} shows its options and examples.`,
    ].join('\n');
  }
  if (terminal && command === SLACK.name) return SLACK.text;
  const def = all.find((c) => c.name === command);
  if (!def) {
    const s = closest(
      command,
      rows.map((c) => c.name),
    );
    throw new UserError(`unknown command '${command}'`, { kind: 'unknown-command', ...(s ? { suggestion: s } : {}) });
  }
  return [
    `${def.name}: ${def.summary}`,
    `usage: ${def.usage}`,
    `changes things: ${def.effect === 'write' ? 'yes (operators only)' : 'no'}`,
    'examples:',
    ...def.examples.map((e) => `  ${e}`),
  ].join('\n');
}
