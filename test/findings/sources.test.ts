// Loading and re-indexing: local files through fs, "remote" files through a real shell on this machine
// (createLocalHost runs argv with spawn, the same seam the SSH host implements).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { createFindingsIndex, remoteArgv } from '../../src/findings/index.ts';
import { createLocalHost } from '../../src/hosts/local.ts';
import type { RemoteHost } from '../../src/hosts/types.ts';

const dir = mkdtempSync(join(tmpdir(), 'glm-findings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function manualClock(start = 1_000_000): Clock & { advance(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    sleep: async () => {},
    advance(ms) {
      t += ms;
    },
  };
}

/** The real local host, with every argv recorded (and HOME pointed somewhere harmless when asked). */
function recordingHost(home?: string): RemoteHost & { calls: string[][] } {
  const real = createLocalHost('gpu-test');
  const calls: string[][] = [];
  return {
    ...real,
    calls,
    exec(argv, opts) {
      calls.push([...argv]);
      return real.exec(home ? ['env', `HOME=${home}`, ...argv] : argv, opts);
    },
  };
}

const v1 = '# Notes\n\n## Alpha crash\nThe alpha kernel fails on SM120.\n';
const v2 = '# Notes\n\n## Beta crash\nThe beta kernel fails on SM120 with a longer line.\n';

describe('local source', () => {
  it('re-indexes when the file changes, at most once per check interval', async () => {
    const file = join(dir, 'local.md');
    writeFileSync(file, v1);
    const clock = manualClock();
    const idx = createFindingsIndex([{ name: 'team', path: file }], { clock, checkIntervalMs: 5000 });
    expect((await idx.search('alpha'))[0]?.headingPath).toEqual(['Alpha crash']);

    writeFileSync(file, v2);
    clock.advance(4999);
    expect(await idx.search('beta')).toEqual([]); // not checked yet: still the old copy
    expect((await idx.search('alpha')).length).toBe(1);

    clock.advance(1);
    expect((await idx.search('beta'))[0]?.headingPath).toEqual(['Beta crash']);
    expect(await idx.search('alpha')).toEqual([]);
    expect(idx.status()).toEqual([{ name: 'team', path: file, sections: 2, loadedAt: 1_005_000 }]);
  });

  it('refresh() checks now, whatever the interval', async () => {
    const file = join(dir, 'refresh.md');
    writeFileSync(file, v1);
    const idx = createFindingsIndex([{ name: 'team', path: file }], { clock: manualClock(), checkIntervalMs: 60_000 });
    await idx.search('alpha');
    writeFileSync(file, v2);
    await idx.refresh();
    expect((await idx.search('beta')).length).toBe(1);
  });

  it('resolves relative paths against baseDir', async () => {
    writeFileSync(join(dir, 'rel.md'), v1);
    const idx = createFindingsIndex([{ name: 'team', path: 'rel.md' }], { baseDir: dir });
    expect((await idx.search('alpha')).length).toBe(1);
  });

  it('a missing source is reported, and the others still answer', async () => {
    const good = join(dir, 'good.md');
    writeFileSync(good, v1);
    const idx = createFindingsIndex([
      { name: 'gone', path: join(dir, 'nope.md') },
      { name: 'team', path: good },
    ]);
    const ex = await idx.search('alpha');
    expect(ex.map((e) => e.source)).toEqual(['team']);
    const [gone, team] = idx.status();
    expect(gone!.error).toMatch(/ENOENT/);
    expect(gone!.sections).toBe(0);
    expect(team!.error).toBeUndefined();
  });

  it('keeps the last good copy when the file disappears, and clears the error when it comes back', async () => {
    const file = join(dir, 'flaky.md');
    writeFileSync(file, v1);
    const clock = manualClock();
    const idx = createFindingsIndex([{ name: 'team', path: file }], { clock, checkIntervalMs: 1000 });
    await idx.search('alpha');
    rmSync(file);
    clock.advance(1000);
    expect((await idx.search('alpha')).length).toBe(1);
    expect(idx.status()[0]!.error).toMatch(/ENOENT/);
    writeFileSync(file, v2);
    clock.advance(1000);
    expect((await idx.search('beta')).length).toBe(1);
    expect(idx.status()[0]!.error).toBeUndefined();
  });

  it('refuses a file over the size limit', async () => {
    const file = join(dir, 'big.md');
    writeFileSync(file, `# Big\n${'x'.repeat(2000)}\n`);
    const idx = createFindingsIndex([{ name: 'big', path: file }], { maxBytes: 1000 });
    expect(await idx.search('big')).toEqual([]);
    expect(idx.status()[0]!.error).toMatch(/limit/);
  });
});

