// The bot as its own process (`node bin/glm.js ...`), for tests that kill it with SIGKILL at a chosen moment: its
// config is the test's, written to a file, with the ledger in the test's data dir.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LoadedConfig, PACKAGE_ROOT } from '../../src/config/load.ts';

export interface ChildBot {
  proc: ChildProcess;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  /** SIGKILL, and wait for it to be gone. */
  kill(): Promise<void>;
  exited: Promise<number | null>;
}

/** Writes the config as a file the bot's own loader reads (GLM_CONFIG). */
export function configFile(loaded: LoadedConfig): string {
  const file = join(mkdtempSync(join(tmpdir(), 'glm-cfg-')), 'config.yaml');
  // YAML is a superset of JSON: the validated config, with the ledger where the test looks for it.
  writeFileSync(file, JSON.stringify({ ...loaded.config, data_dir: loaded.dataDir }, null, 2));
  return file;
}

export function spawnBot(config: string, args: string[], env: Record<string, string> = {}): ChildBot {
  const proc = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'glm.js'), ...args], {
    env: { PATH: process.env.PATH, HOME: mkdtempSync(join(tmpdir(), 'glm-home-')), GLM_CONFIG: config, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d) => {
    out += String(d);
  });
  proc.stderr?.on('data', (d) => {
    out += String(d);
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
  return {
    proc,
    output: () => out,
    exited,
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}
