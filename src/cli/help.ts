// A one-shot `glm help [COMMAND]` (or `glm -h`, `glm COMMAND --help`) in a shell, answered from the command
// definitions before the config, the ledger, the logger or zod load: the answer is the same text the `help` command
// gives (src/runtime/help.ts), in a fraction of the memory. It reads nothing and changes nothing, so it is not
// audited; help in a session, in Slack or from the scheduler goes through the registry and is.
import { COMMANDS } from '../../commands/index.ts';
import { UserError } from '../errors.ts';
import { describeError, type Face } from '../errors-render.ts';
import { helpRewrite, helpText } from '../runtime/help.ts';
import { checkArgv } from '../runtime/parse.ts';

const ONE_SHOT: Face = { origin: 'terminal', longLived: false };

/** The answer to a help request, or undefined for anything else (the registry runs it, and reports what is wrong). */
export function oneShotHelp(argv: readonly string[]): { text: string; exitCode: number } | undefined {
  let tokens: string[];
  try {
    tokens = helpRewrite(checkArgv(argv));
  } catch {
    return undefined;
  }
  // `help` takes one word: options (`help --json`) or more words are the registry's to refuse.
  if (tokens[0] !== 'help' || tokens.length > 2 || tokens[1]?.startsWith('-')) return undefined;
  try {
    return { text: helpText(COMMANDS, ONE_SHOT, tokens[1]), exitCode: 0 };
  } catch (e) {
    if (e instanceof UserError) return { text: describeError(e, undefined, ONE_SHOT), exitCode: 2 };
    throw e;
  }
}
