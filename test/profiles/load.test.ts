import { describe, expect, it } from 'vitest';
import { ConfigError, UserError } from '../../src/errors.ts';
import { loadProfiles, renderLaunch, shippedTableNotes } from '../../src/profiles/index.ts';
import { loadError, paths, profileDir } from './helpers.ts';

const HDR = '# yaml-language-server: $schema=../schema/profile.schema.json\n';

describe('extends', () => {
  const dir = () =>
    profileDir({
      'base.yaml': `${HDR}description: base\nmodel_path: org/model\ntp: 2\nenv:\n  A: "1"\n  B: "2"\nextra_args: [--enable-cache-report]\n`,
      'mid.yaml':
        'extends: base\nkv_cache_dtype: fp8_e4m3\nenv:\n  B: "20"\n  C: "3"\nextra_args: [--log-level, debug]\n',
      'leaf.yaml':
        'extends: mid\ndescription: leaf\ntp: 4\ncuda_graph: false\nextra_args: ["--watchdog-timeout=600"]\n',
      'README.md': 'not a profile',
    });

  it('resolves a chain with scalars overridden, env merged and extra_args appended', () => {
    const set = loadProfiles(dir());
    expect(set.names()).toEqual(['base', 'leaf', 'mid']);
    const leaf = set.get('leaf');
    expect(leaf.chain).toEqual(['leaf', 'mid', 'base']);
    expect(leaf).toMatchObject({
      name: 'leaf',
      description: 'leaf',
      model_path: 'org/model',
      tp: 4,
      kv_cache_dtype: 'fp8_e4m3',
      cuda_graph: false,
      port: 30000,
      host_bind: '127.0.0.1',
      env: { A: '1', B: '20', C: '3' },
      extra_args: ['--enable-cache-report', '--log-level', 'debug', '--watchdog-timeout=600'],
    });
    expect(renderLaunch(leaf, { python: 'py' }).argv.slice(-5)).toEqual([
      '--disable-cuda-graph',
      '--enable-cache-report',
      '--log-level',
      'debug',
      '--watchdog-timeout=600',
    ]);
  });

  it('does not inherit the description', () => {
    const set = loadProfiles(dir());
    expect(set.get('mid').description).toBeUndefined();
    expect(set.get('mid').env).toEqual({ A: '1', B: '20', C: '3' });
    expect(set.get('base').env).toEqual({ A: '1', B: '2' });
  });

  it('hands out frozen profiles, so one caller cannot change another caller’s', () => {
    const p = loadProfiles(dir()).get('leaf');
    expect(Object.isFrozen(p)).toBe(true);
    expect(Object.isFrozen(p.env)).toBe(true);
    expect(Object.isFrozen(p.extra_args)).toBe(true);
  });

  it('treats dsa_* as the same field as nsa_*, and lets a child override either spelling', () => {
    const set = loadProfiles(
      profileDir({
        'p.yaml': 'model_path: zai-org/GLM-5\nnsa_decode_backend: trtllm\n',
        'c.yaml': 'extends: p\ndsa_decode_backend: tilelang\ndsa_prefill_backend: tilelang\n',
      }),
    );
    expect(set.get('c').nsa_decode_backend).toBe('tilelang');
    expect(set.get('c').nsa_prefill_backend).toBe('tilelang');
    expect(set.get('c')).not.toHaveProperty('dsa_decode_backend');
  });

  it('reports cycles at each profile in the cycle, and missing parents with a suggestion', () => {
    const err = loadError({
      'a.yaml': 'extends: b\nmodel_path: m\n',
      'b.yaml': 'extends: a\n',
      'c.yaml': 'extends: a\n',
      'self.yaml': 'extends: self\nmodel_path: m\n',
      'base.yaml': 'model_path: m\n',
      'orphan.yaml': 'extends: bsae\n',
    });
    expect(err).toBeInstanceOf(ConfigError);
    expect(paths(err)).toEqual(['a.yaml: extends', 'b.yaml: extends', 'orphan.yaml: extends', 'self.yaml: extends']);
    expect(err.issues[0]!.message).toBe('cycle: a -> b -> a');
    expect(err.issues[3]!.message).toBe('cycle: self -> self');
    expect(err.issues[2]!.message).toBe("unknown profile 'bsae'");
    expect(err.issues[2]!.fix).toMatch(/^did you mean 'base'\? profiles: a, b, base, c, orphan, self$/);
  });
});

