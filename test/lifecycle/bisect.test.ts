// Bisection on the seeds' story over a real sshd: the stand-in NaNs when a FlashMLA NSA decode backend is used; the
// bisection between the working tilelang/bf16 profile and a variant that changes seven settings finds that one.
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config/load.ts';
import type { TestBot } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
let bot: TestBot;

beforeAll(() => {
  const profiles = mkdtempSync(join(tmpdir(), 'glm-profiles-'));
  cpSync(join(PACKAGE_ROOT, 'profiles'), profiles, { recursive: true });
  writeFileSync(
    join(profiles, 'glm5-bad.yaml'),
    [
      'extends: glm5-tilelang-bf16',
      'description: the working configuration with seven changes, one of which breaks it',
      'nsa_decode_backend: flashmla_sparse',
      'fp8_gemm_backend: cutlass',
      'chunked_prefill_size: 4096',
      'context_length: 32768',
      'mem_fraction_static: 0.8',
      'cuda_graph_max_bs: 128',
      'env:',
      '  NCCL_DEBUG: WARN',
      '',
    ].join('\n'),
  );
  bot = shared.bot({
    edit: (loaded) => {
      loaded.profilesDir = profiles;
    },
  });
});

describe('bisect', () => {
  it('finds the FlashMLA decode backend in a logarithmic number of launches, each in the ledger', async () => {
    const r = await bot.run(`bisect glm5-tilelang-bf16 glm5-bad --port ${await freePort()} --json`);
    expect(r.exitCode ?? 0, r.text).toBe(0);
    const res = r.data as {
      culprit: string[];
      confirmed: boolean;
      steps: Array<{ attemptId: number; verdict: string; outcome: string }>;
    };
    expect(res.culprit).toEqual(['nsa_decode_backend']);
    expect(res.confirmed).toBe(true);
    // 7 settings: ceil(log2 7) = 3 halvings, plus at most one launch to confirm an inferred culprit.
    expect(res.steps.length).toBeGreaterThanOrEqual(3);
    expect(res.steps.length).toBeLessThanOrEqual(4);
    const attempts = bot.app.engine.attempts.list();
    expect(attempts.map((a) => a.id)).toEqual(res.steps.map((s) => s.attemptId));
    for (const a of attempts) {
      expect(a.active).toBe(false);
      expect(a.groupKey).toMatch(/^bisect:/);
    }
    expect(res.steps.filter((s) => s.verdict === 'bad').every((s) => s.outcome === 'nan_in_sampling')).toBe(true);
    expect(bot.app.engine.attempts.activeOn('gpu')).toBeUndefined();
  });

  it('refuses two identical profiles, and GPUs held by another attempt (naming it)', async () => {
    expect((await bot.run('bisect small small')).text).toMatch(/launch the same server/);
    expect((await bot.run(`launch small --port ${await freePort()}`)).exitCode ?? 0).toBe(0);
    const busy = await bot.run('bisect glm5-tilelang-bf16 glm5-bad');
    expect(busy.exitCode).toBe(2);
    expect(busy.text).toMatch(
      /gpu has 7 free GPUs of 8; this launch needs 8: GPUs 0 held by attempt #\d+ \(small, tester/,
    );
    await bot.run('stop');
  });
});
