// Secrets stay where they belong (issue 12): on the host, in a 0600 file, and in the server's environment; never on
// a command line, in the ledger, a variant file, a log line or a message. Real parts: sshd on loopback, the SGLang
// stand-in as the server, SQLite, the bot's own logger.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoadedConfig, PACKAGE_ROOT, validate } from '../../src/config/load.ts';
import { makeBot, STANDIN, type TestBot } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';

/** Every live process of a process group with its argv and environment, as /proc shows them to anyone. */
function groupProcs(pgid: number): { pid: number; cmdline: string; environ: string }[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,pgid=,stat='], { encoding: 'utf8' }).split('\n');
  const pids = rows
    .map((r) => r.trim().split(/\s+/))
    .filter((f) => Number(f[1]) === pgid && !f[2]?.startsWith('Z'))
    .map((f) => Number(f[0]));
  const read = (p: string) => {
    try {
      return readFileSync(p, 'latin1').replace(/\0/g, ' ');
    } catch {
      return '';
    }
  };
  return pids.map((pid) => ({ pid, cmdline: read(`/proc/${pid}/cmdline`), environ: read(`/proc/${pid}/environ`) }));
}

const bots: TestBot[] = [];
afterAll(async () => {
  for (const b of bots) {
    await b.run('stop').catch(() => {});
    await b.app.close();
  }
});

describe('a local: true host', () => {
  const BOT_SECRETS = {
    SLACK_BOT_TOKEN: 'xoxb-111111111111-localcanary0001',
    SLACK_SIGNING_SECRET: 'localcanary-signing-0002',
    SLACK_APP_TOKEN: 'xapp-1-localcanary-0003',
    GITHUB_TOKEN: 'ghp_localcanary0004localcanary0004xx',
  };
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    for (const [k, v] of Object.entries(BOT_SECRETS)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
  });
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it("never hands the bot's own environment to the server", async () => {
    const workdir = mkdtempSync(join(tmpdir(), 'glm-local-host-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'glm-data-'));
    const config = validate(
      {
        default_host: 'here',
        timeouts: { connect_s: 5, command_s: 20, keepalive_s: 2, ready_s: 60, stop_grace_s: 2 },
        hosts: {
          here: {
            local: true,
            python: join(STANDIN, 'python'),
            workdir,
            bin_dirs: [join(STANDIN, 'bin')],
            env: { STANDIN_TIME_SCALE: '0.002', STANDIN_STATE_DIR: join(workdir, 'standin-state') },
          },
        },
      },
      'test config',
    );
    const loaded: LoadedConfig = {
      config,
      source: 'test config',
      dataDir,
      profilesDir: join(PACKAGE_ROOT, 'profiles'),
      defaultHost: 'here',
    };
    const b = makeBot(loaded, { dataDir, workdir });
    bots.push(b);
    const r = await b.run(`launch small --port ${await freePort()}`);
    expect(r.text, b.said.join('\n')).toMatch(/^ready: attempt #1/);
    const procs = groupProcs(b.app.engine.attempts.get(1)!.pgid!);
    expect(procs.length).toBeGreaterThan(0);
    const everything = procs.map((p) => `${p.cmdline}\n${p.environ}`).join('\n');
    expect(everything).toContain('STANDIN_TIME_SCALE=0.002'); // the server's own variables did arrive
    for (const [name, value] of Object.entries(BOT_SECRETS)) {
      expect(everything).not.toContain(name);
      expect(everything).not.toContain(value);
    }
  });
});
