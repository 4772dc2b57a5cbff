// A GPU host whose nvidia-smi cannot be found: the hardware hold-back cannot know the architecture, and says so.
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestBot } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
let b: TestBot;

beforeAll(() => {
  b = shared.bot({
    edit: (loaded) => {
      // The stand-in's nvidia-smi lives in bin_dirs: without them the host has none (as a box without the driver).
      loaded.config.hosts.gpu!.bin_dirs = [];
    },
  });
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
