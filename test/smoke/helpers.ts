// A bot on a real sshd whose host runs the SGLang stand-in, with a control file to turn the running server bad and
// a profiles directory that can hold test-only profiles (e.g. one whose smoke prompts the stand-in gets wrong).
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/config/load.ts';
import { freshDirs, makeBot, type TestBot, testConfig } from '../helpers/app.ts';
import type { Sshd } from '../helpers/sshd.ts';

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

export function smokeBot(
  sshd: Sshd,
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
  const loaded = testConfig(sshd, {
    ...dirs,
    env: { STANDIN_CONTROL: control, STANDIN_TTFT_MS: '20', STANDIN_TPOT_MS: '4', ...opts.env },
    extra: opts.extra,
  });
  const profilesDir = opts.profilesDir ?? join(PACKAGE_ROOT, 'profiles');
  const b = makeBot({ ...loaded, profilesDir }, dirs);
  return Object.assign(b, { control, profilesDir, dirs });
}
