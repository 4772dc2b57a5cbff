// Issue 12 item 8: known_hosts lines the bot cannot check (security-key types ssh2 does not support) are skipped
// with a warning, never a reason to refuse a host another line pins; against a real sshd on 127.0.0.1.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RemoteError } from '../../src/errors.ts';
import { createSshHost, type SshTarget } from '../../src/hosts/ssh.ts';
import { freshDirs, makeBot, testConfig } from '../helpers/app.ts';
import { sshTarget } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

/** An SSH wire-format public key blob: each part as a length-prefixed string. */
function blob(...parts: (string | Buffer)[]): string {
  return Buffer.concat(
    parts.flatMap((p) => {
      const b = typeof p === 'string' ? Buffer.from(p) : p;
      const len = Buffer.alloc(4);
      len.writeUInt32BE(b.length);
      return [len, b];
    }),
  ).toString('base64');
}

// The two FIDO (security key) host key types OpenSSH writes (PROTOCOL.u2f): ssh2 can verify neither.
const skEd25519 = () => `sk-ssh-ed25519@openssh.com ${blob('sk-ssh-ed25519@openssh.com', randomBytes(32), 'ssh:')}`;
const skEcdsa = () =>
  `sk-ecdsa-sha2-nistp256@openssh.com ${blob('sk-ecdsa-sha2-nistp256@openssh.com', 'nistp256', Buffer.concat([Buffer.from([4]), randomBytes(64)]), 'ssh:')}`;

function knownHosts(lines: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'glm-kh-')), 'known_hosts');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function target(knownHostsPath: string, warnings: string[]): SshTarget {
  return sshTarget(shared.sshd, { knownHostsPath, warn: (text) => warnings.push(text) });
}

describe('known_hosts lines of a type the bot cannot check', () => {
  it('are skipped with a warning when another line pins the right key', async () => {
    const name = `[127.0.0.1]:${shared.sshd.port}`;
    const file = knownHosts([`${name} ${skEd25519()}`, `${name} ${skEcdsa()}`, `${name} ${shared.sshd.hostKeyPub}`]);
    const warnings: string[] = [];
    const h = createSshHost(target(file, warnings));
    expect((await h.exec(['echo', 'pinned'])).stdout).toBe('pinned\n');
    await h.close();
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `${file}:1: skipped the sk-ssh-ed25519@openssh\\.com key for \\[127\\.0\\.0\\.1\\]:${shared.sshd.port}`,
        ),
      ),
      expect.stringMatching(/:2: skipped the sk-ecdsa-sha2-nistp256@openssh\.com key .* security-key host keys/),
    ]);
  });

  it('alone, they say so: the host is not pinned by a key the bot can check', async () => {
    const name = `[127.0.0.1]:${shared.sshd.port}`;
    const file = knownHosts([`${name} ${skEd25519()}`]);
    const h = createSshHost(target(file, []));
    const err = (await h.exec(['true']).catch((e: unknown) => e)) as RemoteError;
    await h.close();
    expect(err).toBeInstanceOf(RemoteError);
    expect(err.details.kind).toBe('host-key');
    expect(err.message).toMatch(/not known: it presented SHA256:\S+ \(ssh-ed25519\)/);
    expect(err.message).toMatch(/pins it only with sk-ssh-ed25519@openssh\.com, a key type the bot cannot check/);
    expect(err.details.hint).toMatch(/adding this line/);
  });

  it("the bot's own host pool logs the skipped line and uses the host", async () => {
    const name = `[127.0.0.1]:${shared.sshd.port}`;
    const file = knownHosts([`${name} ${skEd25519()}`, `${name} ${shared.sshd.hostKeyPub}`]);
    const d = freshDirs();
    const loaded = testConfig(shared.sshd, d);
    loaded.config.hosts.gpu!.ssh!.known_hosts = file;
    const b = makeBot(loaded, d);
    expect((await b.run('check')).text).toMatch(/reachable/i);
    const warned = b.logLines.map((l) => JSON.parse(l)).filter((l) => /skipped the sk-ssh-ed25519/.test(l.msg));
    expect(warned[0]).toMatchObject({ level: 40, host: 'gpu' });
    await b.app.engine.pool.closeAll();
  });
});
