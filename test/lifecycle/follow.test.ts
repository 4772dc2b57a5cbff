// The log follower over a real sshd: lines appended, a truncation in the middle, a resume from the saved offset.
import { appendFileSync, truncateSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { watchAttempt } from '../../src/lifecycle/watch.ts';
import type { TestBot } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
let bot: TestBot;

beforeAll(() => {
  bot = shared.bot();
});

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('following a log', () => {
  it('sees every appended line once, through a truncation, and resumes from the saved offset without repeats', async () => {
    const r = await bot.run(`launch small --no-check --port ${await freePort()}`);
    expect(r.exitCode ?? 0).toBe(0);
    const a = bot.app.engine.attempts.activeOn('gpu')!;
    const seen: string[] = [];
    const abort = new AbortController();
    const first = watchAttempt(
      bot.app.engine,
      a,
      {
        onLine: (l) => {
          if (l.text.startsWith('MARK ')) seen.push(l.text);
          return undefined;
        },
      },
      abort.signal,
    );
    await wait(400);
    for (const m of ['A1', 'A2', 'A3']) appendFileSync(a.logPath!, `MARK ${m}\n`);
    await wait(600);
    truncateSync(a.logPath!, 0);
    await wait(1500); // tail -F notices truncation on its next check
    for (const m of ['B1', 'B2']) appendFileSync(a.logPath!, `MARK ${m}\n`);
    await wait(800);
    abort.abort();
    expect(await first).toBe('aborted');
    expect(seen).toEqual(['MARK A1', 'MARK A2', 'MARK A3', 'MARK B1', 'MARK B2']);

    // A restarted follower starts at the saved offset: old lines are not handled again, new ones are.
    appendFileSync(a.logPath!, 'MARK C1\n');
    const again: string[] = [];
    const resumed = bot.app.engine.attempts.get(a.id)!;
    const second = watchAttempt(bot.app.engine, resumed, {
      onLine: (l) => {
        if (l.text.startsWith('MARK ')) again.push(l.text);
        return l.text === 'MARK C2' ? 'stop' : undefined;
      },
    });
    await wait(400);
    appendFileSync(a.logPath!, 'MARK C2\n');
    expect(await second).toBe('stopped-by-handler');
    expect(again).toEqual(['MARK C1', 'MARK C2']);
  });
});
