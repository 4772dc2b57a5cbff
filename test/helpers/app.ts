// A bot wired to a real sshd on loopback, whose host runs the SGLang stand-in, with a ledger in a temp dir.
import { appendFileSync, chmodSync, cpSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { type App, createApp } from '../../src/app.ts';
import { createConsoleAdapter } from '../../src/chat/console.ts';
import { type LoadedConfig, PACKAGE_ROOT, validate } from '../../src/config/load.ts';
import type { NewAttempt } from '../../src/ledger/attempts.ts';
import { SETTLE_MS } from '../../src/lifecycle/early-alert.ts';
import type { CommandContext } from '../../src/runtime/define.ts';
import { ledgerDb } from './ledger.ts';
import { type Sshd, userDir } from './sshd.ts';

/**
 * The stand-in as the test host's user can run it. Over sshd the tests log in as another account, which cannot enter
 * a checkout under a private home directory (/root is 0700): then a world-readable copy in the temp dir is used.
 */
export const STANDIN = reachableStandin(join(PACKAGE_ROOT, 'standin'));

function reachableStandin(src: string): string {
  const traversable = (dir: string): boolean => {
    for (let d = dir; ; d = dirname(d)) {
      if ((statSync(d).mode & 0o005) !== 0o005) return false;
      if (d === dirname(d)) return true;
    }
  };
  if (traversable(src)) return src;
  // One copy per test process: workers start at the same time, and copying into a shared directory races.
  const copy = mkdtempSync(join(tmpdir(), 'glm-standin-'));
  cpSync(src, copy, { recursive: true });
  const open = (d: string): void => {
    chmodSync(d, 0o755);
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) open(p);
      else chmodSync(p, statSync(p).mode & 0o111 ? 0o755 : 0o644);
    }
  };
  open(copy);
  return copy;
}

/** A terminal-face command context on a test app (the actor, where progress goes, whether the bot stays up). */
export function terminalContext(
  app: App,
  opts: { actor?: string; say?: (text: string) => void; longLived?: boolean } = {},
): CommandContext {
  return {
    engine: app.engine,
    actor: opts.actor ?? 'tester',
    origin: 'terminal',
    log: app.engine.log,
    say: opts.say ?? (() => {}),
    diagnoser: app.diagnoser,
    longLived: opts.longLived ?? false,
    commands: app.dispatch.commands,
  };
}

export interface TestBot {
  app: App;
  workdir: string;
  dataDir: string;
  said: string[];
  ctx: CommandContext;
  run(text: string): Promise<{ text: string; exitCode: number; data?: unknown }>;
  logLines: string[];
}

/** How the bot reaches a test sshd: the test's user key, the sshd's pinned host key, no ~/.ssh/config. */
export function sshBlock(sshd: Sshd, address = '127.0.0.1') {
  return {
    host: address,
    port: sshd.port,
    user: sshd.user,
    key_file: sshd.userKeyPath,
    known_hosts: sshd.knownHostsPath,
    ssh_config: '/dev/null',
  };
}

/** A host entry serving the stand-in (fast pacing) from `workdir`, with simulated GPUs of its own. */
export function standinHost(sshd: Sshd, workdir: string, address = '127.0.0.1', env: Record<string, string> = {}) {
  return {
    ssh: sshBlock(sshd, address),
    python: join(STANDIN, 'python'),
    workdir,
    bin_dirs: [join(STANDIN, 'bin')],
    env: { STANDIN_TIME_SCALE: '0.002', STANDIN_STATE_DIR: join(workdir, 'standin-state'), ...env },
  };
}

export function testConfig(
  sshd: Sshd,
  opts: { workdir: string; dataDir: string; env?: Record<string, string>; extra?: Record<string, unknown> },
): LoadedConfig {
  const raw = {
    default_host: 'gpu',
    timeouts: { connect_s: 5, command_s: 20, keepalive_s: 2, ready_s: 60, stop_grace_s: 2 },
    hosts: { gpu: standinHost(sshd, opts.workdir, '127.0.0.1', opts.env) },
    ...opts.extra,
  };
  const config = validate(raw, 'test config');
  return {
    config,
    source: 'test config',
    dataDir: opts.dataDir,
    profilesDir: join(PACKAGE_ROOT, 'profiles'),
    defaultHost: 'gpu',
  };
}

export function makeBot(
  loaded: LoadedConfig,
  opts: { dataDir: string; workdir: string; longLived?: boolean },
): TestBot {
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  });
  const app = createApp({ loaded, log: pino({ level: 'debug' }, sink) });
  const said: string[] = [];
  const ctx = terminalContext(app, { say: (t) => said.push(t), longLived: opts.longLived });
  return {
    app,
    workdir: opts.workdir,
    dataDir: opts.dataDir,
    said,
    ctx,
    logLines,
    async run(text) {
      const out = await app.dispatch.run(text, ctx);
      return { text: out.text, exitCode: out.exitCode ?? 0, data: out.data };
    },
  };
}