describe('remote source (argv through RemoteHost.exec)', () => {
  it('loads with cat, checks with stat, re-reads only after a change', async () => {
    const file = join(dir, 'remote.md');
    writeFileSync(file, v1);
    const host = recordingHost();
    const clock = manualClock();
    const idx = createFindingsIndex([{ name: 'gpu', path: file, host }], { clock, checkIntervalMs: 10_000 });

    expect((await idx.search('alpha'))[0]?.file).toBe(file);
    expect(host.calls).toEqual([
      ['stat', '-c', '%Y:%s', '--', file],
      ['cat', '--', file],
    ]);

    await idx.search('alpha'); // within the interval: no exec at all
    expect(host.calls.length).toBe(2);

    clock.advance(10_000);
    await idx.search('alpha'); // checked, unchanged: stat only
    expect(host.calls.length).toBe(3);

    writeFileSync(file, v2); // a different size, so the change shows even within the same second
    clock.advance(10_000);
    expect((await idx.search('beta'))[0]?.headingPath).toEqual(['Beta crash']);
    expect(host.calls.slice(3).map((c) => c[0])).toEqual(['stat', 'cat']);
    expect(idx.status()[0]).toMatchObject({ name: 'gpu', host: 'gpu-test', sections: 2 });
  });

  it('expands ~/ on the host, passing the path only as an argument', async () => {
    const home = join(dir, 'home');
    mkdirSync(join(home, 'glm-kimi-sm120-rtx6000bw'), { recursive: true });
    writeFileSync(join(home, 'glm-kimi-sm120-rtx6000bw', 'FINDINGS.md'), v1);
    const host = recordingHost(home);
    const path = '~/glm-kimi-sm120-rtx6000bw/FINDINGS.md';
    const idx = createFindingsIndex([{ name: 'gpu', path, host }]);
    expect((await idx.search('alpha')).length).toBe(1);
    expect(host.calls[1]).toEqual(remoteArgv('cat', path));
    expect(host.calls[1]!.slice(0, 2)).toEqual(['sh', '-c']);
    expect(host.calls[1]!.slice(3)).toEqual(['glm-cat', path]);
  });

  it('a path with shell characters stays a path', async () => {
    const odd = join(dir, "it's $(id) `x`.md");
    writeFileSync(odd, v1);
    const idx = createFindingsIndex([{ name: 'gpu', path: odd, host: recordingHost() }]);
    expect((await idx.search('alpha')).length).toBe(1);
    const home = join(dir, 'home2');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "a'b $HOME.md"), v1);
    const tilde = createFindingsIndex([{ name: 'gpu', path: "~/a'b $HOME.md", host: recordingHost(home) }]);
    expect((await tilde.search('alpha')).length).toBe(1);
  });

  it('reports a file that is not there with the host and exit status', async () => {
    const idx = createFindingsIndex([{ name: 'gpu', path: join(dir, 'absent.md'), host: recordingHost() }]);
    expect(await idx.search('alpha')).toEqual([]);
    expect(idx.status()[0]!.error).toMatch(/cannot read .*absent\.md on gpu-test/);
  });

  it('refuses a remote file over the size limit', async () => {
    const file = join(dir, 'remote-big.md');
    writeFileSync(file, `# Big\n${'x'.repeat(2000)}\n`);
    const idx = createFindingsIndex([{ name: 'gpu', path: file, host: recordingHost() }], { maxBytes: 1000 });
    expect(await idx.search('big')).toEqual([]);
    expect(idx.status()[0]!.error).toMatch(/limit/);
  });
});
