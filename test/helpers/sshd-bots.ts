// One sshd per test file and the bots its tests make, torn down after them. Apart from app.ts so that a bench's child
// process, which builds bots from app.ts, does not load vitest (its hooks) into the memory it measures.
import { afterAll, beforeAll } from 'vitest';
import type { TestBot } from './app.ts';
import { type Sshd, startSshd } from './sshd.ts';

/**
 * One sshd for a test file and the bots its tests make (push them onto `bots`): started before the file's tests;
 * after them every live attempt is stopped, every bot closed and the sshd stopped.
 */
export function sshdWithBots(): { readonly sshd: Sshd; readonly bots: TestBot[] } {
  let sshd: Sshd | undefined;
  const bots: TestBot[] = [];
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    for (const b of bots) {
      for (const a of b.app.engine.attempts.allActive()) await b.run(`stop --attempt ${a.id}`).catch(() => {});
      await b.app.close();
    }
    await sshd?.stop();
  });
  return {
    get sshd(): Sshd {
      if (!sshd) throw new Error('the sshd starts in beforeAll: use it inside a test');
      return sshd;
    },
    bots,
  };
}
