// The interactive session in a real pseudo-terminal (tmux: keys typed with send-keys, the screen read with
// capture-pane), launching over a loopback sshd onto a stand-in host: what a person sees when they run a command
// and press Ctrl-C during a launch.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { freshDirs, testConfig } from '../helpers/app.ts';
import { configFile } from '../helpers/child-bot.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

// Not skipped without it: .ci/run installs tmux, and a machine without it should say so, not pass quietly.
const TMUX = ['/usr/bin/tmux', '/usr/local/bin/tmux'].find((p) => existsSync(p)) ?? 'tmux';

const shared = sshdWithBots();

/** A tmux server of this test's own (its own socket), running `glm` in one 160x50 pane. */
function terminal(env: Record<string, string>) {
  const socket = join(mkdtempSync(join(tmpdir(), 'glm-tmux-')), 'sock');
  const tmux = (...args: string[]) =>
    execFileSync(TMUX, ['-S', socket, '-f', '/dev/null', ...args], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...env },
    });
  // A shell runs glm and prints its exit status when it ends: the status is read off the screen (tmux's own
  // pane_dead_status was sometimes never filled in here: the exited process stayed a zombie the tmux server had not
  // reaped). The pane stays after that, so the last screen can be read.
  tmux(
    'new-session',
    '-d',
    '-s',
    'glm',
    '-x',
    '160',
    '-y',
    '50',
    'sh',
    '-c',
    '"$0" "$1"; echo "glm exited with $?"',
    process.execPath,
    join(PACKAGE_ROOT, 'bin', 'glm.js'),
  );
  tmux('set-option', '-t', 'glm', 'remain-on-exit', 'on');
  shared.later(() => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
  });
  const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'glm');
  return {
    screen,
    type: (text: string) => tmux('send-keys', '-t', 'glm', '-l', text),
    key: (k: string) => tmux('send-keys', '-t', 'glm', k),
    async until(what: string, f: (s: string) => boolean, ms = 20_000): Promise<string> {
      const end = Date.now() + ms;
      for (;;) {
        const s = screen();
        if (f(s)) return s;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}; the screen:\n${s}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** The screen's lines, trailing blank ones dropped. */
const lines = (s: string) => s.replace(/\n+$/, '').split('\n');

describe('the interactive session in a terminal', () => {
  it('prompt after output; Ctrl-C during a launch detaches and says how to stop the server; again leaves', async () => {
    // Loads for minutes (the stand-in at real pace): the launch is still loading whenever Ctrl-C comes.
    const loaded = testConfig(shared.sshd, { ...freshDirs(), env: { STANDIN_TIME_SCALE: '1' } });
    const env = { HOME: mkdtempSync(join(tmpdir(), 'glm-home-')), GLM_CONFIG: configFile(loaded) };
    const stop = () =>
      spawnSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'glm.js'), 'stop', '--attempt', '1'], {
        env: { PATH: process.env.PATH, ...env },
        encoding: 'utf8',
      });
    shared.later(() => void stop());
    const t = terminal(env);
    await t.until('the prompt', (s) => lines(s).at(-1) === 'glm> ');

    // A command's output comes after its command line, and the prompt after the output, never before it.
    t.type('status');
    t.key('Enter');
    let s = await t.until('status', (x) => /^gpu +idle/m.test(x) && lines(x).at(-1) === 'glm> ');
    const l = lines(s);
    expect(l.slice(-5)).toEqual([
      'glm> status',
      expect.stringMatching(/^host +state +attempt/),
      expect.stringMatching(/^-+ +-+/),
      expect.stringMatching(/^gpu +idle/),
      'glm> ',
    ]);

    // Output that arrives while the prompt waits (the launch's progress) is printed above the prompt.
    t.type(`launch small --port ${await freePort()}`);
    t.key('Enter');
    s = await t.until('the launch started', (x) => /^attempt #1: small started on gpu/m.test(x));
    await t.until('the prompt again', (x) => lines(x).at(-1) === 'glm> ');

    // First Ctrl-C: the launch goes on in the background; the session says so and how to stop the server.
    t.key('C-c');
    s = await t.until('detached', (x) => /^detached: /m.test(x) && lines(x).at(-1) === 'glm> ');
    expect(s).toMatch(
      /^detached: 1 command goes on in the background\. the server keeps running: #1 \(small on gpu\); stop one with: npx glm stop --attempt 1; npx glm status shows them\. Ctrl-C again \(or exit\) leaves the session; servers keep running\.$/m,
    );
    expect(s).not.toMatch(/glm exited/);
    // The session still answers.
    t.type('status');
    t.key('Enter');
    s = await t.until(
      'status while loading',
      (x) => /^gpu +loading +#1 +small/m.test(x) && lines(x).at(-1) === 'glm> ',
    );
    // No output ever landed after a stale prompt.
    expect(
      lines(s).filter((x) => x.startsWith('glm> ') && !/^glm> (status|launch small --port \d+)?$/.test(x)),
    ).toEqual([]);

    // Second Ctrl-C: the session leaves (130, as for SIGINT), saying what keeps running, on a line of its own.
    t.key('C-c');
    s = await t.until('left', (x) => /^glm exited with \d+$/m.test(x));
    expect(lines(s)).toContain(
      'leaving the session: the server keeps running: #1 (small on gpu); stop one with: npx glm stop --attempt 1; npx glm status shows them',
    );
    expect(lines(s)).toContain('glm exited with 130');
    // And it does: the server was left running, and the command the session named stops it.
    const r = stop();
    expect(r.stdout, r.stderr).toMatch(/^stopped attempt #1 \(small\) on gpu/);
  }, 60_000);
});
