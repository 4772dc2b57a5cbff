// Part src/cli: owns the terminal face: one-shot commands and the interactive session.
// May import: commands, app.ts, autopilot, chat, config, errors-render.ts, errors.ts, ledger, lifecycle, logger.ts,
//   metrics, runtime, schedule, slack.
//
// The terminal face: `glm COMMAND ...` runs one command; `glm` alone opens an interactive session on the same
// command registry (the way a newcomer meets the bot on its embedded default).
import { mkdirSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { App } from '../app.ts';
import { describeError } from '../errors-render.ts';
import type { CommandContext } from '../runtime/define.ts';

/**
 * Where output goes. In the interactive session it is the prompt's line: output clears the prompt, prints, and
 * shows the prompt again with what the person had typed, so a command's output never lands after a stale prompt.
 */
let out: (s: string) => void = (s) => process.stdout.write(s);

function write(s: string): void {
  out(s.endsWith('\n') ? s : `${s}\n`);
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
    ...(terminalWidth() !== undefined && { width: terminalWidth() }),
  };
}

/** The terminal's columns; for a pipe, only what COLUMNS says (as `ls` does), else no limit. */
function terminalWidth(): number | undefined {
  if (process.stdout.isTTY && process.stdout.columns) return process.stdout.columns;
  const cols = Number(process.env.COLUMNS);
  return Number.isInteger(cols) && cols > 0 ? cols : undefined;
}

async function main(): Promise<number> {
  // `glm slack`: the Slack face (src/slack/main.ts) runs instead of the terminal.
  if (process.argv[2] === 'slack') return (await import('../slack/main.ts')).runSlack();
  const args = process.argv.slice(2);
  const metricsPort = process.env.GLM_METRICS_PORT;
  if (metricsPort !== undefined && !/^\d{1,5}$/.test(metricsPort)) {
    process.stderr.write(
      `GLM_METRICS_PORT must be a port number (0-65535), got '${metricsPort}'\n  unset it, or e.g. GLM_METRICS_PORT=9464\n`,
    );
    return 2;
  }
  // `glm help`, `glm -h`, `glm launch --help`: the command definitions answer before the config, the ledger, the
  // logger or zod load (src/cli/help.ts).
  const help = args.length > 0 ? (await import('./help.ts')).oneShotHelp(args) : undefined;
  if (help) {
    write(help.text);
    return help.exitCode;
  }
  // Loaded here, not at the top: a one-shot `help` needs none of them.
  const [{ createApp }, { createConsoleAdapter }, { loadConfig }, { createLogger }] = await Promise.all([
    import('../app.ts'),
    import('../chat/console.ts'),
    import('../config/load.ts'),
    import('../logger.ts'),
  ]);
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
    // The interactive session is long-lived: a bad profile or signature is reported now, not at the first launch.
    if (args.length === 0) app.preload();
  } catch (e) {
    process.stderr.write(`${describeError(e, undefined, { origin: 'terminal', longLived: args.length === 0 })}\n`);
    return 2;
  }
  if (args.length > 0) {
    // Arguments arrive already split by the user's shell: used as they are (a `'` or a trailing `\\` in a word is
    // the word's, not a quote for a second tokenizer).
    const out = await app.dispatch.runArgv(args, { ...context(app, false), stdin: process.stdin });
    write(out.text);
    await app.close();
    return out.exitCode ?? 0;
  }
  return repl(app);
}

