// Part src/slack: owns the Slack face: Bolt app, signed requests, Block Kit, buttons and modals.
// May import: access, advice, app.ts, autopilot, chat, clock.ts, config, errors-render.ts, errors.ts, format, hosts,
//   ledger, lifecycle, logger.ts, metrics, redact.ts, runtime, schedule.
//
// `glm slack`: the bot as a Slack app (Socket Mode with SLACK_APP_TOKEN, else HTTP with SLACK_SIGNING_SECRET), up
// until SIGTERM/SIGINT. Logs go to stdout as NDJSON (a container's log), secrets redacted.
import { mkdirSync } from 'node:fs';
import { resumeAutopilots } from '../autopilot/run.ts';
import { loadConfig } from '../config/load.ts';
import { describeError } from '../errors-render.ts';
import { resumeWatches } from '../lifecycle/resume.ts';
import { createLogger } from '../logger.ts';
import { startScheduler } from '../schedule/scheduler.ts';
import { readSlackEnv } from './env.ts';
import { startSlackFace } from './face.ts';

export async function runSlack(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let face: Awaited<ReturnType<typeof startSlackFace>>;
  const log = createLogger();
  try {
    const settings = readSlackEnv(env);
    const loaded = loadConfig(env);
    mkdirSync(loaded.dataDir, { recursive: true });
    face = await startSlackFace({ loaded, env, settings, log, listenHost: env.GLM_HTTP_HOST || undefined });
  } catch (e) {
    process.stderr.write(`${describeError(e, log)}\n`);
    return 2;
  }
  // Follow again whatever a previous run left loading or serving; its messages and alerts go on where they were.
  resumeWatches(face.glm.engine, () => {}, face.glm.diagnoser)
    .then((n) => n > 0 && log.info({ resumed: n }, 'following servers started before the restart'))
    .catch((e: Error) => log.warn({ err: e.message }, 'could not resume following live attempts'));
  // Autopilot runs the previous bot left unfinished go on from their last trial in the ledger, in their own thread.
  for (const run of resumeAutopilots(face.glm.engine, {
    say: (t) => log.info({ say: t }, 'autopilot'),
    diagnoser: face.glm.diagnoser,
  }))
    run.catch((e: Error) => log.warn({ err: e.message }, 'resumed autopilot run failed'));
  // Scheduled jobs (nightly smoke...) run through the same command path, reporting to their channels.
  const scheduler = startScheduler(face.glm);
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  log.info({ signal }, 'shutting down: flushing the outbox');
  // A scheduled launch or smoke still loading ends now (interrupted) rather than holding the shutdown until ready.
  face.glm.beginClose();
  await scheduler.stop();
  await face.stop();
  log.flush();
  return 0;
}
