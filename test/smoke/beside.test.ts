// A smoke that launches a profile beside a running server of the same profile (issue 17, item 21): the fresh launch
// takes free GPUs and a free port, as `launch` plans them, and leaves the running server alone; when no GPUs are
// free, the running server is smoked and the report says so; --port picks the port (launch mode) or the server
// (running mode). A real sshd; the stand-in on its host.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';
import { profilesWith, type SmokeBot, smokeBot } from './helpers.ts';

const shared = sshdWithBots();
let profiles: string;
let profilePort: number;
const bots: SmokeBot[] = [];
function bot(opts: Parameters<typeof smokeBot>[1] = {}): SmokeBot {
  const b = smokeBot(shared, { profilesDir: profiles, ...opts });
  bots.push(b);
  return b;
}

interface SmokeData {
  verdict: string;
  mode: string;
  attemptId: number | null;
  passed: number;
  total: number;
}

beforeAll(async () => {
  // The profile's own port is one nobody else on this machine uses, so the clash is only with its own server; below
  // the ephemeral range, so the free ports above it the smoke moves to are not another test's.
  profilePort = await freePort([25000, 29000]);
  profiles = profilesWith({ 'small-here': `extends: small\nport: ${profilePort}\n` });
});
// Every test starts with the profile's port free: what a test launched is stopped after it, pass or fail.
afterEach(async () => {
  for (const b of bots)
    for (const a of b.app.engine.attempts.allActiveOn('gpu')) await b.run(`stop --attempt ${a.id}`).catch(() => {});
});

describe('smoke --launch beside a running server of the same profile', () => {
  it('launches on free GPUs and a free port, says which, and leaves the running server alone', async () => {
    const b = bot();
    const l = await b.run('launch small-here');
    expect(l.exitCode, l.text).toBe(0);
    const running = b.app.engine.attempts.get(1)!;
    expect(running).toMatchObject({ port: profilePort, gpus: '0', status: 'ready' });

    const r = await b.run('smoke --profile small-here --launch');
    const d = r.data as SmokeData;
    expect(r.exitCode, r.text).toBe(0);
    expect(d).toMatchObject({ verdict: 'pass', mode: 'launch', attemptId: 2 });
    const fresh = b.app.engine.attempts.get(2)!;
    expect(fresh.port).not.toBe(profilePort);
    expect(fresh.gpus).toBe('1');
    expect(fresh).toMatchObject({ status: 'stopped', active: false });
    expect(r.text).toMatch(
      new RegExp(
        `port ${profilePort} on gpu is served by attempt #1 \\(small-here\\).*: launched on port ${fresh.port}`,
      ),
    );
    expect(r.text).toMatch(/stopped attempt #2 after the smoke/);
    // The running server still serves, on its own GPU and port.
    expect(b.app.engine.attempts.get(1)).toMatchObject({ status: 'ready', active: true });
    const h = await b.app.engine.pool.get('gpu').http(profilePort, { method: 'GET', path: '/health', timeoutMs: 5000 });
    expect(h.status).toBe(200);

    // --port: the fresh launch serves there.
    const want = await freePort();
    const p = await b.run(`smoke --profile small-here --launch --port ${want}`);
    expect(p.exitCode, p.text).toBe(0);
    expect(b.app.engine.attempts.get((p.data as SmokeData).attemptId!)).toMatchObject({ port: want, gpus: '1' });
    expect(p.text).not.toMatch(/launched on port/);

    // --port naming the running server's port is refused as `launch --port` is, naming the holder.
    const clash = await b.run(`smoke --profile small-here --launch --port ${profilePort}`);
    expect(clash.exitCode).toBe(2);
    expect(clash.text).toMatch(new RegExp(`port ${profilePort} on gpu is served by attempt #1`));
    expect(b.app.engine.attempts.get(1)).toMatchObject({ status: 'ready', active: true });
  });

  it('with no GPU free for a fresh launch, smokes the running server and says so', async () => {
    const b = bot({ env: { STANDIN_NUM_GPUS: '1' } });
    const l = await b.run('launch small-here');
    expect(l.exitCode, l.text).toBe(0);
    const r = await b.run('smoke --profile small-here --launch');
    const d = r.data as SmokeData;
    expect(r.exitCode, r.text).toBe(0);
    expect(d).toMatchObject({ verdict: 'pass', mode: 'running', attemptId: 1 });
    expect(r.text).toMatch(
      /not a fresh launch: gpu has 0 free GPUs of 1; this launch needs 1: .*attempt #1.*: smoked the running attempt #1 instead/,
    );
    expect(b.app.engine.attempts.list()).toHaveLength(1);
    expect(b.app.engine.attempts.get(1)).toMatchObject({ status: 'ready', active: true });
  });

  it('--port picks which running server to smoke', async () => {
    const b = bot();
    const other = await freePort();
    expect((await b.run('launch small-here')).exitCode).toBe(0);
    expect((await b.run(`launch small --port ${other}`)).exitCode).toBe(0);
    const r = await b.run(`smoke --port ${profilePort}`);
    expect(r.exitCode, r.text).toBe(0);
    expect(r.data as SmokeData).toMatchObject({ mode: 'running', attemptId: 1 });
    expect(r.text).toMatch(/attempt #1 \(small-here\)/);
    const none = await b.run('smoke --port 1');
    expect(none.exitCode).toBe(2);
    expect(none.text).toMatch(
      /nothing this bot started serves on port 1 of gpu: attempt #1 \(small-here\) on port \d+, attempt #2 \(small\) on port \d+/,
    );
  });
});
