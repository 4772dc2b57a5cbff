// Environment capture over a real sshd against the stand-in: check_env's own output when it runs, the equivalent
// facts when it does not, kept in the ledger per host and SGLang version so later launches cost nothing.
import { chmodSync, chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureEnvironment } from '../../src/lifecycle/env.ts';
import { freshDirs, STANDIN, type TestBot } from '../helpers/app.ts';
import { ledgerDb } from '../helpers/ledger.ts';
import { testUser } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

/** A host Python that is the stand-in, except as the script says (e.g. without sglang.check_env). */
function pythonWrapper(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\nexec ${join(STANDIN, 'python')} "$@"\n`);
  chmodSync(path, 0o755);
  const u = testUser();
  chownSync(path, u.uid, u.gid);
  return path;
}

function bot(dirs: { workdir: string; dataDir: string }, python?: string): TestBot {
  return shared.bot({
    dirs,
    edit: (loaded) => {
      if (python) loaded.config.hosts.gpu!.python = python;
    },
  });
}

const rows = (b: TestBot) =>
  ledgerDb(b.app.engine).prepare('SELECT host, sglang_version, source FROM environments ORDER BY id').all();

describe('captureEnvironment', () => {
  it("keeps check_env's own output, once per host and SGLang version, and links it to attempts", async () => {
    const dirs = freshDirs();
    const b = bot(dirs);
    const first = await captureEnvironment(b.app.engine, 'gpu');
    expect(first.source).toBe('check_env');
    expect(first.sglangVersion).toBe('0.5.8+standin');
    expect(first.text).toMatch(/^Python: 3\.12\.3 /);
    expect(first.text).toContain('PyTorch: 2.9.1+cu128');
    expect(first.text).toContain('NVIDIA Topology: \n\tGPU0\tGPU1');
    expect(first.facts).toMatchObject({
      python: '3.12.3',
      cuda: '12.8',
      driver: '570.172.08',
      computeCapability: '12.0',
      arch: 'sm120',
      torch: '2.9.1+cu128',
      gpus: [{ ids: [0, 1, 2, 3, 4, 5, 6, 7], name: 'NVIDIA RTX PRO 6000 Blackwell Server Edition' }],
    });
    expect(first.facts.packages).toMatchObject({
      sglang: '0.5.8+standin',
      sgl_kernel: '0.3.21',
      flashinfer_python: '0.6.3',
      transformers: '5.2.0',
      triton: '3.5.1',
    });
    expect(first.facts.topology?.split('\n')).toHaveLength(9);

    // Cached: the same row, without asking the host again (a new bot on the same ledger, so not a memory cache).
    const again = bot(dirs);
    const attempt = again.app.engine.attempts.open({
      host: 'gpu',
      profile: 'small',
      profileJson: '{}',
      flags: {},
      argv: [],
      env: {},
      commandLine: '',
      port: 1,
      actor: 'tester',
      origin: 'terminal',
      startedAt: Date.now(),
    });
    const host = again.app.engine.pool.get('gpu');
    const ran: string[] = [];
    const exec = host.exec.bind(host);
    host.exec = (argv, opts) => {
      ran.push(argv[3] ?? argv[0]!);
      return exec(argv, opts);
    };
    const second = await captureEnvironment(again.app.engine, 'gpu', { attemptId: attempt.id });
    // Only the (per-connection) version read went to the host; the environment came from the ledger.
    expect(ran).toEqual(['glm-versions']);
    expect(second.id).toBe(first.id);
    expect(second.capturedAt).toBe(first.capturedAt);
    expect(rows(again)).toEqual([{ host: 'gpu', sglang_version: '0.5.8+standin', source: 'check_env' }]);
    const link = ledgerDb(again.app.engine).prepare('SELECT * FROM attempt_environments').all();
    expect(link).toEqual([{ attempt_id: attempt.id, environment_id: first.id }]);
    // An attempt the ledger does not know leaves the report unlinked, and nothing throws.
    expect((await captureEnvironment(again.app.engine, 'gpu', { attemptId: 999 })).id).toBe(first.id);

    // Another SGLang version on the same host is another environment.
    const newer = pythonWrapper(dirs.workdir, 'python-new', 'STANDIN_SGLANG_FLAVOR=new; export STANDIN_SGLANG_FLAVOR');
    const c = bot(dirs, newer);
    const third = await captureEnvironment(c.app.engine, 'gpu');
    expect(third.sglangVersion).toBe('0.5.15+standin');
    expect(third.id).not.toBe(first.id);
    expect(third.facts.packages['sglang-kernel']).toBe('0.3.21');
    expect(rows(c)).toHaveLength(2);
  });

  it('collects the same facts itself when check_env does not run, and says why', async () => {
    const dirs = freshDirs();
    const py = pythonWrapper(
      dirs.workdir,
      'python-old',
      'if [ "$1" = -m ] && [ "$2" = sglang.check_env ]; then echo "/usr/bin/python3: No module named sglang.check_env" >&2; exit 1; fi',
    );
    const b = bot(dirs, py);
    const r = await captureEnvironment(b.app.engine, 'gpu');
    expect(r.source).toBe('fallback');
    expect(r.problem).toBe(
      'python -m sglang.check_env failed (exit 1): /usr/bin/python3: No module named sglang.check_env',
    );
    const lines = r.text.split('\n');
    expect(lines.slice(0, 5)).toEqual([
      'Python: 3.12.3',
      'CUDA available: True',
      'GPU 0,1,2,3,4,5,6,7: NVIDIA RTX PRO 6000 Blackwell Server Edition',
      'GPU 0,1,2,3,4,5,6,7 Compute Capability: 12.0',
      expect.stringMatching(/^(NVCC: .*release|CUDA Driver Version: 570\.172\.08)/),
    ]);
    expect(r.text).toContain('CUDA Driver Version: 570.172.08');
    expect(r.text).toContain('PyTorch: 2.9.1+cu128');
    expect(r.text).toContain('sglang: 0.5.8+standin');
    expect(r.text).toContain('flashinfer: Module Not Found');
    expect(r.text).toMatch(/NVIDIA Topology: \n\tGPU0\tGPU1/);
    expect(r.facts).toMatchObject({ arch: 'sm120', torch: '2.9.1+cu128', cuda: expect.stringMatching(/^12\.8|\d/) });
    expect(rows(b)).toEqual([{ host: 'gpu', sglang_version: '0.5.8+standin', source: 'fallback' }]);
  });

  it('never throws: an unreachable host gives an unavailable report, which is not kept', async () => {
    const b = shared.bot({
      edit: (loaded) => {
        loaded.config.hosts.gpu!.ssh!.port = 1;
      },
    });
    const r = await captureEnvironment(b.app.engine, 'gpu');
    expect(r.source).toBe('unavailable');
    expect(r.problem).toMatch(/cannot reach|ECONNREFUSED/);
    expect(rows(b)).toEqual([]);
    expect((await captureEnvironment(b.app.engine, 'nowhere')).problem).toMatch(/unknown host 'nowhere'/);
  });
});
