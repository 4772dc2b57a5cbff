// A GPU host whose nvidia-smi cannot be found: the hardware hold-back cannot know the architecture, and says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDirs, makeBot, type TestBot, testConfig } from '../helpers/app.ts';
import { freePort, type Sshd, startSshd } from '../helpers/sshd.ts';

let sshd: Sshd;
let b: TestBot;

beforeAll(async () => {
  sshd = await startSshd();
  const dirs = freshDirs();
  const loaded = testConfig(sshd, dirs);
  // The stand-in's nvidia-smi lives in bin_dirs: without them the host has none (as a box without the driver).
  loaded.config.hosts.gpu!.bin_dirs = [];
  b = makeBot(loaded, dirs);
});
afterAll(async () => {
  await b.run('stop').catch(() => {});
  await b.app.close();
  await sshd.stop();
});

describe('a host without nvidia-smi', () => {
  it('the hardware hold-back says the GPU architecture is unknown and which check did not run', async () => {
    const dry = await b.run('launch glm5-attempt4 --dry-run');
    expect(dry.text).toMatch(
      /note: the GPU architecture of gpu is unknown \(no nvidia-smi on the host\): the hardware catalog's sm120 checks \(\d+ known crashes\) did not run, and this configuration matches: nsa-decode-backend flashmla_sparse crashes on sm120 \(nan_in_sampling\)/,
    );
    const small = await b.run(`launch small --gpus 0 --no-check --port ${await freePort()}`);
    expect(small.exitCode, small.text).toBe(0);
    expect(small.text).toMatch(
      /note: the GPU architecture of gpu is unknown .* did not run; the ledger's check of past crashes on this host did/,
    );
  });
});
