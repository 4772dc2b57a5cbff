// `~` means the same everywhere: the bot's own files (expandHome), the host's fixed scripts (home_path) and the
// rendered Slurm job script (shqPath), each run here through a real sh with its own HOME.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HOME_PATH_SH, isHomePath, shqPath } from '../../src/hosts/quote.ts';
import { expandHome } from '../../src/paths.ts';

const HOME = "/home/o'brien/x y";
const sh = (text: string, ...args: string[]) =>
  execFileSync('sh', ['-c', text, 'glm-test', ...args], { env: { PATH: process.env.PATH, HOME }, encoding: 'utf8' });

describe('home paths', () => {
  const paths = ['~', '~/', '~/a/b', "~/it's here", '~user/x', 'a/~', '/abs/~', 'rel/path', '-n'];

  it('the local expansion, the scripts and the rendered job agree on every path', () => {
    for (const p of paths) {
      const local = expandHome(p, HOME);
      expect({ p, script: sh(`${HOME_PATH_SH}\nhome_path "$1"`, p) }).toEqual({ p, script: local });
      expect({ p, job: sh(`printf %s ${shqPath(p)}`) }).toEqual({ p, job: local });
      expect({ p, home: isHomePath(p) }).toEqual({ p, home: local !== p || p === '~/' });
    }
    expect(expandHome('~/a/b', HOME)).toBe(`${HOME}/a/b`);
    expect(expandHome('~user/x', HOME)).toBe('~user/x');
  });
});
