// Flag choices from the host's own SGLang, on real parts: a loopback sshd whose host runs the stand-in as its
// Python, behind a wrapper that counts the `--help` runs it sees (so a cache hit is observed on the host, not
// inferred), a data directory that outlives the bot, and hosts whose Python or SGLang fails.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freshDirs, STANDIN } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

/** A python on the host that records each --help it is asked, then is the stand-in (or fails `--help`). */
function countingPython(
  workdir: string,
  opts: { failHelp?: boolean; failAll?: boolean; newer?: boolean; extraChoices?: string } = {},
): string {
  const path = join(workdir, 'python');
  // The SGLang the host has: every use of its python sees the same one (version, --help and launches alike).
  const flavor =
    (opts.newer ? 'STANDIN_SGLANG_FLAVOR=new; export STANDIN_SGLANG_FLAVOR\n' : '') +
    (opts.extraChoices ? `STANDIN_EXTRA_CHOICES='${opts.extraChoices}'; export STANDIN_EXTRA_CHOICES\n` : '');
  const body = opts.failAll
    ? 'echo "python3: error while loading shared libraries: libpython3.12.so.1.0: cannot open shared object file" >&2\nexit 127\n'
    : `for a in "$@"; do if [ "$a" = --help ]; then echo help >> "${workdir}/help-runs"; ${
        opts.failHelp
          ? `printf 'Traceback (most recent call last):\\n  File "<frozen runpy>", line 198, in _run_module_as_main\\nModuleNotFoundError: No module named %s\\n' "'torch'" >&2; exit 1;`
          : ''
      } fi; done\nexec "${join(STANDIN, 'python')}" "$@"\n`;
  writeFileSync(path, `#!/bin/sh\n${flavor}${body}`);
  chmodSync(path, 0o755);
  return path;
}

const helpRuns = (workdir: string) => {
  try {
    return readFileSync(join(workdir, 'help-runs'), 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
};

/** Profiles of the test: one whose values only newer SGLang releases take, one with a misspelt extra flag. */
const small = 'model_path: Qwen/Qwen2.5-0.5B-Instruct\ntp: 1\n';
function profilesDir(files?: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'glm-profiles-'));
  if (files) {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, `${name}.yaml`), text);
    return dir;
  }
  writeFileSync(join(dir, 'tiny.yaml'), `description: fits the stand-in\n${small}`);
  writeFileSync(join(dir, 'tiny-nvfp4-kv.yaml'), `description: an NVFP4 KV cache\n${small}kv_cache_dtype: nvfp4\n`);
  writeFileSync(join(dir, 'tiny-typo.yaml'), `description: a typo\n${small}extra_args: [--enable-metrcs]\n`);
  return dir;
}

function bot(
  opts: {
    failHelp?: boolean;
    failAll?: boolean;
    newer?: boolean;
    extraChoices?: string;
    profiles?: Record<string, string>;
    dirs?: ReturnType<typeof freshDirs>;
    /** An ssh port nothing listens on: the host cannot be reached. */
    sshPort?: number;
  } = {},
) {
  const dirs = opts.dirs ?? freshDirs();
  const b = shared.bot({
    dirs,
    edit: (loaded) => {
      const gpu = loaded.config.hosts.gpu!;
      loaded.config.hosts.gpu = {
        ...gpu,
        python: countingPython(dirs.workdir, opts),
        ...(opts.sshPort && gpu.ssh ? { ssh: { ...gpu.ssh, port: opts.sshPort } } : {}),
      };
      // Refused connections are retried until connect_s: give up on the unreachable host at once.
      if (opts.sshPort) loaded.config.timeouts = { ...loaded.config.timeouts, connect_s: 0.2 };
      loaded.profilesDir = profilesDir(opts.profiles);
    },
  });
  return { b, dirs };
}