async function repl(app: App): Promise<number> {
  const interactive = process.stdin.isTTY === true;
  const cfg = app.engine.loaded;
  // Loaded here, not at start-up: a one-shot command never needs the scheduler, cron, the log follower or autopilot.
  const [{ startScheduler }, { eventText }, { resumeWatches }, { resumeAutopilots }, { ACTIVE_STATUSES }] =
    await Promise.all([
      import('../schedule/scheduler.ts'),
      import('../lifecycle/render-events.ts'),
      import('../lifecycle/resume.ts'),
      import('../autopilot/run.ts'),
      import('../ledger/attempts.ts'),
    ]);

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
  // Autopilot runs a previous session left unfinished go on from their last trial in the ledger.
  for (const run of resumeAutopilots(app.engine, { say: write, diagnoser: app.diagnoser }))
    run.then((o) => write(o.report || o.ending)).catch((e: Error) => write(`autopilot: ${e.message}`));
  // Scheduled jobs run while the session is open; their reports print here unless they name a channel.
  const scheduler = startScheduler(app, { say: write });
  // A session left running with its scheduler can be scraped like the Slack bot: GLM_METRICS_PORT=9464 npx glm.
  const metricsServer = await startMetrics(app);
  if (interactive && metricsServer) write(`metrics: http://127.0.0.1:${metricsServer.port}/metrics`);
  const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'glm> ', terminal: interactive });
  if (interactive) {
    out = (text) => {
      process.stdout.write(`\r\x1b[K${text}`);
      rl.prompt(true);
    };
  }
  // A command may ask a yes/no question (launching a configuration known to crash): the next line answers it.
  const answers: Array<(yes: boolean) => void> = [];
  const ctx: CommandContext = {
    ...context(app, true),
    confirm: (question) =>
      new Promise<boolean>((resolve) => {
        write(question);
        answers.push(resolve);
      }),
  };
  const sessionStart = app.engine.clock.now();
  /** Servers this session launched that still run (they outlive the session: each is its own process group). */
  const liveLaunched = () =>
    app.engine.attempts
      .list({ limit: 100 })
      .filter((a) => ACTIVE_STATUSES.includes(a.status) && a.startedAt >= sessionStart);
  const keepRunningNote = (): string | undefined => {
    const live = liveLaunched();
    if (live.length === 0) return undefined;
    const list = live.map((a) => `#${a.id} (${a.profile} on ${a.host})`).join(', ');
    return `the server${live.length > 1 ? 's' : ''} keep${live.length > 1 ? '' : 's'} running: ${list}; stop one with: npx glm stop --attempt ${live[0]!.id}; npx glm status shows them`;
  };
  const running = new Set<Promise<void>>();
  // Ctrl-C: with commands running, the first press detaches from them (they go on; their results still print
  // here) and says how to stop what they started; with nothing running it leaves the session, saying what runs on.
  let detached = 0;
  let interrupted = false;
  rl.on('SIGINT', () => {
    if (running.size > 0 && detached < running.size) {
      detached = running.size;
      write(
        `detached: ${running.size} command${running.size > 1 ? 's' : ''} go${running.size > 1 ? '' : 'es'} on in the background. ${keepRunningNote() ?? 'nothing this session launched is running yet'}. Ctrl-C again (or exit) leaves the session; servers keep running.`,
      );
      return;
    }
    interrupted = true;
    rl.close();
  });
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
        .then((o) => write(o.text))
        .catch((e) => write(describeError(e, app.engine.log)))
        .finally(() => {
          running.delete(p);
          detached = Math.min(detached, running.size);
        });
      running.add(p);
    } else if (interactive) rl.prompt();
  }
  out = (text) => process.stdout.write(text);
  if (interactive) {
    // Ctrl-C leaves from a line that shows the prompt: clear it, so the note is not printed after a stale `glm> `.
    process.stdout.write('\r\x1b[K');
    const note = keepRunningNote();
    if (note) write(`leaving the session: ${note}`);
  }
  // End of input: a question nobody can answer any more is a no.
  for (const answer of answers.splice(0)) answer(false);
  if (interrupted && running.size > 0) {
    // Left with Ctrl-C while commands ran: do not wait for a launch to load. Its server runs on in its own process
    // group; the next session (or `status`) picks its attempt up again from the ledger and the host's record.
    await scheduler.stop();
    process.exit(130);
  }
  await Promise.all(running);
  await scheduler.stop();
  await metricsServer?.close();
  await app.close();
  return 0;
}

async function startMetrics(app: App) {
  const port = process.env.GLM_METRICS_PORT;
  if (!port) return undefined;
  const [{ createBotMetrics }, { serveMetrics }] = await Promise.all([
    import('../metrics/bot.ts'),
    import('../metrics/serve.ts'),
  ]);
  const metrics = createBotMetrics(app.engine);
  app.engine.metrics = metrics;
  const healthy = () => {
    try {
      app.engine.outbox.counts();
      return true;
    } catch {
      return false;
    }
  };
  return serveMetrics(metrics, healthy, Number(port), process.env.GLM_HTTP_HOST ?? '127.0.0.1');
}

process.exitCode = await main();
