// A bot on a real sshd whose host runs the SGLang stand-in, with a control file to turn the running server bad and
// a profiles directory that can hold test-only profiles (e.g. one whose smoke prompts the stand-in gets wrong).
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from '../../src/app.ts';
import { PACKAGE_ROOT } from '../../src/config/load.ts';
import type { Scheduler } from '../../src/schedule/scheduler.ts';
import { freshDirs, type TestBot } from '../helpers/app.ts';
import type { SshdBots } from '../helpers/sshd-bots.ts';

export interface SmokeBot extends TestBot {
  control: string;
  profilesDir: string;
  dirs: { workdir: string; dataDir: string };
}

export function profilesWith(extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'glm-profiles-'));
  cpSync(join(PACKAGE_ROOT, 'profiles'), dir, { recursive: true });
  for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, `${name}.yaml`), text);
  return dir;
}

/** A smoke bot on the file's sshd, torn down after its tests (its control file emptied first, so servers stop). */
export function smokeBot(
  shared: SshdBots,
  opts: {
    env?: Record<string, string>;
    extra?: Record<string, unknown>;
    profilesDir?: string;
    dirs?: { workdir: string; dataDir: string };
    control?: string;
  } = {},
): SmokeBot {
  const dirs = opts.dirs ?? freshDirs();
  const control = opts.control ?? join(dirs.workdir, 'standin-control');
  writeFileSync(control, '');
  const profilesDir = opts.profilesDir ?? join(PACKAGE_ROOT, 'profiles');
  const b = shared.bot({
    dirs,
    env: { STANDIN_CONTROL: control, STANDIN_TTFT_MS: '20', STANDIN_TPOT_MS: '4', ...opts.env },
    extra: opts.extra,
    edit: (loaded) => {
      loaded.profilesDir = profilesDir;
    },
  });
  shared.later(() => writeFileSync(control, ''));
  return Object.assign(b, { control, profilesDir, dirs });
}

/** A scheduled bot's end: its scheduler stops, what it posted is delivered, then the bot closes. */
export async function shutdown(app: App, s?: Scheduler): Promise<void> {
  await s?.stop();
  await app.delivery?.flush(5000);
  await app.close();
}
