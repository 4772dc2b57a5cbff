// Two bots with their own ledgers sharing one host's workdir (issue 17): run ids name the ledger, so neither bot's
// launches run into the other's run directories; a clash that still happens says what it is.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDirs, type TestBot } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

function botOn(workdir: string): TestBot {
  const dataDir = mkdtempSync(join(tmpdir(), 'glm-data-'));
  return shared.bot({ dirs: { workdir, dataDir } });
}

describe('run ids', () => {
  it('two ledgers sharing a workdir launch side by side, each in its own run directory', async () => {
    const { workdir } = freshDirs();
    const one = botOn(workdir);
    const two = botOn(workdir);
    expect(one.app.engine.attempts.ledgerId).not.toBe(two.app.engine.attempts.ledgerId);
    const r1 = await one.run(`launch small --no-check --gpus 0 --port ${await freePort()}`);
    expect(r1.exitCode, r1.text).toBe(0);
    const r2 = await two.run(`launch small --no-check --gpus 1 --port ${await freePort()}`);
    expect(r2.exitCode, r2.text).toBe(0);
    const [a1, a2] = [one.app.engine.attempts.get(1)!, two.app.engine.attempts.get(1)!];
    expect(a1.runDir).not.toBe(a2.runDir);
    expect(a1.runId).toBe(`attempt-1-${one.app.engine.attempts.ledgerId}`);
    // Each bot stops its own server, not the other's.
    expect((await two.run('stop --attempt 1')).text).toMatch(/exited on SIGTERM/);
    expect(one.app.engine.attempts.get(1)!.active).toBe(true);
    expect((await one.run('status')).text).toMatch(/#1 +small/);
  });

  it('a run directory that is already there is refused, saying whose it could be and how to fix it', async () => {
    const { workdir } = freshDirs();
    const b = botOn(workdir);
    // The next attempt's run directory, made as a copy of this ledger elsewhere would have made it.
    mkdirSync(join(workdir, 'runs', `attempt-1-${b.app.engine.attempts.ledgerId}`), { recursive: true });
    const r = await b.run(`launch small --no-check --port ${await freePort()}`);
    expect(r.exitCode).not.toBe(0);
    expect(r.text).toMatch(
      /run directory .*attempt-1-[0-9a-f]{8} already exists: another bot using a copy of this ledger/,
    );
    expect(r.text).toMatch(/own ledger \(data_dir\) or its own hosts\.gpu\.workdir/);
    expect(r.text).not.toMatch(/File exists/);
  });
});
