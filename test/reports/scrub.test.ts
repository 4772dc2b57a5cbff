// What goes to a public tracker: no tokens, no home directories, no private addresses or host names.
import { describe, expect, it } from 'vitest';
import { createScrubber, scrub } from '../../src/reports/scrub.ts';

describe('report scrubbing', () => {
  it('removes tokens by shape and by name', () => {
    const token = `hf_${'abcdefghijklmnopqrstuvwxyzABCDEFGH'}`;
    expect(scrub(`export HF_TOKEN=${token}`)).toBe('export HF_TOKEN=[REDACTED]');
    expect(scrub(`login with ${token} now`)).toBe('login with [REDACTED] now');
    expect(scrub(`x --api-key sk-${'a'.repeat(30)}`)).not.toContain('aaaa');
  });

  it('turns home directories into ~, wherever they appear, and keeps the rest of the path', () => {
    expect(scrub('File "/home/alice/sglang/python/sglang/srt/x.py", line 3')).toBe(
      'File "~/sglang/python/sglang/srt/x.py", line 3',
    );
    expect(scrub('HF_HOME=/home/alice/.cache /Users/bob/models /root/.cache')).toBe(
      'HF_HOME=~/.cache ~/models ~/.cache',
    );
    expect(scrub('/data/home/carol/w')).toBe('/data~/w');
    expect(scrub('/sgl-workspace/root/x and /usr/lib/x')).toBe('/sgl-workspace/root/x and /usr/lib/x');
  });

  it('hides private addresses and keeps loopback and public ones', () => {
    expect(scrub('--dist-init-addr 192.168.41.7:20000 10.0.3.4 172.20.1.1 100.101.2.3 169.254.1.2')).toBe(
      '--dist-init-addr PRIVATE_IP:20000 PRIVATE_IP PRIVATE_IP PRIVATE_IP PRIVATE_IP',
    );
    expect(scrub('--host 127.0.0.1 0.0.0.0 8.8.8.8 172.32.0.1')).toBe('--host 127.0.0.1 0.0.0.0 8.8.8.8 172.32.0.1');
    expect(scrub('fd12:3456::1 and fe80::1ff:fe23:4567:890a')).toBe('PRIVATE_IP and PRIVATE_IP');
    expect(scrub('mail alice@example.com')).toBe('mail EMAIL');
  });

  it('hides the configured GPU host names, but not loopback names or parts of words', () => {
    const s = createScrubber({ hostNames: ['gpu-box', 'localhost', '127.0.0.1'] });
    expect(s('ssh gpu-box; gpu-box.lan; my-gpu-boxes; localhost')).toBe(
      'ssh GPU_HOST; GPU_HOST.lan; my-gpu-boxes; localhost',
    );
  });
});
