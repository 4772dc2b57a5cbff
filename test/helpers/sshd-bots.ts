// One sshd per test file and the bots (and anything else) its tests start, torn down after them. Apart from app.ts so
// that a bench's child process, which builds bots from app.ts, does not load vitest (its hooks) into the memory it
// measures.
import { afterAll, beforeAll } from 'vitest';
import type { App } from '../../src/app.ts';
import type { LoadedConfig } from '../../src/config/load.ts';
import type { CommandContext } from '../../src/runtime/define.ts';
import { freshDirs, makeBot, type TestBot, testConfig } from './app.ts';
import { type KeyType, type Sshd, startSshd } from './sshd.ts';

/** What the teardown needs of a bot: its app (its live attempts, its close) and a context to run `stop` in. */
export interface HeldBot {
  app: App;
  ctx: CommandContext;
}

/** How `bot()` makes a bot: fresh dirs unless given, the stand-in's env, config sections, a last edit of its own. */
export interface BotOptions {
  dirs?: { workdir: string; dataDir: string };
  env?: Record<string, string>;
  extra?: Record<string, unknown>;
  longLived?: boolean;
  /** Changes the test config before the bot is made (a host's python, its bin_dirs, the profiles directory...). */
  edit?: (loaded: LoadedConfig, dirs: { workdir: string; dataDir: string }) => void;
}

export interface SshdBots {
  /** The file's first sshd (the bots' host); `sshds` holds them all. */
  readonly sshd: Sshd;
  readonly sshds: readonly Sshd[];
  /** A bot on the first sshd, torn down after the file's tests. */
  bot(opts?: BotOptions): TestBot;
  /** Tears `b` down after the file's tests: its live attempts stopped, then `close` (the app's close by default). */
  keep<B extends HeldBot>(b: B, close?: () => Promise<void>): B;
  /** Runs `fn` after the file's tests (what was started last is undone first). */
  later(fn: () => unknown): void;
}

/** Stops every live attempt a bot's ledger holds, on any host (best effort: a host may be gone by now). */
export async function stopLive(b: HeldBot): Promise<void> {
  for (const a of b.app.engine.attempts.allActive())
    await b.app.dispatch.run(`stop --attempt ${a.id}`, b.ctx).catch(() => {});
}

/**
 * Runs every step, last first, each one even when an earlier one failed, then throws the first failure: one test
 * that fails (or one close that throws) leaves no sshd, server or bot of the others behind.
 */
export async function undoAll(steps: Array<() => unknown>): Promise<void> {
  let failure: { error: unknown } | undefined;
  for (const step of steps.splice(0).reverse()) {
    try {
      await step();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}

/**
 * One sshd for a test file (or `sshds` of them; `hostKeyType` for their host key), and the bots and other things its
 * tests start. The sshds start before the file's tests; after them all is undone, last started first (undoAll): each
 * kept bot's live attempts are stopped and the bot closed, each `later` runs, the sshds stop. A bot a test closed
 * itself is not closed again.
 */
export function sshdWithBots(opts: { sshds?: number; hostKeyType?: KeyType } = {}): SshdBots {
  const sshds: Sshd[] = [];
  const steps: Array<() => unknown> = [];
  beforeAll(async () => {
    const started = await Promise.all(
      Array.from({ length: opts.sshds ?? 1 }, () => startSshd({ hostKeyType: opts.hostKeyType })),
    );
    sshds.push(...started);
    for (const s of started) steps.push(() => s.stop());
  });
  afterAll(() => undoAll(steps));
  const fixture: SshdBots = {
    get sshd(): Sshd {
      const s = sshds[0];
      if (!s) throw new Error('the sshd starts in beforeAll: use it inside a test or a later hook');
      return s;
    },
    sshds,
    bot(o = {}) {
      const dirs = o.dirs ?? freshDirs();
      const loaded = testConfig(fixture.sshd, { ...dirs, env: o.env, extra: o.extra });
      o.edit?.(loaded, dirs);
      return fixture.keep(makeBot(loaded, { ...dirs, longLived: o.longLived }));
    },
    keep(b, close) {
      // A test may close its bot itself (a restart on the same ledger): then there is nothing left to stop or close.
      let closing: Promise<void> | undefined;
      const appClose = b.app.close.bind(b.app);
      b.app.close = () => {
        closing ??= appClose();
        return closing;
      };
      steps.push(async () => {
        if (closing) return closing;
        await stopLive(b);
        await (close ?? b.app.close)();
      });
      return b;
    },
    later(fn) {
      steps.push(fn);
    },
  };
  return fixture;
}
