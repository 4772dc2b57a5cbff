// Host problems through the whole bot: each gives a clear error within a bounded time and leaves the ledger clean.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validate } from '../../src/config/load.ts';
import { freshDirs, makeBot, STANDIN, sshBlock, type TestBot, testConfig } from '../helpers/app.ts';
import { freePort, startSshd } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

// The bots' host, and a jump host in front of it.
const shared = sshdWithBots({ sshds: 2 });

function bot(over: (raw: ReturnType<typeof testConfig>) => void = () => {}): TestBot {
  return shared.bot({ edit: over });
}

describe('hosts through the bot', () => {
  it('check reports reachable, authenticated, Python, SGLang and GPUs', async () => {
    const r = await bot().run('check --json');
    const [h] = r.data as Array<{
      reachable: boolean;
      authenticated: boolean;
      python: string;
      sglang: string;
      gpus: Array<{ name: string; computeCap: string }>;
    }>;
    expect(r.exitCode).toBe(0);
    expect(h).toMatchObject({ reachable: true, authenticated: true });
    expect(h?.python).toMatch(/^3\.\d+/);
    expect(h?.sglang).toMatch(/standin/);
    expect(h?.gpus.length).toBe(8);
    expect(h?.gpus[0]?.computeCap).toBe('12.0');
  });

  it('an unknown host key: launch refused with the fingerprint, nothing in the ledger', async () => {
    const empty = join(freshDirs().dataDir, 'known_hosts');
    writeFileSync(empty, '');
    const b = bot((c) => {
      c.config.hosts.gpu!.ssh!.known_hosts = empty;
    });
    const started = Date.now();
    const r = await b.run(`launch small --port ${await freePort()}`);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.exitCode).toBe(1);
    expect(r.text).toMatch(/error on host gpu: host key of \[127\.0\.0\.1\]:\d+ is not known: it presented SHA256:/);
    expect(r.text).toMatch(/fix: check the fingerprint out of band/);
    expect(b.app.engine.attempts.list()).toEqual([]);
  });

  it('a changed host key: refused, named as a change, nothing launched', async () => {
    const other = await startSshd();
    shared.later(() => other.stop());
    const b = bot((c) => {
      c.config.hosts.gpu!.ssh!.known_hosts = other.knownHostsPath; // pins another server's key for this address
      c.config.hosts.gpu!.ssh!.port = shared.sshd.port;
    });
    writeFileSync(other.knownHostsPath, `[127.0.0.1]:${shared.sshd.port} ${other.hostKeyPub}\n`);
    const r = await b.run(`launch small --port ${await freePort()}`);
    expect(r.exitCode).toBe(1);
    expect(r.text).toMatch(/HOST KEY CHANGED/);
    expect(r.text).toMatch(/ssh-keygen -R/);
    expect(b.app.engine.attempts.list()).toEqual([]);
    await other.stop();
  });

  it('an unreachable host: a clear error within the connect timeout', async () => {
    const port = await freePort();
    const b = bot((c) => {
      c.config.hosts.gpu!.ssh!.port = port;
    });
    const started = Date.now();
    const r = await b.run('status');
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(r.text).toMatch(/idle/);
    const l = await b.run(`launch small --port ${await freePort()}`);
    expect(l.text).toMatch(/cannot reach 127\.0\.0\.1:\d+/);
    expect(b.app.engine.attempts.list()).toEqual([]);
  });

  it('reaches a host through a jump host', async () => {
    const dirs = freshDirs();
    const raw = {
      default_host: 'gpu',
      timeouts: { connect_s: 5, command_s: 20, keepalive_s: 2, ready_s: 60, stop_grace_s: 2 },
      hosts: {
        bastion: { ssh: sshBlock(shared.sshds[1]!) },
        gpu: {
          ssh: { ...sshBlock(shared.sshd), jump: 'bastion' },
          python: join(STANDIN, 'python'),
          workdir: dirs.workdir,
          bin_dirs: [join(STANDIN, 'bin')],
        },
      },
    };
    const cfg = { ...testConfig(shared.sshd, dirs), config: validate(raw, 'jump config') };
    const b = shared.keep(makeBot(cfg, dirs));
    const r = await b.run('check --host gpu --json');
    expect((r.data as Array<{ sglang: string }>)[0]?.sglang).toMatch(/standin/);
  });
});

describe('known crashes on this hardware', () => {
  it('a one-shot launch of a configuration known to crash on SM120 is held back with the evidence; --yes launches it', async () => {
    const b = bot();
    const port = await freePort();
    const dry = await b.run(`launch glm5-attempt4 --dry-run --port ${port}`);
    expect(dry.text).toMatch(/known to crash: nsa-decode-backend flashmla_sparse is known to crash on sm120/);
    const r = await b.run(`launch glm5-attempt4 --port ${port}`);
    expect(r.exitCode).toBe(2);
    expect(r.text).toMatch(/glm5-attempt4 on gpu is known to crash:/);
    expect(r.text).toMatch(/issues\/26087/);
    expect(r.text).toMatch(/--yes/);
    expect(b.app.engine.attempts.list()).toEqual([]);
    const y = await b.run(`launch glm5-attempt4 --yes --port ${port}`);
    expect(y.text).toMatch(/nan_in_sampling during decode/);
    // Now the ledger knows too.
    const again = await b.run(`launch glm5-attempt4 --port ${port}`);
    expect(again.text).toMatch(/this exact configuration already crashed on this host: attempt #1 nan_in_sampling/);
  });
});
