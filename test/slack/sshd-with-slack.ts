// A test file's sshd and Slack stand-in, and the faces its tests start, all torn down after its tests.
import { beforeAll } from 'vitest';
import type { LoadedConfig } from '../../src/config/load.ts';
import { freshDirs, terminalContext, testConfig } from '../helpers/app.ts';
import type { Sshd } from '../helpers/sshd.ts';
import { type BotOptions, type SshdBots, sshdWithBots } from '../helpers/sshd-bots.ts';
import { type FakeSlack, startFakeSlack } from './fake-slack.ts';
import { ACCESS, type Face, OPS, startFace } from './helpers.ts';

export interface SshdWithSlack {
  readonly sshd: Sshd;
  readonly fake: FakeSlack;
  /** A bot's config with a Slack face in the OPS channel and ACCESS as its access (fresh dirs unless given). */
  config(opts?: Pick<BotOptions, 'dirs' | 'env' | 'extra'>): LoadedConfig;
  /** A face on Slack's stand-in, torn down after the file's tests (its live attempts stopped, then the face). */
  face(loaded: LoadedConfig, opts?: Parameters<typeof startFace>[2]): Promise<Face>;
  bot: SshdBots['bot'];
  later: SshdBots['later'];
}

/**
 * A test file's sshd (sshdWithBots) and Slack stand-in, and the faces its tests start: after the tests each face's
 * live attempts are stopped and the face stopped, then Slack's stand-in closes, then the sshd stops.
 */
export function sshdWithSlack(): SshdWithSlack {
  const shared = sshdWithBots();
  let fake: FakeSlack | undefined;
  beforeAll(async () => {
    const f = await startFakeSlack();
    fake = f;
    shared.later(() => f.close());
  });
  const fixture: SshdWithSlack = {
    get sshd() {
      return shared.sshd;
    },
    get fake(): FakeSlack {
      if (!fake) throw new Error("Slack's stand-in starts in beforeAll: use it inside a test or a later hook");
      return fake;
    },
    config(o = {}) {
      const extra = { slack: { channel: OPS, port: 0 }, access: ACCESS, ...o.extra };
      return testConfig(fixture.sshd, { ...(o.dirs ?? freshDirs()), env: o.env, extra });
    },
    async face(loaded, opts) {
      const face = await startFace(fixture.fake, loaded, opts);
      shared.keep({ app: face.glm, ctx: terminalContext(face.glm, { actor: 'teardown' }) }, () => face.stop());
      return face;
    },
    bot: (opts) => shared.bot(opts),
    later: (fn) => shared.later(fn),
  };
  return fixture;
}
