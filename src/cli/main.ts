// The terminal face: `glm COMMAND ...` runs one command; `glm` alone opens an interactive session on the same
// command registry (the way a newcomer meets the bot on its embedded default).
import { mkdirSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type App, createApp } from '../app.ts';
import { createConsoleAdapter } from '../chat/console.ts';
import type { CommandContext } from '../commands/define.ts';
import { loadConfig } from '../config/load.ts';
import { describeError } from '../errors-render.ts';
import { shArgv } from '../hosts/quote.ts';
import { createLogger } from '../logger.ts';
import { startScheduler } from '../schedule/scheduler.ts';
import { eventText } from '../server/render-events.ts';
import { resumeWatches } from '../server/resume.ts';

function write(s: string): void {
  process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
}

function context(app: App, longLived: boolean): CommandContext {
  return {
    engine: app.engine,
    actor: `${userInfo().username}@${hostname()}`,
    origin: 'terminal',
    log: app.engine.log.child({ face: 'terminal' }),
    say: write,
    diagnoser: app.diagnoser,
    longLived,
    commands: app.dispatch.commands,
  };
}

async function main(): Promise<number> {
  // `glm slack`: the Slack face (src/slack/main.ts) runs instead of the terminal.
  if (process.argv[2] === 'slack') return (await import('../slack/main.ts')).runSlack();
  let app: App;
  try {
    const loaded = loadConfig();
    mkdirSync(loaded.dataDir, { recursive: true });
    // The terminal is for people: the bot's own log goes to a file in the data directory.
    process.env.GLM_LOG_FILE ??= join(loaded.dataDir, 'glm.log');
    // Crash alerts reach the terminal the way they reach Slack: through the outbox and a chat adapter.
    app = createApp({
      loaded,
      log: createLogger(),
      chat: {
        adapter: createConsoleAdapter(write),
        channel: 'terminal',
        parentMessages: false,
        milestonesInThread: false,
      },
    });
  } catch (e) {
    process.stderr.write(`${describeError(e)}\n`);
    return 2;
  }
  const args = process.argv.slice(2);
  if (args.length > 0) {
    // Arguments arrive already split by the user's shell; re-join them quoted so the command tokenizer sees the
    // same words.
    const out = await app.dispatch.run(shArgv(args), { ...context(app, false), stdin: process.stdin });
    write(out.text);
    await app.close();
    return out.exitCode ?? 0;
  }
  return repl(app);
}

async function repl(app: App): Promise<number> {
  const interactive = process.stdin.isTTY === true;
  const cfg = app.engine.loaded;
  if (interactive) {
    write(
      `glm-ops: config ${cfg.source}; hosts: ${Object.keys(cfg.config.hosts).join(', ')}; default host: ${cfg.defaultHost || '-'}`,
    );
    if (cfg.source === 'embedded default') {
      write('  (embedded default: the "GPU server" is the SGLang stand-in, SIMULATED, no GPU needed)');
      write("  try: launch glm5-nvfp4   (loads like the real thing, then fails like the seeds' attempt 2)");
    }
    write('type help for the commands, exit to leave');
  }
  // Follow again whatever a previous run of the bot left loading or serving.
  const resumed = await resumeWatches(app.engine, (e) => write(eventText(e, false)), app.diagnoser).catch(() => 0);
  if (interactive && resumed > 0) write(`following ${resumed} server(s) started earlier`);
  // Scheduled jobs run while the session is open; their reports print here unless they name a channel.
  const scheduler = startScheduler(app, { say: write });
  const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'glm> ', terminal: interactive });
  // A command may ask a yes/no question (launching a configuration known to crash): the next line answers it.
  const answers: Array<(yes: boolean) => void> = [];
  const ctx: CommandContext = {
    ...context(app, true),
    confirm: (question) =>
      new Promise<boolean>((resolve) => {
        write(question);
        answers.push(resolve);
        if (interactive) rl.prompt();
      }),
  };
  const running = new Set<Promise<void>>();
  if (interactive) rl.prompt();
  for await (const line of rl) {
    const text = line.trim();
    const answer = answers.shift();
    if (answer) {
      answer(/^y(es)?$/i.test(text));
      continue;
    }
    if (text === 'exit' || text === 'quit') break;
    if (text) {
      // Commands run concurrently: a launch follows its server while the person asks for status.
      const p = app.dispatch
        .run(text, ctx)
        .then((out) => write(out.text))
        .catch((e) => write(describeError(e, app.engine.log)))
        .finally(() => {
          running.delete(p);
          if (interactive) rl.prompt();
        });
      running.add(p);
    }
    if (interactive) rl.prompt();
  }
  // End of input: a question nobody can answer any more is a no.
  for (const answer of answers.splice(0)) answer(false);
  await Promise.all(running);
  await scheduler.stop();
  await app.close();
  return 0;
}

process.exitCode = await main();
