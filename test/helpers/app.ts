// A bot wired to a real sshd on loopback, whose host runs the SGLang stand-in, with a ledger in a temp dir.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { type App, createApp } from '../../src/app.ts';
import type { CommandContext } from '../../src/commands/define.ts';
import { type LoadedConfig, PACKAGE_ROOT, validate } from '../../src/config/load.ts';
import type { Sshd } from './sshd.ts';
import { userDir } from './sshd.ts';

export const STANDIN = join(PACKAGE_ROOT, 'standin');

export interface TestBot {
  app: App;
  workdir: string;
  dataDir: string;
  said: string[];
  ctx: CommandContext;
  run(text: string): Promise<{ text: string; exitCode: number; data?: unknown }>;
  logLines: string[];
}

export function testConfig(
  sshd: Sshd,
  opts: { workdir: string; dataDir: string; env?: Record<string, string>; extra?: Record<string, unknown> },
): LoadedConfig {
  const raw = {
    default_host: 'gpu',
    timeouts: { connect_s: 5, command_s: 20, keepalive_s: 2, ready_s: 60, stop_grace_s: 2 },
    hosts: {
      gpu: {
        ssh: {
          host: '127.0.0.1',
          port: sshd.port,
          user: sshd.user,
          key_file: sshd.userKeyPath,
          known_hosts: sshd.knownHostsPath,
          ssh_config: '/dev/null',
        },
        python: join(STANDIN, 'python'),
        workdir: opts.workdir,
        bin_dirs: [join(STANDIN, 'bin')],
        env: { STANDIN_TIME_SCALE: '0.002', STANDIN_STATE_DIR: join(opts.workdir, 'standin-state'), ...opts.env },
      },
    },
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
  const ctx: CommandContext = {
    engine: app.engine,
    actor: 'tester',
    origin: 'terminal',
    log: app.engine.log,
    say: (t) => said.push(t),
    diagnoser: app.diagnoser,
    longLived: opts.longLived ?? false,
    commands: app.dispatch.commands,
  };
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