export function freshDirs(): { workdir: string; dataDir: string } {
  return {
    workdir: userDir(`glm-work-${process.env.GLM_TEST_RUN ?? 'manual'}-`),
    dataDir: mkdtempSync(join(tmpdir(), 'glm-data-')),
  };
}

export interface ChatBot {
  app: App;
  ctx: CommandContext;
  /** What reached the chat (the console adapter's lines). */
  printed: string[];
  said: string[];
  run: (text: string) => ReturnType<App['dispatch']['run']>;
}

/** A long-lived bot whose chat messages go to a console adapter (one parent per attempt, milestones in its thread). */
export function makeChatBot(loaded: LoadedConfig, actor = 'U-tester'): ChatBot {
  const printed: string[] = [];
  const app = createApp({
    loaded,
    log: pino({ level: 'silent' }),
    chat: {
      adapter: createConsoleAdapter((s) => printed.push(s)),
      channel: 'C-ops',
      parentMessages: true,
      milestonesInThread: true,
    },
  });
  const said: string[] = [];
  const ctx = terminalContext(app, { actor, say: (t) => said.push(t), longLived: true });
  return { app, ctx, printed, said, run: (t) => app.dispatch.run(t, ctx) };
}

/**
 * One live attempt on each host that the host has no record of (a server that ended unwatched): `status` checks each
 * host, finds it gone and closes it.
 */
export function seedUnwatched(app: App, hosts: readonly string[]): void {
  const insert = ledgerDb(app.engine).prepare(`INSERT INTO attempts
    (host, profile, profile_json, flags_json, argv_json, env_json, command_line, port, actor, origin, status, active,
     pgid, pgid_start, started_at, model_path)
    VALUES (?, 'small', '{}', '{}', '[]', '{}', 'python -m sglang.launch_server ...', 30000, 'bench', 'terminal',
     'running', 1, 4242, 'x', ?, '')`);
  for (const h of hosts) insert.run(h, Date.now());
}

/** Polls until `what` holds; fails after `ms`. */
export async function until(what: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Appends `line` to the log of node `rank` of a followed attempt, as its server would write it, and returns once the
 * bot's follower has read it and the settle time of an alert it set off has passed. Read: the follower's saved offset
 * (kept every 64 KiB read, so the line is followed by that much filler that names nothing) is past the line. Settled:
 * a timer set on reading it expires before one set now for longer, and timers fire in that order.
 */
export async function appendAndSettle(app: App, attemptId: number, rank: number, line: string): Promise<void> {
  const node = () =>
    rank === 0
      ? app.engine.attempts.get(attemptId)!
      : app.engine.attempts.nodes(attemptId).find((n) => n.rank === rank)!;
  const path = node().logPath!;
  const end = statSync(path).size + Buffer.byteLength(`${line}\n`);
  const filler = Array.from({ length: 1200 }, (_, i) => `[2025-11-05 12:01:01] tokenizer worker idle, keep-alive ${i}`);
  appendFileSync(path, `${line}\n${filler.join('\n')}\n`);
  await until(() => node().logOffset >= end, 20_000);
  await new Promise((r) => setTimeout(r, SETTLE_MS + 1));
}

/** One real request to a server through the bot's connection to its host (a crash armed by the control file fires). */
export function postGenerate(app: App, host: string, port: number): Promise<unknown> {
  return app.engine.pool
    .get(host)
    .http(port, {
      method: 'POST',
      path: '/generate',
      body: '{"text":"hi","sampling_params":{"max_new_tokens":4}}',
      headers: { 'content-type': 'application/json' },
    })
    .catch(() => undefined);
}

/**
 * A launch of the `small` profile on host `gpu` as the ledger records one (flags, argv, command line), at this tp:
 * rows planted for what the reports read, with no server behind them.
 */
export function launchRow(tp: string, startedAt: number, model = 'Qwen/Qwen2.5-0.5B-Instruct'): NewAttempt {
  return {
    host: 'gpu',
    profile: 'small',
    profileJson: '{}',
    flags: { 'model-path': model, 'tp-size': tp, port: '30000' },
    argv: ['python', '-m', 'sglang.launch_server', '--model-path', model, '--tp-size', tp],
    env: {},
    commandLine: `python -m sglang.launch_server --model-path ${model} --tp-size ${tp}`,
    port: 30000,
    actor: 'alice',
    origin: 'terminal',
    startedAt,
  };
}

/** A new attempt for the ledger alone (no host behind it): profile `p` on host `h`, on these GPUs and port. */
export const attemptRow = (gpus: string, port: number, actor = 'alice'): NewAttempt => ({
  host: 'h',
  profile: 'p',
  profileJson: '{}',
  flags: {},
  argv: [],
  env: {},
  commandLine: 'x',
  port,
  gpus,
  actor,
  origin: 'terminal',
  startedAt: Date.UTC(2026, 10, 29, 12),
});
