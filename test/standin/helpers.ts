// Helpers for the SGLang stand-in tests: spawn standin/python directly (no SSH), on loopback ports below the ephemeral
// range, with a tiny STANDIN_TIME_SCALE and a private state dir per test.

import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanLine } from '../../src/logs/lines.ts';
import { alive } from '../helpers/proc.ts';
import { freePort as portBelowEphemeral } from '../helpers/sshd.ts';

export { alive };

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const PYTHON = path.join(ROOT, 'standin/python');
export const NVIDIA_SMI = path.join(ROOT, 'standin/bin/nvidia-smi');
export const GLM5 = 'lukealonso/GLM-5-NVFP4';
export const QWEN = 'Qwen/Qwen2.5-0.5B-Instruct';

/**
 * A port nobody listens on right now, for a stand-in that binds it only after it has "loaded" (seconds later): taken
 * below the kernel's ephemeral range (32768 up on Linux), where outgoing connections take their source ports from, so
 * no other test's connection lands on it meanwhile (one did once, in CI: the head's HTTP port). Below the smoke tests'
 * 25000-29000.
 */
export const freePort = (): Promise<number> => portBelowEphemeral([20000, 25000]);

export function tmpDir(prefix = 'standin-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('STANDIN_')) delete env[k];
  return {
    ...env,
    STANDIN_TIME_SCALE: '0.001',
    STANDIN_TTFT_MS: '5',
    STANDIN_TPOT_MS: '2',
    STANDIN_STATE_DIR: tmpDir('standin-state-'),
    ...extra,
  };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Run extends Exit {
  stdout: string;
  stderr: string;
}

/** Run a short-lived command to completion. */
export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 10_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('utf8');
    });
    p.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    const t = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`timeout running ${cmd} ${args.join(' ')}\n${stderr.slice(-2000)}`));
    }, timeoutMs);
    p.on('error', reject);
    p.on('close', (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Every server a test started; killed (by process group) when the test worker exits, whatever happened. */
const live = new Set<Proc>();
process.on('exit', () => {
  for (const p of live) p.killGroup();
});

/** A running stand-in server: combined output (as the bot's `> log 2>&1` would see it), waits, stop. */
export class Proc {
  readonly proc: ChildProcess;
  out = '';
  readonly exited: Promise<Exit>;
  private done = false;
  private readonly listeners = new Set<() => void>();
  private readonly exitListeners = new Set<() => void>();

  constructor(args: string[], env: NodeJS.ProcessEnv) {
    this.proc = spawn(PYTHON, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const add = (d: Buffer) => {
      this.out += d.toString('utf8');
      for (const l of [...this.listeners]) l();
    };
    this.proc.stdout?.on('data', add);
    this.proc.stderr?.on('data', add);
    live.add(this);
    this.exited = new Promise((resolve) => {
      this.proc.on('close', (code, signal) => {
        this.done = true;
        for (const l of [...this.exitListeners]) l();
        resolve({ code, signal });
      });
    });
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  get running(): boolean {
    return !this.done;
  }

  /** Log lines as the bot's splitter sees them. */
  lines(): string[] {
    return this.out.split('\n').map(cleanLine);
  }

  /** Resolve with the first match of `re` in the output; checked as output arrives (only the new tail). */
  waitFor(re: RegExp, timeoutMs = 8000): Promise<string> {
    const flags = re.flags.replace('g', '');
    const rx = new RegExp(re.source, flags);
    let from = 0;
    const check = (): string | null => {
      // Re-scan a little of the old text so a match spanning two chunks is not missed.
      const start = Math.max(0, from - 16_384);
      const m = this.out.slice(start).match(rx);
      from = this.out.length;
      return m ? m[0] : null;
    };
    const now = check();
    if (now !== null) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const onData = () => {
        const m = check();
        if (m !== null) {
          done();
          resolve(m);
        }
      };
      const onExit = () => {
        const m = check();
        done();
        if (m !== null) resolve(m);
        else reject(new Error(`process exited before ${re}:\n${this.out.slice(-3000)}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timeout waiting for ${re}:\n${this.out.slice(-3000)}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(onData);
        this.exitListeners.delete(onExit);
      };
      this.listeners.add(onData);
      this.exitListeners.add(onExit);
      if (this.done) onExit();
    });
  }

  async waitExit(timeoutMs = 8000): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const t = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`process did not exit:\n${this.out.slice(-3000)}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, t]);
    } finally {
      clearTimeout(timer);
    }
  }

  signal(sig: NodeJS.Signals): void {
    try {
      process.kill(this.pid, sig);
    } catch {
      // gone
    }
  }

  /** SIGKILL the whole process group (the stand-in and its children). */
  killGroup(): void {
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

export function launch(args: string[], env: NodeJS.ProcessEnv): Proc {
  return new Proc(['-m', 'sglang.launch_server', ...args], env);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export interface HttpResult {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/** A request to 127.0.0.1 only. */
export async function http(
  port: number,
  pathname: string,
  opts: { method?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<HttpResult> {
  const res = await fetch(`http://127.0.0.1:${port}${pathname}`, {
    signal: opts.signal,
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers: { 'content-type': 'application/json', ...(opts.headers ?? {}) },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    headers[k] = v;
  });
  return { status: res.status, body: await res.text(), headers };
}

/** Poll /health until it answers `status` (connection refused counts as 0). */
export async function waitHealth(port: number, status: number, timeoutMs = 8000): Promise<number[]> {
  const seen: number[] = [];
  const start = Date.now();
  for (;;) {
    let s = 0;
    try {
      s = (await http(port, '/health')).status;
    } catch {
      s = 0;
    }
    if (seen[seen.length - 1] !== s) seen.push(s);
    if (s === status) return seen;
    if (Date.now() - start > timeoutMs) throw new Error(`health never ${status}; saw ${seen.join(',')}`);
    await sleep(5);
  }
}

/** Pids in a process group, from /proc. */
export function groupPids(pgid: number): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[2]) === pgid && rest[0] !== 'Z') out.push(Number(d));
    } catch {
      // raced with exit
    }
  }
  return out;
}

/** The part of vitest's test context the stand-in tests use: cleanup when the test ends. */
export type Ctx = { onTestFinished: (fn: () => void) => void };

/** Starts the stand-in on a free port with `args`; its whole process group is killed when the test ends. */
export async function start(
  ctx: Ctx,
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ p: Proc; port: number }> {
  const port = await freePort();
  const p = launch([...args, '--port', String(port)], baseEnv(extra));
  ctx.onTestFinished(() => p.killGroup());
  return { p, port };
}
