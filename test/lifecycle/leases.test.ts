// GPU leases: the ledger knows which GPUs each live attempt holds, refuses a launch that would clash (naming the
// holder), and ends a lease with its attempt, however the attempt ends: a crash the bot saw, or one that happened
// while no bot was running.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.ts';
import { describeError } from '../../src/errors-render.ts';
import { createAttemptStore } from '../../src/ledger/attempts.ts';
import { openDb } from '../../src/ledger/db.ts';
import { readGpus } from '../../src/lifecycle/host-info.ts';
import { attemptRow, freshDirs, makeBot, postGenerate, STANDIN, testConfig, until } from '../helpers/app.ts';
import { freePort, userDir } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

describe('leases in the ledger', () => {
  it('refuse a clashing GPU or port naming the holder, and end with the attempt', () => {
    const file = join(userDir('glm-lease-db-'), 'ledger.db');
    const a = createAttemptStore(openDb(file));
    // A second connection to the same file: another bot process (terminal beside the Slack bot).
    const other = createAttemptStore(openDb(file));
    const first = a.open(attemptRow('0,1', 30000));
    let err: unknown;
    try {
      other.open(attemptRow('1,2', 30001, 'bob'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe(
      `GPUs 1,2 on h: GPU 1 held by attempt #${first.id} (p), launched by alice at 2026-11-29T12:00:00.000Z, starting`,
    );
    expect(describeError(err)).toMatch(`stop it with: stop --attempt ${first.id}`);
    expect(() => other.open(attemptRow('4', 30000, 'bob'))).toThrow(/port 30000 on h is served by attempt #1/);
    // Beside it, on other GPUs and another port: fine.
    const beside = other.open(attemptRow('2,3', 30001, 'bob'));
    expect(a.leasesOn('h').map((l) => [l.gpu, l.attemptId])).toEqual([
      [0, first.id],
      [1, first.id],
      [2, beside.id],
      [3, beside.id],
    ]);
    expect(a.finish(first.id, { status: 'crashed', outcome: 'cuda_oom', at: Date.now() })).toBe(true);
    expect(other.leasesOn('h').map((l) => l.gpu)).toEqual([2, 3]);
    expect(other.open(attemptRow('0,1', 30000, 'bob')).id).toBeGreaterThan(beside.id);
  });
});

const shared = sshdWithBots();

describe('leases over sshd', () => {
  it('GPUs busy outside the bot: a launch naming them is refused with the memory in use; the bot picks around them', async () => {
    const b = shared.bot();
    const cfg = b.app.engine.loaded;
    // Someone's own server on GPUs 0 and 3, started by hand on the host (not through the bot).
    const foreign = spawn(
      join(STANDIN, 'python'),
      [
        '-m',
        'sglang.launch_server',
        '--model-path',
        'Qwen/Qwen2.5-0.5B-Instruct',
        '--tp-size',
        '2',
        '--port',
        String(await freePort()),
      ],
      {
        detached: true,
        stdio: 'ignore',
        env: { ...process.env, ...cfg.config.hosts.gpu!.env, CUDA_VISIBLE_DEVICES: '0,3' },
      },
    );
    try {
      const gpusNow = () => readGpus(b.app.engine.pool.get('gpu'), cfg.config.hosts.gpu!);
      let used: number[] = [];
      for (let i = 0; i < 200 && used.length < 2; i++) {
        used = (await gpusNow()).gpus.filter((g) => g.memUsedMiB >= 1024).map((g) => g.index);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(used).toEqual([0, 3]);
      const named = await b.run(`launch small --gpus 3 --port ${await freePort()}`);
      expect(named.exitCode).toBe(2);
      expect(named.text).toMatch(/GPU 3 on gpu has \d+ MiB in use by a process this bot did not start/);
      expect(b.app.engine.attempts.list()).toHaveLength(0);
      const picked = await b.run(`launch small --set tp=2 --port ${await freePort()}`);
      expect(picked.exitCode, picked.text).toBe(0);
      expect(b.app.engine.attempts.get(1)!.gpus).toBe('1,2');
      expect(b.app.engine.attempts.get(1)!.commandLine).toMatch(/^CUDA_VISIBLE_DEVICES=1,2 /);
      await b.run('stop --attempt 1');
    } finally {
      if (foreign.pid) process.kill(-foreign.pid, 'SIGKILL');
    }
  });

  it('two launches wanting the same GPUs: the second is refused naming the first; after the first crashes it goes', async () => {
    const control = join(userDir('glm-ctl-'), 'control');
    writeFileSync(control, '', { mode: 0o666 });
    const b = shared.bot({ env: { STANDIN_CONTROL: control }, longLived: true });
    const port = await freePort();
    expect((await b.run(`launch small --set tp=2 --gpus 0,1 --port ${port}`)).exitCode).toBe(0);

    const second = await b.run(`launch small --set tp=2 --gpus 1,2 --port ${await freePort()}`);
    expect(second.exitCode).toBe(2);
    expect(second.text).toMatch(/GPUs 1,2 on gpu: GPU 1 held by attempt #1 \(small\.tp-2\), launched by tester at/);
    expect(b.app.engine.attempts.list()).toHaveLength(1);
    expect((await b.run('status')).text).toMatch(/gpu +ready +#1 +small\.tp-2 +- +0,1 +tester/);

    // The first server NaNs on its next request; the bot (watching it) records the crash, and the lease ends.
    writeFileSync(control, 'nan_decode\n');
    await postGenerate(b.app, 'gpu', port);
    await until(() => b.app.engine.attempts.get(1)?.active === false, 20_000);
    expect(b.app.engine.attempts.get(1)).toMatchObject({ status: 'crashed', outcome: 'nan_in_sampling' });
    expect(b.app.engine.attempts.leasesOn('gpu')).toEqual([]);
    writeFileSync(control, '');

    // (The ledger now knows this configuration crashed on this host: the launch is held back until confirmed.)
    const held = await b.run(`launch small --set tp=2 --gpus 1,2 --port ${await freePort()}`);
    expect(held.text).toMatch(/small\.tp-2 on gpu is known to crash:\n.*#1/);
    const again = await b.run(`launch small --set tp=2 --gpus 1,2 --yes --port ${await freePort()}`);
    expect(again.exitCode, again.text).toBe(0);
    expect(b.app.engine.attempts.leasesOn('gpu').map((l) => l.gpu)).toEqual([1, 2]);
  });

  it('a lease whose server died while no bot ran ends when the next launch asks the host', async () => {
    const dirs = freshDirs();
    const cfg = testConfig(shared.sshd, dirs);
    const first = shared.keep(makeBot(cfg, dirs));
    expect((await first.run(`launch small --gpus 4 --port ${await freePort()}`)).exitCode).toBe(0);
    const a = first.app.engine.attempts.get(1)!;
    await first.app.close();
    // The server dies while nobody watches.
    process.kill(-a.pgid!, 'SIGKILL');

    const restarted = shared.keep(makeBot(cfg, dirs));
    expect(restarted.app.engine.attempts.leasesOn('gpu')).toEqual([{ gpu: 4, attemptId: 1 }]);
    const r = await restarted.run(`launch small --gpus 4 --port ${await freePort()}`);
    expect(r.exitCode, r.text).toBe(0);
    expect(restarted.app.engine.attempts.get(1)!.active).toBe(false);
    expect(restarted.app.engine.attempts.get(1)!.outcomeDetail).toBe('ended while the bot was not watching');
    expect(restarted.app.engine.attempts.leasesOn('gpu')).toEqual([{ gpu: 4, attemptId: 2 }]);
  });
});