describe('ProfileSet.get', () => {
  it('throws a UserError with a did-you-mean hint and the list', () => {
    const set = loadProfiles(profileDir({ 'glm5-nvfp4.yaml': 'model_path: m\n', 'small.yaml': 'model_path: s\n' }));
    let err: unknown;
    try {
      set.get('glm5-nvfp');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe("unknown profile 'glm5-nvfp'");
    expect((err as UserError).hint).toBe("did you mean 'glm5-nvfp4'? profiles: glm5-nvfp4, small");
    expect(() => set.get('zzz')).toThrow(UserError);
  });
});

describe('choice values', () => {
  it('one the shipped table lacks loads, with a note naming the likely value and the shipped ones', () => {
    const set = loadProfiles(
      profileDir({
        'a.yaml': 'model_path: m\nnsa_decode_backend: flashmla_sprase\nattention_backend: flashinfer_next\n',
        'b.yaml': 'model_path: m\nattention_backend: fa3\n',
      }),
    );
    expect(set.get('a').attention_backend).toBe('flashinfer_next');
    expect(shippedTableNotes('a', set.get('a'))).toEqual([
      {
        path: 'a: attention_backend',
        message:
          "'flashinfer_next' is not in the shipped table of SGLang 0.5.8 to 0.5.15; checked against each host's --help at launch",
        fix: expect.stringMatching(/^did you mean 'flashinfer'\? valid: triton, /),
      },
      {
        path: 'a: nsa_decode_backend',
        message:
          "'flashmla_sprase' is not in the shipped table of SGLang 0.5.8 to 0.5.15; checked against each host's --help at launch",
        fix: "did you mean 'flashmla_sparse'? valid: flashmla_sparse, flashmla_kv, flashmla_auto, fa3, tilelang, aiter, trtllm; newer SGLang only: flashmla_sparse_q8, flashinfer_sparse_mla",
      },
    ]);
    expect(shippedTableNotes('b', set.get('b'))).toEqual([]);
  });

  it('keeps its shape checked at load: a string, one word, not a flag', () => {
    const err = loadError({
      'a.yaml': 'model_path: m\nattention_backend: 3\nkv_cache_dtype: "fp8 e4m3"\nquantization: --fp8\n',
    });
    expect(err.message).toContain('a.yaml: attention_backend: expected string, got number 3');
    expect(err.message).toContain(
      'a.yaml: kv_cache_dtype: must be one word, as --kv-cache-dtype takes it (no spaces, quotes or control characters)',
    );
    expect(err.message).toContain("a.yaml: quantization: must not start with '-' (SGLang would read it as a flag)");
  });
});

describe('all problems at once', () => {
  const err = () =>
    loadError({
      'base.yaml': 'model_path: zai-org/GLM-5-FP8\ntp: 8\n',
      'glm5-attempt3.yaml': [
        'extends: base',
        'kv_cache_dtype: fp4_e2m1',
        'nsa_decode_backend: flashmla_sprase',
        'attention_backend: flashinfr',
        'modelPath: x',
        'disable_cuda_graph: true',
        'tp: "8"',
        'mem_fraction_static: 1.5',
        'env:',
        '  NCCL_IB_DISABLE: 1',
        '  "BAD NAME": x',
        'extra_args: [--tp, "4", -x, --disable-cuda-graph, "--"]',
        '',
      ].join('\n'),
      'bad.yaml': 'model_path: [unclosed\n',
      'Bad_Name.yaml': 'model_path: x\n',
      'x.yml': 'model_path: x\n',
      'moe.yaml': 'model_path: m\nmoe_runner_backend: flashinfer_cutlass\nquantization: fp8\ngpus: [0, 1, 1]\ntp: 2\n',
      'both.yaml': 'model_path: m\nnsa_decode_backend: trtllm\ndsa_decode_backend: tilelang\n',
      'nomodel.yaml': 'tp: 2\n',
      'empty.yaml': '',
    });

  it('names every problem in every file with its path', () => {
    expect(paths(err())).toEqual([
      'Bad_Name.yaml',
      'bad.yaml:2',
      'both.yaml: dsa_decode_backend',
      'empty.yaml',
      'glm5-attempt3.yaml: tp',
      'glm5-attempt3.yaml: mem_fraction_static',
      'glm5-attempt3.yaml: env.NCCL_IB_DISABLE',
      'glm5-attempt3.yaml: env["BAD NAME"]',
      'glm5-attempt3.yaml: modelPath',
      'glm5-attempt3.yaml: disable_cuda_graph',
      'glm5-attempt3.yaml: extra_args[0]',
      'glm5-attempt3.yaml: extra_args[2]',
      'glm5-attempt3.yaml: extra_args[3]',
      'glm5-attempt3.yaml: extra_args[4]',
      'glm5-attempt3.yaml: kv_cache_dtype',
      'moe.yaml: gpus[2]',
      'moe.yaml: gpus',
      'moe.yaml: moe_runner_backend',
      'nomodel.yaml: model_path',
      'x.yml',
    ]);
  });

  it('suggests the likely value and lists the valid ones', () => {
    const text = err().message;
    // A choice the shipped table lacks is not a load problem: the host's --help judges it at launch.
    expect(text).not.toContain('flashmla_sprase');
    expect(text).not.toContain('flashinfr');
    expect(text).toContain("modelPath: unknown field (fix: did you mean 'model_path'?)");
    expect(text).toContain("disable_cuda_graph: unknown field (fix: use 'cuda_graph: false')");
    expect(text).toContain("tp: expected number, got the string '8' (fix: write the number without quotes)");
    expect(text).toContain('env.NCCL_IB_DISABLE: expected string, got number 1 (fix: quote it: NCCL_IB_DISABLE: "1")');
    expect(text).toContain(
      "extra_args[0]: --tp (argparse reads it as --tp-size) duplicates the typed field 'tp' (fix: set the 'tp' field instead)",
    );
    expect(text).toContain(
      "extra_args[3]: --disable-cuda-graph duplicates the typed field 'cuda_graph' (fix: set 'cuda_graph: false' instead)",
    );
    expect(text).toContain('DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype');
    expect(text).toContain('FlashInfer Cutlass MoE supports only modelopt_fp4, modelopt_fp8');
    expect(text).toContain('x.yml: profiles must end in .yaml (fix: rename it to x.yaml)');
  });

  it('reports a problem inherited from a parent once, at the parent', () => {
    const e = loadError({
      'base.yaml': 'model_path: zai-org/GLM-5\nkv_cache_dtype: fp8_e5m2\n',
      'child.yaml': 'extends: base\ntp: 8\n',
      'grandchild.yaml': 'extends: child\nport: 30001\n',
      'fixed.yaml': 'extends: base\nkv_cache_dtype: bfloat16\n',
    });
    expect(paths(e)).toEqual(['base.yaml: kv_cache_dtype']);
  });

  it('checks the DSA KV rule on the merged profile, where it arises', () => {
    const e = loadError({
      'base.yaml': 'model_path: org/dense-model\nkv_cache_dtype: fp8_e5m2\n',
      'dsa.yaml': 'extends: base\nmodel_path: deepseek-ai/DeepSeek-V3.2-Exp\n',
    });
    expect(paths(e)).toEqual(['dsa.yaml: kv_cache_dtype']);
  });

  it('accepts the DSA KV values and FlashInfer Cutlass MoE with NVFP4 or no quantization', () => {
    const set = loadProfiles(
      profileDir({
        'a.yaml': 'model_path: zai-org/GLM-5\nkv_cache_dtype: bf16\n',
        'b.yaml': 'model_path: zai-org/GLM-5\nkv_cache_dtype: auto\nmoe_runner_backend: flashinfer_cutlass\n',
        'c.yaml':
          'model_path: m\nquantization: modelopt_fp4\nmoe_runner_backend: flashinfer_cutlass\ngpus: [4, 5]\ntp: 2\n',
        'd.yaml':
          'model_path: m\nchunked_prefill_size: -1\nextra_args: [--cuda-graph-bs, "1", "2", "4", --enable-cache-report, --max-prefill-tokens=16384]\n',
      }),
    );
    expect(set.names()).toEqual(['a', 'b', 'c', 'd']);
    expect(renderLaunch(set.get('c'), { python: 'py' }).env).toEqual({ CUDA_VISIBLE_DEVICES: '4,5' });
  });

  it('does not invent a missing model_path when extends itself is invalid', () => {
    const e = loadError({
      'base.yaml': 'model_path: m\n',
      'child.yaml': 'extends: Base Profile\ntp: 2\n',
      'grandchild.yaml': 'extends: child\n',
    });
    expect(paths(e)).toEqual(['child.yaml: extends']);
    expect(e.issues[0]!.message).toMatch(/must be a profile name/);
  });

  it('says a whole number is expected for a fraction', () => {
    const e = loadError({ 'p.yaml': 'model_path: m\ntp: 1.5\n' });
    expect(e.issues[0]).toMatchObject({ message: 'expected a whole number, got number 1.5' });
  });

  it('reports YAML syntax errors and duplicate keys by line', () => {
    const e = loadError({ 'dup.yaml': 'model_path: a\ntp: 1\ntp: 2\n' });
    expect(e.issues).toEqual([
      { path: expect.stringMatching(/dup\.yaml:3$/), message: 'YAML: Map keys must be unique' },
    ]);
  });

  it('reports an unreadable or empty folder', () => {
    expect(() => loadProfiles('/nonexistent/profiles')).toThrow(/cannot read the profiles folder/);
    expect(() => loadProfiles(profileDir({}))).toThrow(/no profiles/);
  });
});
