// The seeds' seven attempts replayed against the stand-in over a real sshd, then drafted as an upstream report and
// advised on. Secrets and private paths are planted in the host's environment and the log, and must not leak.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Advice, advise, sameConfiguration } from '../../src/advice/advise.ts';
import { resolveLaunchProfile } from '../../src/advice/profiles.ts';
import { captureEnvironment } from '../../src/lifecycle/env.ts';
import { launch } from '../../src/lifecycle/launch.ts';
import { flagView } from '../../src/profiles/index.ts';
import type { IssueDraft } from '../../src/reports/issue.ts';
import { BODY_FILE, PACKAGE_TEMPLATES, TITLE_FILE } from '../../src/reports/templates.ts';
import { STANDIN, type TestBot } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const HF_TOKEN = `hf_${'qwertyuiopasdfghjklzxcvbnmQWERTYUI'}`;
const PLANTED = {
  HF_TOKEN,
  // Frames of every traceback in the log then name this checkout.
  STANDIN_SGLANG_ROOT: '/home/alice/sglang/python/sglang',
  HF_HOME: '/home/alice/.cache/huggingface',
  SGLANG_HOST_IP: '192.168.41.7',
};
const LEAKS = [HF_TOKEN, 'qwertyuiopasdfghjklzxcvbnm', '/home/alice', 'alice', '192.168.'];

const shared = sshdWithBots();
let gh: Server;
let ghBase: string;
const ghRequests: string[] = [];
let b: TestBot;
const ports: number[] = [];
/** The attempt id of each seed row (1..7 unless a row had to be launched again). */
const good: number[] = [];
const seedsInOrder = () => good.every((id, i) => id === i + 1);

