// Lifecycle over a real OpenSSH sshd on 127.0.0.1 against the SGLang stand-in: the way the bot drives a GPU host.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDirs, makeBot, type TestBot, testConfig, until } from '../helpers/app.ts';
import { freePort, groupMembers } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

function bot(env: Record<string, string> = {}, longLived = false): TestBot {
  return shared.bot({ env, longLived });
}

describe('launch', () => {
  it('shows the exact command in a dry run and starts nothing', async () => {
    const b = bot();
    const r = await b.run('launch small --dry-run');
    expect(r.exitCode).toBe(0);
    expect(r.text).toContain(
      '-m sglang.launch_server --model-path Qwen/Qwen2.5-0.5B-Instruct --tp-size 1 --host 127.0.0.1 --port 30000',
    );
    expect(b.app.engine.attempts.list()).toHaveLength(0);
  });

  it('launches to ready, records the attempt, probes and stops it', async () => {
    const b = bot();
    const r = await b.run(`launch small --port ${await freePort()}`);
    expect(r.text, b.said.join('\n')).toMatch(/^ready: attempt #1 \(small\)/);
    expect(b.said.join('\n')).toMatch(/loading weights/);
    expect(b.said.join('\n')).toMatch(/KV cache allocated/);
    const a = b.app.engine.attempts.get(1)!;
    expect(a).toMatchObject({ status: 'ready', actor: 'tester', host: 'gpu', profile: 'small', active: true });
    expect(a.pgid).toBeGreaterThan(1);
    expect(readFileSync(a.logPath!, 'utf8')).toContain('The server is fired up and ready to roll!');

    const p = await b.run('probe --json');
    const report = p.data as { health: { status: number }; serverInfo: { simulated?: boolean }; models: string[] };
    expect(report.health.status).toBe(200);
    expect(report.models.length).toBe(1);

    const s = await b.run('stop');
    expect(s.text).toMatch(/stopped attempt #1 \(small\) on gpu: it exited on SIGTERM/);
    expect(groupMembers(a.pgid!)).toEqual([]);
    expect(b.app.engine.attempts.get(1)).toMatchObject({ status: 'stopped', active: false });
  });

  it('refuses a second launch on GPUs that are held, naming who launched the holder', async () => {
    const b = bot();
    expect((await b.run(`launch small --gpus 3 --port ${await freePort()}`)).exitCode).toBe(0);
    const again = await b.run(`launch small --gpus 3 --port ${await freePort()}`);
    expect(again.exitCode).toBe(2);
    expect(again.text).toMatch(/GPU 3 on gpu: GPU 3 held by attempt #1 \(small\), launched by tester at \d{4}-/);
    expect(again.text).toMatch(/stop --attempt 1/);
    // The same port is refused too, whatever the GPUs: the ledger names the server on it.
    const port = b.app.engine.attempts.get(1)!.port;
    const samePort = await b.run(`launch small --gpus 4 --port ${port}`);
    expect(samePort.text).toMatch(new RegExp(`port ${port} on gpu is served by attempt #1 \\(small\\)`));
    expect(b.app.engine.attempts.list()).toHaveLength(1);
    await b.run('stop');
  });

  it('a second launch without named GPUs takes the next free one, and both run side by side', async () => {
    const b = bot();
    expect((await b.run(`launch small --port ${await freePort()}`)).exitCode).toBe(0);
    const second = await b.run(`launch small --port ${await freePort()}`);
    expect(second.exitCode, second.text).toBe(0);
    const [first, next] = b.app.engine.attempts.allActive();
    expect(first!.gpus).toBe('0');
    expect(next!.gpus).toBe('1');
    // The bot's choice reaches the server: CUDA_VISIBLE_DEVICES=1 on the command line that ran.
    expect(next!.commandLine).toMatch(/^CUDA_VISIBLE_DEVICES=1 /);
    const status = await b.run('status');
    expect(status.text).toMatch(/#1 +small .* 0 +tester/);
    expect(status.text).toMatch(/#2 +small .* 1 +tester/);
    // --host is ambiguous now: the bot says which servers there are instead of guessing.
    const ambiguous = await b.run('stop');
    expect(ambiguous.text).toMatch(/gpu runs 2 servers: #1 \(small, GPUs 0.*#2 \(small, GPUs 1/);
    expect((await b.run('stop --attempt 2')).text).toMatch(/stopped attempt #2/);
    expect(b.app.engine.attempts.leasesOn('gpu')).toEqual([{ gpu: 0, attemptId: 1 }]);
    await b.run('stop');
  });

  it('concurrent launches without named GPUs each get their own: the one that loses a race chooses again', async () => {
    const b = bot();
    const ports = [await freePort(), await freePort(), await freePort()];
    const results = await Promise.all(ports.map((p) => b.run(`launch small --no-check --port ${p}`)));
    expect(results.map((r) => r.exitCode)).toEqual([0, 0, 0]);
    const held = b.app.engine.attempts.allActive().map((a) => a.gpus);
    expect([...held].sort()).toEqual(['0', '1', '2']);
    for (const a of b.app.engine.attempts.allActive()) await b.run(`stop --attempt ${a.id}`);
  });

  it('ten concurrent launches on one host start exactly one server', async () => {
    const b = bot();
    const port = await freePort();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => b.run(`launch small --no-check --port ${port}`)),
    );
    expect(results.filter((r) => r.exitCode === 0)).toHaveLength(1);
    expect(b.app.engine.attempts.list()).toHaveLength(1);
    const runs = execFileSync('ls', [join(b.workdir, 'runs')], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(runs).toHaveLength(1);
    await b.run('stop');
  });

  it('kills a server that ignores SIGTERM: no process of the group survives', async () => {
    const b = bot({ STANDIN_IGNORE_SIGTERM: '1' });
    expect((await b.run(`launch small --port ${await freePort()}`)).exitCode).toBe(0);
    const a = b.app.engine.attempts.activeOn('gpu')!;
    expect(groupMembers(a.pgid!).length).toBeGreaterThan(1);
    const s = await b.run('stop');
    expect(s.text).toMatch(/ignored SIGTERM and was killed with SIGKILL/);
    expect(groupMembers(a.pgid!)).toEqual([]);
  });
});

describe('not ready in time', () => {
  it('a server not ready after ready_s is left running, keeps its GPUs, and can be stopped by attempt', async () => {
    const b = bot({ STANDIN_SCENARIO: 'stall:weight_load' });
    b.app.engine.loaded.config.timeouts.ready_s = 2;
    const r = await b.run(`launch small --gpus 2 --port ${await freePort()}`);
    expect(r.exitCode).toBe(1);
    expect(r.text).toMatch(/^not ready after 2 s \(timeouts\.ready_s\): attempt #1 is left running and keeps its GPUs/);
    const a = b.app.engine.attempts.get(1)!;
    expect(a.active).toBe(true);
    expect(groupMembers(a.pgid!).length).toBeGreaterThan(0);
    expect(b.app.engine.attempts.leasesOn('gpu')).toEqual([{ gpu: 2, attemptId: 1 }]);
    expect(b.app.engine.attempts.events(1).map((e) => e.kind)).toContain('ready_timeout');
    // Its GPU is still taken: a launch on it is refused naming it.
    expect((await b.run(`launch small --gpus 2 --port ${await freePort()}`)).text).toMatch(/GPU 2 held by attempt #1/);
    expect((await b.run('stop --attempt 1')).text).toMatch(/stopped attempt #1 \(small\) on gpu/);
    expect(groupMembers(a.pgid!)).toEqual([]);
    expect(b.app.engine.attempts.leasesOn('gpu')).toEqual([]);
  });
});

describe('crashes', () => {
  // The seeds' attempts, as the stand-in fails them: class and phase come from the catalog-driven classifier.
  const cases: Array<[string, string, string, RegExp]> = [
    ['glm5-attempt1', 'cuda_oom', 'cuda_graph_capture', /out of memory/i],
    ['glm5-attempt3', 'backend_assertion', 'cuda_graph_capture', /nsa_kv_cache_store_fp8|AssertionError/],
    ['glm5-nvfp4', 'nan_in_sampling', 'decode', /probability tensor contains either/],
  ];
  for (const [profile, category, phase, root] of cases) {
    it(`${profile}: ${category} during ${phase}, with its root line, recorded`, async () => {
      const b = bot();
      const r = await b.run(`launch ${profile} --yes --port ${await freePort()}`);
      expect(r.exitCode, b.said.join('\n')).toBe(1);
      expect(r.text).toContain(`${category} during ${phase}`);
      const a = b.app.engine.attempts.list()[0]!;
      expect(a.status).toBe('crashed');
      expect(a.active).toBe(false);
      expect(a.exitCode).not.toBe(0);
      const d = a.classification as {
        category: string;
        phase: string;
        evidence: Array<{ line: number; text: string }>;
      };
      expect(d).toMatchObject({ category, phase });
      expect(d.evidence.some((e) => root.test(e.text))).toBe(true);
      // The root line is really at that line of the log on the host.
      const log = readFileSync(a.logPath!, 'utf8').split('\n');
      const first = d.evidence[0]!;
      expect(log[first.line - 1]?.replace(/\r/g, '')).toContain(first.text.slice(0, 40));
    });
  }
});

describe('restarts and failures', () => {
  it('a restarted bot still knows what runs where', async () => {
    const dirs = freshDirs();
    const cfg = testConfig(shared.sshd, dirs);
    const first = shared.keep(makeBot(cfg, dirs));
    expect((await first.run(`launch small --port ${await freePort()}`)).exitCode).toBe(0);
    await first.app.close();
    const second = shared.keep(makeBot(cfg, dirs));
    const st = await second.run('status --json');
    expect((st.data as Array<{ host: string; state: string; profile: string }>)[0]).toMatchObject({
      host: 'gpu',
      state: 'ready',
      profile: 'small',
    });
    expect((await second.run('stop')).text).toMatch(/stopped attempt #1/);
  });

  it('hostile arguments never reach a shell: the canary file never appears', async () => {
    const b = bot();
    const canary = join(b.workdir, 'pwned');
    for (const v of [
      `$(touch ${canary})`,
      `\`touch ${canary}\``,
      `x; touch ${canary}`,
      `'; touch ${canary}; '`,
      `a\ntouch ${canary}`,
    ]) {
      const r = await b.run(`launch ${JSON.stringify(v)} --host gpu`);
      expect(r.exitCode).toBe(2);
      const r2 = await b.run(`logs --host ${JSON.stringify(v)}`);
      expect(r2.exitCode).toBe(2);
      // The fleet's new inputs: GPU lists, host lists and host groups.
      expect((await b.run(`launch small --gpus ${JSON.stringify(v)}`)).exitCode).toBe(2);
      expect((await b.run(`launch small --host ${JSON.stringify(`gpu,${v}`)}`)).exitCode).toBe(2);
      expect((await b.run(`stop --attempt ${JSON.stringify(v)}`)).exitCode).toBe(2);
    }
    expect(b.app.engine.attempts.list()).toHaveLength(0);
    expect(existsSync(canary)).toBe(false);
  });

  it('sshd killed mid-launch: a clear error, nothing launched twice, the ledger consistent', async () => {
    const b = bot({ STANDIN_TIME_SCALE: '0.05' });
    const pending = b.run(`launch small --no-check --port ${await freePort()}`);
    // Kill sshd once the server is loading: the launch is past the point of no return. (A bound, not a timing: a
    // loaded machine takes seconds to get there, and killing it earlier fails the launch itself, a different case.)
    await until(() => b.app.engine.attempts.activeOn('gpu')?.status === 'loading', 20_000);
    await shared.sshd.stop();
    await new Promise((r) => setTimeout(r, 300));
    await shared.sshd.start();
    const r = await pending;
    // The follower resumes over a new connection: the launch still ends in one outcome for one attempt.
    expect(b.app.engine.attempts.list()).toHaveLength(1);
    expect(['ready', 'crashed']).toContain(b.app.engine.attempts.list()[0]!.status);
    expect(r.text).toMatch(/ready|error/);
    await b.run('stop');
  });
});
