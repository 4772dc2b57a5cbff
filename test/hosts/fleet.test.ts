// Reaching many hosts at once: the bot asks OpenSSH how to reach each (ssh -G) for all of them together, and a
// passphrase-protected key is decrypted once, not at every host's connect. Real sshd on loopback, real ssh client.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validate } from '../../src/config/load.ts';
import { parsedKey } from '../../src/hosts/ssh.ts';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { makeBot, seedUnwatched, standinHost } from '../helpers/app.ts';
import { keygen } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

/** `n` host entries with names of their own, which an ssh config file maps to the loopback sshd. */
function fleet(n: number, ssh: Record<string, unknown> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'glm-fleet-'));
  const names = Array.from({ length: n }, (_, i) => `node${i}`);
  const sshConfig = join(dataDir, 'ssh_config');
  writeFileSync(sshConfig, `Host ${names.join(' ')}\n  HostName 127.0.0.1\n`);
  const hosts: Record<string, unknown> = {};
  for (const name of names) {
    const workdir = join(dataDir, name);
    mkdirSync(workdir);
    const h = standinHost(shared.sshd, workdir) as { ssh: Record<string, unknown> };
    hosts[name] = { ...h, ssh: { ...h.ssh, host: name, ssh_config: sshConfig, ...ssh } };
  }
  const loaded = {
    config: validate({ default_host: names[0], hosts }, 'test config'),
    source: 'test config',
    dataDir,
    profilesDir: join(PACKAGE_ROOT, 'profiles'),
    defaultHost: names[0]!,
  };
  return { bot: makeBot(loaded, { dataDir, workdir: join(dataDir, names[0]!) }), names };
}

describe('status over many hosts', () => {
  it('asks ssh -G about every host at once before connecting, not one after another', async () => {
    // The real ssh client behind a wrapper that notes when each `ssh -G` starts and ends (and holds it a moment).
    const bin = mkdtempSync(join(tmpdir(), 'glm-sshwrap-'));
    const log = join(bin, 'calls');
    writeFileSync(
      join(bin, 'ssh'),
      `#!/bin/sh\ncase " $* " in *" -G "*) echo start >> "${log}"; sleep 0.3; echo end >> "${log}" ;; esac\nPATH="${process.env.PATH}" exec ssh "$@"\n`,
    );
    chmodSync(join(bin, 'ssh'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    const { bot, names } = fleet(4);
    try {
      seedUnwatched(bot.app, names);
      const r = await bot.run('status --json');
      expect(r.exitCode, r.text).toBe(0);
      expect((JSON.parse(r.text) as { closedSinceLastLook: number[] }).closedSinceLastLook, r.text).toHaveLength(4);
      const calls = readFileSync(log, 'utf8').trim().split('\n');
      // All four were under way together: every start comes before the first end.
      expect(calls.slice(0, 4)).toEqual(['start', 'start', 'start', 'start']);
      expect(calls).toHaveLength(8);
    } finally {
      process.env.PATH = path;
      await bot.app.close();
    }
  });

  it('a passphrase-protected key works for every host and is decrypted once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-key-'));
    const key = join(dir, 'id_ed25519');
    keygen(key);
    // Re-encrypt the authorized key with a passphrase: the same key sshd already accepts.
    const { execFileSync } = await import('node:child_process');
    writeFileSync(key, readFileSync(shared.sshd.userKeyPath));
    chmodSync(key, 0o600);
    execFileSync('ssh-keygen', ['-q', '-p', '-N', 'open sesame', '-f', key]);
    process.env.GLM_TEST_KEY_PASS = 'open sesame';
    const { bot, names } = fleet(3, { key_file: key, key_passphrase_env: 'GLM_TEST_KEY_PASS' });
    try {
      seedUnwatched(bot.app, names);
      const r = await bot.run('status --json');
      expect(r.exitCode, r.text).toBe(0);
      expect((JSON.parse(r.text) as { closedSinceLastLook: number[] }).closedSinceLastLook).toHaveLength(3);
    } finally {
      delete process.env.GLM_TEST_KEY_PASS;
      await bot.app.close();
    }
    // The decrypted key is kept: the same key and passphrase give the same parsed key, without decrypting again.
    const { default: ssh2 } = await import('ssh2');
    const raw = readFileSync(key);
    const first = parsedKey(ssh2.utils.parseKey, raw, 'open sesame');
    expect(Buffer.isBuffer(first)).toBe(false);
    expect(parsedKey(ssh2.utils.parseKey, Buffer.from(raw), 'open sesame')).toBe(first);
    // A wrong passphrase is handed on as it is, for ssh2 to say it cannot decrypt the key.
    expect(parsedKey(ssh2.utils.parseKey, raw, 'wrong')).toBe(raw);
  });
});
