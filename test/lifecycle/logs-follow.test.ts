// `logs --follow` over a real sshd while a writer appends to the log without pause: the snapshot it prints first and
// the lines it follows afterwards join up, with no line lost or shown twice at the seam.
import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { type TestBot, until } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
let bot: TestBot;

beforeAll(() => {
  bot = shared.bot();
});

describe('logs --follow', () => {
  it('loses no line between the snapshot and the follow, and shows none twice', async () => {
    expect((await bot.run(`launch small --no-check --port ${await freePort()}`)).exitCode).toBe(0);
    const a = bot.app.engine.attempts.activeOn('gpu')!;
    // A writer appending numbered lines all the time, so some land between reading the snapshot and following.
    const writer = spawn(
      'sh',
      ['-c', 'i=0; while [ "$i" -lt 200000 ]; do echo "SEQ $i"; i=$((i + 1)); done >> "$1"', 'glm-writer', a.logPath!],
      { stdio: 'ignore' },
    );
    try {
      bot.said.length = 0;
      const following = bot.run(`logs --attempt ${a.id} --follow --lines 5`);
      await until(
        () =>
          bot.said
            .join('\n')
            .split('\n')
            .filter((l) => l.startsWith('SEQ ')).length > 2000,
        20_000,
      );
      writer.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 200));
      await bot.run(`stop --attempt ${a.id}`);
      expect((await following).text).toMatch(/the server is gone/);
    } finally {
      writer.kill('SIGKILL');
    }
    const seq = bot.said
      .join('\n')
      .split('\n')
      .filter((l) => /^SEQ \d+$/.test(l))
      .map((l) => Number(l.slice(4)));
    expect(seq.length).toBeGreaterThan(2000);
    const gaps = seq.slice(1).flatMap((n, i) => (n === seq[i]! + 1 ? [] : [`${seq[i]} -> ${n}`]));
    expect(gaps).toEqual([]);
  });
});