beforeAll(async () => {
  gh = createServer((req, res) => {
    ghRequests.push(`${req.headers.authorization} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        total_count: 1,
        items: [
          {
            html_url: 'https://github.com/sgl-project/sglang/issues/31337',
            title: 'GLM-5 NaN on RTX PRO 6000',
            number: 31337,
            state: 'open',
          },
        ],
      }),
    );
  });
  await new Promise<void>((r) => gh.listen(0, '127.0.0.1', r));
  shared.later(() => new Promise<void>((r) => gh.close(() => r())));
  const a = gh.address();
  ghBase = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  process.env.GLM_TEST_GITHUB_TOKEN = 'ghp_localonly';
  shared.later(() => {
    delete process.env.GLM_TEST_GITHUB_TOKEN;
  });
  b = shared.bot({ env: PLANTED, extra: { github: { token_env: 'GLM_TEST_GITHUB_TOKEN', api_url: ghBase } } });
  // The seeds' table: one launch per row, each to its crash. What launch will do once wired: capture the
  // environment with the attempt.
  for (let i = 1; i <= 7; i++) {
    // A launch whose server is killed from outside (other test runs on a shared machine) ends without a crash:
    // launch that row again, and draft the rows that did run.
    for (let tries = 0; tries < 3; tries++) {
      const port = await freePort();
      const r = await b.run(`launch glm5-attempt${i} --yes --port ${port}`);
      if (r.exitCode === 0) await b.run('stop');
      const a = b.app.engine.attempts.list().at(-1)!;
      await captureEnvironment(b.app.engine, 'gpu', { attemptId: a.id });
      if ((a.classification as { category?: string } | null)?.category) {
        ports.push(port);
        good.push(a.id);
        break;
      }
    }
  }
  expect(good).toHaveLength(7);
}, 120_000);

function noLeaks(...texts: string[]) {
  for (const t of texts) for (const leak of LEAKS) expect(t, `leaked ${leak}`).not.toContain(leak);
}

/** The "Configurations tried" table of a draft, as column -> cell per row. */
function table(body: string): Array<Record<string, string>> {
  const lines = body.split('\n');
  const start = lines.findIndex((l) => l.startsWith('| # |'));
  const split = (l: string) =>
    l
      .slice(2, -2)
      .split(' | ')
      .map((c) => c.trim());
  const head = split(lines[start]!);
  const rows: Array<Record<string, string>> = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break;
    const cells = split(l);
    rows.push(Object.fromEntries(head.map((h, i) => [h, cells[i]!])));
  }
  return rows;
}

describe('draft-issue over the seeds', () => {
  let d: IssueDraft;
  let text: string;

  beforeAll(async () => {
    const r = await b.run(seedsInOrder() ? 'draft-issue --body' : `draft-issue ${good.join(' ')} --body`);
    expect(r.exitCode, r.text).toBe(0);
    text = r.text;
    d = r.data as IssueDraft;
  });

  it('prints the file, the title and a summary, not the body or a 7,000-character link, unless asked', async () => {
    const r = await b.run(`draft-issue ${d.attempts.join(' ')} --primary ${d.primary} --no-search`);
    expect(r.exitCode, r.text).toBe(0);
    expect(r.text).toContain(`  file:  ${(r.data as IssueDraft).file}`);
    expect(r.text).toContain(`  title: ${d.title}`);
    expect(r.text).toMatch(/ {2}body: {2}\d+ lines, \d+ characters; read it in the file, or print it with --body/);
    expect(r.text).not.toContain('### Checklist');
    expect(r.text).not.toContain('/issues/new?');
    expect(r.text.length).toBeLessThan(d.body.length);
  });

  it("tabulates the seven configurations as knowledge/FINDINGS.md's table does", () => {
    expect(d.attempts).toEqual(good);
    const rows = table(d.body);
    const pick = (r: Record<string, string>) => [
      r['attention-backend'],
      r['nsa-decode-backend'],
      r['fp8-gemm-backend'],
      r['kv-cache-dtype'],
      r['cuda-graph'],
      r.outcome!.split(' ')[0],
    ];
    // knowledge/FINDINGS.md "Configurations tried"; row 7 is pending there, the stand-in answers as upstream
    // documents for TRT-LLM-gen on SM120.
    expect(rows.map(pick)).toEqual([
      ['flashinfer', 'auto', 'auto', 'fp8_e4m3', 'on', 'cuda_oom'],
      ['flashinfer', 'auto', 'auto', 'fp8_e4m3', 'on', 'nan_in_sampling'],
      ['triton', 'auto', 'auto', 'fp8_e4m3', 'on', 'backend_assertion'],
      ['flashinfer', 'flashmla_sparse', 'auto', 'fp8_e4m3', 'on', 'nan_in_sampling'],
      ['flashinfer', 'flashmla_sparse', 'cutlass', 'fp8_e4m3', 'on', 'nan_in_sampling'],
      ['flashinfer', 'flashmla_sparse', 'cutlass', 'auto', 'off', 'nan_in_sampling'],
      ['flashinfer', 'trtllm', 'cutlass', 'auto', 'off', 'unsupported_arch'],
    ]);
    expect(rows[6]!['nsa-prefill-backend']).toBe('trtllm');
    expect(rows[0]!.outcome).toBe('cuda_oom (cuda_graph_capture)');
    expect(rows[1]!.outcome).toBe('nan_in_sampling (decode)');
    expect(rows.map((r) => r['#'])).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    // Only what differs: the model and the parsers are the same everywhere.
    expect(Object.keys(rows[0]!)).not.toContain('model-path');
    expect(Object.keys(rows[0]!)).not.toContain('port');
  });

  it('is written around the crash that survived most configurations, with its exact command', () => {
    expect(d.primary).toBe(good[5]);
    const python = join(STANDIN, 'python').replace(/^\/home\/[^/]+|^\/root(?=\/)/, '~');
    const state = join(b.workdir, 'standin-state');
    // The stand-in's own knobs (STANDIN_*: simulated time, its state) are not part of a command upstream could run.
    expect(d.body).not.toContain('STANDIN_');
    expect(d.body).not.toContain(state);
    const command = [
      'HF_HOME=~/.cache/huggingface SGLANG_HOST_IP=PRIVATE_IP NCCL_IB_DISABLE=1 NCCL_P2P_LEVEL=PHB',
      `${python} -m sglang.launch_server --model-path lukealonso/GLM-5-NVFP4 --tp-size 8 --host 127.0.0.1`,
      `--port ${ports[5]} --trust-remote-code --quantization modelopt_fp4 --kv-cache-dtype auto`,
      '--attention-backend flashinfer --nsa-decode-backend flashmla_sparse --fp8-gemm-backend cutlass',
      '--disable-cuda-graph --cuda-graph-max-bs 256 --tool-call-parser glm47 --reasoning-parser glm45',
    ].join(' ');
    expect(d.body).toContain(`\`\`\`shell\n${command}\n\`\`\``);
  });

  it('has the shape of the upstream bug-report form, ticking only what is true', () => {
    expect(d.title).toMatch(/^\[Bug\] GLM-5-NVFP4 on 8x NVIDIA RTX PRO 6000 Blackwell Server Edition \(SM120\): /);
    expect(d.title).toMatch(/NaN in sampling during decode$/);
    const heads = d.body.split('\n').filter((l) => l.startsWith('### '));
    expect(heads).toEqual(['### Checklist', '### Describe the bug', '### Reproduction', '### Environment']);
    const boxes = d.body.split('\n').filter((l) => /^- \[[ x]\] /.test(l));
    expect(boxes).toEqual([
      // Known upstream reports match: the search did not come back empty.
      '- [ ] I searched related issues but found no solution.',
      // Nobody retested on the newest release.
      '- [ ] The bug persists in the latest version.',
      '- [x] Issues without environment info and a minimal reproducible demo are hard to resolve and may receive no feedback.',
      '- [x] If this is not a bug report but a general question, please start a discussion at https://github.com/sgl-project/sglang/discussions. Otherwise, it will be closed.',
      '- [x] Please use English. Otherwise, it will be closed.',
    ]);
    expect(d.body).toContain('Crash class: `nan_in_sampling`, phase: `decode`.');
    expect(d.body).toMatch(
      /```text\n\/pytorch\/aten\/src\/ATen\/native\/cuda\/TensorCompare\.cu:110: .*probability tensor contains either/,
    );
    expect(d.body).toContain('File "~/sglang/python/sglang/srt/managers/scheduler.py"');
    expect(d.body).toContain('4 of the 7 configurations tried failed this way');
  });

  it('carries the environment captured at launch', () => {
    expect(d.environment).toBe('check_env');
    const env = d.body.slice(d.body.indexOf('### Environment'));
    expect(env).toContain('Output of `python3 -m sglang.check_env` on the GPU host');
    expect(env).toContain('GPU 0,1,2,3,4,5,6,7 Compute Capability: 12.0');
    expect(env).toContain('sglang: 0.5.8+standin');
    expect(env).toContain('NVIDIA Topology:');
  });

  it('lists known upstream reports and search results above the draft', () => {
    const draftAt = text.indexOf('### Checklist');
    for (const n of ['26087', '29562', '37105', '31337']) {
      const at = text.indexOf(`/issues/${n}`);
      expect(at, n).toBeGreaterThan(-1);
      expect(at).toBeLessThan(draftAt);
    }
    expect(text).toContain('The upstream tracker was searched too.');
    expect(ghRequests.length).toBe(2);
    expect(ghRequests[0]).toMatch(/^Bearer ghp_localonly \/search\/issues\?q=/);
    expect(d.duplicates.found.map((f) => f.url)).toEqual(['https://github.com/sgl-project/sglang/issues/31337']);
  });

  it('writes the draft to a file and offers a link only when it fits', () => {
    expect(readFileSync(d.file, 'utf8')).toBe(`<!-- title: ${d.title} -->\n${d.body}`);
    if (d.url) {
      expect(d.url.length).toBeLessThanOrEqual(8000);
      const u = new URL(d.url);
      expect(u.searchParams.get('body')).toBe(d.body);
      expect(u.searchParams.get('title')).toBe(d.title);
    } else {
      expect(text).toContain(
        'too long for a prefilled link: paste the file into https://github.com/sgl-project/sglang/issues/new',
      );
    }
  });

  it('leaks no secret, home directory or private address, anywhere it writes', () => {
    noLeaks(d.title, d.body, text, readFileSync(d.file, 'utf8'), d.url ?? '', JSON.stringify(d));
    // ... though all of them were there to leak.
    const a = b.app.engine.attempts.get(good[5]!)!;
    expect(readFileSync(a.logPath!, 'utf8')).toContain('/home/alice/sglang/python/sglang');
    expect(a.env.SGLANG_HOST_IP).toBe('192.168.41.7');
  });

  it('drafts named attempts around a chosen one, and with a link when the draft is short enough', async () => {
    const r = await b.run(`draft-issue ${good[0]} ${good[2]} --primary ${good[2]} --no-search --json`);
    expect(r.exitCode, r.text).toBe(0);
    const one = r.data as IssueDraft;
    expect(one.attempts).toEqual([good[0], good[2]]);
    expect(one.title).toMatch(/: Backend assertion during cuda_graph_capture$/);
    expect(one.duplicates.searched).toBe(false);
    expect(one.body).toContain('https://github.com/sgl-project/sglang/issues/14691');
    expect(table(one.body).map((x) => [x['attention-backend'], x['cuda-graph-max-bs']])).toEqual([
      ['flashinfer', '512'],
      ['triton', '256'],
    ]);
    noLeaks(one.body, r.text);
    expect((await b.run('draft-issue 999')).text).toMatch(/no attempt #999 in the ledger/);
  });

  it('renders from the configured templates folder, and fails loudly on a bad template', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-templates-'));
    writeFileSync(join(dir, TITLE_FILE), '[Bug] {{model}}: {{crash.class}}\n');
    writeFileSync(join(dir, BODY_FILE), readFileSync(join(PACKAGE_TEMPLATES, BODY_FILE), 'utf8'));
    const cfg = b.app.engine.loaded.config as { templates_dir?: string };
    cfg.templates_dir = dir;
    try {
      const ok = await b.run(`draft-issue ${good.join(' ')} --no-search --json`);
      expect((ok.data as IssueDraft).title).toBe('[Bug] GLM-5-NVFP4: nan_in_sampling');
      writeFileSync(join(dir, TITLE_FILE), '[Bug] {{modle}}\n');
      const bad = await b.run(`draft-issue ${good.join(' ')} --no-search`);
      expect(bad.exitCode).not.toBe(0);
      expect(bad.text).toMatch(/issue-title\.txt:1:7: unknown variable 'modle' \(fix: did you mean 'model'\?\)/);
    } finally {
      delete cfg.templates_dir;
    }
  });
});

describe('next over the seeds', () => {
  const changed = (a: Advice) => a.suggestions.map((s) => s.overrides);

  function neverTried(a: Advice) {
    const all = b.app.engine.attempts.list({ limit: 1000 });
    for (const s of a.suggestions) {
      const f = flagView(s.profile);
      const same = all.filter((x) => sameConfiguration(x.flags, f)).map((x) => x.id);
      expect(same, `${s.profile.name} was tried`).toEqual([]);
    }
  }

  it('after the OOM in graph capture: a lower CUDA graph max batch size or memory fraction, not attempt 2 again', () => {
    const a = advise(b.app.engine, { profile: 'glm5-attempt1' });
    expect(a.crash).toMatchObject({ attemptId: good[0], category: 'cuda_oom', phase: 'cuda_graph_capture' });
    expect(a.arch).toBe('sm120');
    // 256 is attempt 2's configuration exactly: skipped, the next lower value suggested instead.
    expect(a.skipped.map((s) => s.why)).toContain(`already tried as attempt #${good[1]} (glm5-attempt2)`);
    expect(changed(a)).toContainEqual({ cuda_graph_max_bs: 128 });
    expect(changed(a)).toContainEqual({ mem_fraction_static: 0.8 });
    neverTried(a);
  });

  it('after the NaN with flashmla on SM120: the tilelang kernels with a bf16 KV cache (#37105)', () => {
    for (const p of ['glm5-attempt2', 'glm5-attempt4', 'glm5-attempt5', 'glm5-attempt6']) {
      const a = advise(b.app.engine, { profile: p });
      expect(a.crash.category).toBe('nan_in_sampling');
      const first = a.suggestions[0]!;
      expect(first.overrides).toMatchObject({
        nsa_prefill_backend: 'tilelang',
        nsa_decode_backend: 'tilelang',
        kv_cache_dtype: 'bfloat16',
      });
      expect(first.ref).toBe('https://github.com/sgl-project/sglang/issues/37105');
      expect(flagView(first.profile)).toMatchObject({ 'kv-cache-dtype': 'bfloat16', 'nsa-decode-backend': 'tilelang' });
      // From attempts 2 and 4 that change lands exactly on the shipped profile: it is named instead of a variant.
      expect(first.existing).toBe(p === 'glm5-attempt2' || p === 'glm5-attempt4' ? 'glm5-tilelang-bf16' : undefined);
      neverTried(a);
    }
    // Attempt 6 already ran without CUDA graphs: that is not offered for it.
    const six = advise(b.app.engine, { profile: 'glm5-attempt6' });
    expect(changed(six).some((o) => o.cuda_graph === false)).toBe(false);
  });

  it('after the triton + NSA fp8 KV assertion: a bf16 KV cache, or the NSA backend', () => {
    const a = advise(b.app.engine, { profile: 'glm5-attempt3' });
    expect(a.crash.category).toBe('backend_assertion');
    expect(changed(a)[0]).toEqual({ kv_cache_dtype: 'bfloat16' });
    expect(changed(a)).toContainEqual({ attention_backend: 'nsa' });
    neverTried(a);
  });

  it('after TRT-LLM-gen on SM120: tilelang with bf16 KV; by default about the newest crash', async () => {
    const r = await b.run('next');
    expect(r.exitCode, r.text).toBe(0);
    expect(r.text).toMatch(
      new RegExp(
        `^After attempt #${good[6]} \\(glm5-attempt7\\): unsupported_arch during warmup on sm120; variants of glm5-attempt7:`,
      ),
    );
    expect(r.text).toContain(
      '  next:1  glm5-attempt7 --set attention_backend=nsa,nsa_prefill_backend=tilelang,nsa_decode_backend=tilelang,kv_cache_dtype=bfloat16,env.SGLANG_OPT_DEEPGEMM_HC_PRENORM=0',
    );
    expect(r.text).toContain('Launch one with: launch next:N');
  });

  it('never suggests a configuration once it is in the ledger, and launch can take a suggestion', async () => {
    const before = await b.run('next glm5-attempt1 --json');
    const s1 = (before.data as { suggestions: Array<{ id: string; profile: string }> }).suggestions[0]!;
    expect(s1).toMatchObject({ id: 'next:1', profile: 'glm5-attempt1.cuda-graph-max-bs-128' });
    // What `launch next:1` resolves to (commands/launch.ts is to call resolveLaunchProfile).
    const p = resolveLaunchProfile(b.app.engine, 'next:1', undefined, 'admin');
    expect(p.name).toBe(s1.profile);
    expect(p.cuda_graph_max_bs).toBe(128);
    expect(existsSync(p.file)).toBe(true);
    const r = await launch(
      b.app.engine,
      {
        profile: p,
        hostName: 'gpu',
        actor: 'tester',
        origin: 'terminal',
        role: 'admin',
        port: await freePort(),
        confirmed: true,
      },
      () => {},
      b.app.diagnoser,
    );
    if (r.outcome === 'ready') await b.run('stop');
    const after = advise(b.app.engine, { profile: 'glm5-attempt1' });
    expect(after.suggestions.map((s) => s.profile.name)).not.toContain(s1.profile);
    expect(after.skipped.map((s) => s.why)).toContain(`already tried as attempt #${r.attempt!.id} (${s1.profile})`);
    neverTried(after);
    // The variant itself can be advised on, by name.
    if (r.outcome === 'crashed') {
      const v = advise(b.app.engine, { profile: s1.profile });
      expect(v.base.name).toBe(s1.profile);
      neverTried(v);
    }
  });
});