describe("the host's --help decides", () => {
  it('check names a value only newer SGLang takes and a misspelt flag, with the choices and the closest one', async () => {
    const { b } = bot();
    const r = await b.run('check');
    expect(r.exitCode).toBe(1);
    expect(r.text).toContain('flags from:    SGLang 0.5.8+standin on gpu (its --help)');
    expect(r.text).toContain("profiles:      3 checked, 2 with flags the host's SGLang refuses");
    expect(r.text).toContain(
      "tiny-nvfp4-kv: kv_cache_dtype: --kv-cache-dtype 'nvfp4' is not a choice of SGLang 0.5.8+standin on gpu, which takes: auto, fp8_e5m2, fp8_e4m3, bf16, bfloat16, fp4_e2m1",
    );
    expect(r.text).toMatch(
      /tiny-typo: extra_args --enable-metrcs: SGLang 0\.5\.8\+standin on gpu has no flag --enable-metrcs\n\s+fix: did you mean '--enable-metrics'\?/,
    );
  });

  it('launch refuses it before anything starts (exit 2), and the same value launches where SGLang takes it', async () => {
    const { b } = bot();
    const r = await b.run(`launch tiny-nvfp4-kv --no-check --port ${await freePort()}`);
    expect(r.exitCode, r.text).toBe(2);
    expect(r.text).toMatch(
      /^config error in profile tiny-nvfp4-kv against SGLang 0\.5\.8\+standin on gpu \(its --help\)/,
    );
    expect(r.text).toContain("kv_cache_dtype: --kv-cache-dtype 'nvfp4' is not a choice of SGLang 0.5.8+standin on gpu");
    expect(b.app.engine.attempts.list({ host: 'gpu', limit: 10 })).toEqual([]);
    // July 2026's SGLang takes nvfp4 and drops qoq: the host's own list, not the shipped one, decides both ways.
    const { b: newer } = bot({ newer: true });
    const dry = await newer.run('launch tiny-nvfp4-kv --dry-run');
    expect(dry.exitCode, dry.text).toBe(0);
    const qoq = await newer.run("launch tiny --dry-run --set 'quantization=qoq'");
    expect(qoq.exitCode).toBe(2);
    expect(qoq.text).toContain(
      "tiny.quantization-qoq: quantization: --quantization 'qoq' is not a choice of SGLang 0.5.15+standin on gpu",
    );
  });

  it('asks the host once: a second check, a restarted bot and a launch use the cached answer', async () => {
    const { b, dirs } = bot();
    await b.run('check');
    expect(helpRuns(dirs.workdir)).toBe(1);
    await b.run('check');
    await b.run('launch tiny --dry-run');
    expect(helpRuns(dirs.workdir)).toBe(1);
    // A new bot process on the same data directory: the answer is read from sglang-help/, the host is not asked.
    const { b: again } = bot({ dirs });
    const r = await again.run('check --profile tiny');
    expect(r.text).toMatch(/flags from: {4}SGLang 0\.5\.8\+standin on gpu \(its --help, cached \d{4}-\d\d-\d\dT/);
    expect(r.text).toContain('profiles:      1 checked, flags ok');
    expect(helpRuns(dirs.workdir)).toBe(1);
    // Another SGLang version is another question.
    const { b: upgraded } = bot({ dirs, newer: true });
    await upgraded.run('check');
    expect(helpRuns(dirs.workdir)).toBe(2);
    // A damaged entry is not trusted: the host is asked again and the entry rewritten.
    const cacheDir = join(dirs.dataDir, 'sglang-help');
    for (const f of readdirSync(cacheDir)) writeFileSync(join(cacheDir, f), '{"host": "gpu", "help": 7');
    const { b: afterDamage } = bot({ dirs });
    expect((await afterDamage.run('check --profile tiny')).text).toContain('(its --help)\n');
    expect(helpRuns(dirs.workdir)).toBe(3);
    const { b: afterRewrite } = bot({ dirs });
    expect((await afterRewrite.run('check --profile tiny')).text).toContain('(its --help, cached ');
    expect(helpRuns(dirs.workdir)).toBe(3);
  });
});

describe('a host that cannot be asked falls back to the shipped table, and says why', () => {
  it('--help fails (SGLang cannot import torch)', async () => {
    const { b } = bot({ failHelp: true });
    const r = await b.run('check --profile tiny-typo');
    expect(r.text).toContain(
      "flags from:    the shipped table (src/profiles/choices.ts), since the host could not be asked: python -m sglang.launch_server --help exited 1: ModuleNotFoundError: No module named 'torch'",
    );
    // The shipped table lists the typed flags only: it cannot refuse a flag it does not know.
    expect(r.text).toContain('profiles:      1 checked, flags ok');
    // The launch goes ahead (its python runs servers), saying which table checked it.
    const r2 = await b.run(`launch tiny --no-check --port ${await freePort()}`);
    expect(r2.exitCode, r2.text).toBe(0);
    expect(b.said.join('\n')).toContain(
      "note: flags checked against the shipped table (src/profiles/choices.ts), since the host could not be asked: python -m sglang.launch_server --help exited 1: ModuleNotFoundError: No module named 'torch'",
    );
    await b.run('stop');
  });

  it('the python itself fails', async () => {
    const { b, dirs } = bot({ failAll: true });
    const r = await b.run('check');
    expect(r.exitCode).toBe(1);
    expect(r.text).toMatch(
      /flags from: {4}the shipped table \(src\/profiles\/choices\.ts\), since the host could not be asked: SGLang's version could not be read \(python at .* did not run: .*libpython3\.12/,
    );
    expect(helpRuns(dirs.workdir)).toBe(0);
  });
});

// A release newer than the shipped table: the July stand-in told (STANDIN_EXTRA_CHOICES) to take an attention backend
// src/profiles/choices.ts does not list. The profile loads; the host's --help, not the table, decides at launch.
describe('a choice the shipped table lacks', () => {
  const NEXT = '--attention-backend=flashinfer_next';
  const profiles = {
    tiny: `description: fits the stand-in\n${small}`,
    'tiny-next-attn': `description: an attention backend newer than the table\n${small}attention_backend: flashinfer_next\n`,
  };
  const note =
    "tiny-next-attn: attention_backend: 'flashinfer_next' is not in the shipped table of SGLang 0.5.8 to 0.5.15; checked against each host's --help at launch";

  it('loads, profiles and check note it, and it launches on the July host whose SGLang takes it', async () => {
    const { b } = bot({ newer: true, extraChoices: NEXT, profiles });
    const list = await b.run('profiles');
    expect(list.exitCode, list.text).toBe(0);
    expect(list.text).toContain(`note: ${note}\n  fix: did you mean 'flashinfer'? valid: triton,`);
    const json = await b.run('profiles --json');
    expect(JSON.parse(json.text).find((r: { name: string }) => r.name === 'tiny').notes).toEqual([]);
    const check = await b.run('check --profile tiny-next-attn');
    expect(check.exitCode, check.text).toBe(0);
    expect(check.text).toContain('flags from:    SGLang 0.5.15+standin on gpu (its --help)');
    expect(check.text).toContain('profiles:      1 checked, flags ok');
    expect(check.text).toContain(`    note: ${note}`);
    const r = await b.run(`launch tiny-next-attn --no-check --port ${await freePort()}`);
    expect(r.exitCode, r.text).toBe(0);
    const [a] = b.app.engine.attempts.list({ host: 'gpu', limit: 1 });
    expect(a!.argv.join(' ')).toContain('--attention-backend flashinfer_next');
    expect(a!.status).toBe('ready');
    await b.run('stop');
  });

  it("is refused on a February host, with that host's own choices", async () => {
    const { b } = bot({ profiles });
    const r = await b.run(`launch tiny-next-attn --no-check --port ${await freePort()}`);
    expect(r.exitCode, r.text).toBe(2);
    expect(r.text).toMatch(
      /^config error in profile tiny-next-attn against SGLang 0\.5\.8\+standin on gpu \(its --help\)/,
    );
    expect(r.text).toContain(
      "attention_backend: --attention-backend 'flashinfer_next' is not a choice of SGLang 0.5.8+standin on gpu, which takes: triton, torch_native, flex_attention, nsa, cutlass_mla, fa3, fa4, flashinfer, flashmla, trtllm_mla, trtllm_mha, dual_chunk_flash_attn, aiter, wave, intel_amx, ascend, intel_xpu",
    );
    expect(b.app.engine.attempts.list({ host: 'gpu', limit: 10 })).toEqual([]);
  });

  it('a host whose python cannot answer --help: the shipped table refuses it, and the refusal says so', async () => {
    // The same July SGLang that takes the value, but its --help fails: the bot cannot know, so the table decides.
    const { b } = bot({ newer: true, extraChoices: NEXT, failHelp: true, profiles });
    const r = await b.run(`launch tiny-next-attn --no-check --port ${await freePort()}`);
    expect(r.exitCode, r.text).toBe(2);
    expect(r.text).toMatch(
      /^config error in profile tiny-next-attn against the shipped table \(src\/profiles\/choices\.ts\), since the host could not be asked: python -m sglang\.launch_server --help exited 1: ModuleNotFoundError: No module named 'torch'/,
    );
    expect(r.text).toContain(
      "attention_backend: --attention-backend 'flashinfer_next' is not a choice of SGLang (by the shipped table), which takes: triton,",
    );
    expect(b.app.engine.attempts.list({ host: 'gpu', limit: 10 })).toEqual([]);
  });

  it('a dry run on an unreachable host is checked against the shipped table', async () => {
    const { b } = bot({ newer: true, extraChoices: NEXT, profiles, sshPort: await freePort() });
    const r = await b.run('launch tiny-next-attn --dry-run');
    expect(r.exitCode, r.text).toBe(2);
    expect(r.text).toMatch(
      /^config error in profile tiny-next-attn against the shipped table \(src\/profiles\/choices\.ts\), since the host could not be asked: SGLang's version could not be read \(the host is unreachable\)/,
    );
    expect((await b.run('launch tiny --dry-run')).exitCode).toBe(0);
  });
});
