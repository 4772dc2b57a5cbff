// The seed crash classes against the shipped knowledge base: the section a person would have pointed at comes first.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CATEGORY_TERMS,
  createFindingsIndex,
  type DiagnosisLike,
  defaultFindingsSources,
  diagnosisQuery,
  EXAMPLE_FINDINGS_PATH,
  type Excerpt,
  MAX_EXCERPT_LINES,
} from '../../src/findings/index.ts';
import { CATEGORIES } from '../../src/logs/classify/index.ts';

const index = createFindingsIndex(defaultFindingsSources());
const fileLines = readFileSync(EXAMPLE_FINDINGS_PATH, 'utf8').split('\n');

// The attempts' flags as the ledger stores them (flagView of profiles/glm5-attempt*.yaml).
const base = {
  'model-path': 'lukealonso/GLM-5-NVFP4',
  'tp-size': '8',
  quantization: 'modelopt_fp4',
  'attention-backend': 'flashinfer',
  'nsa-prefill-backend': 'auto',
  'nsa-decode-backend': 'auto',
  'fp8-gemm-backend': 'auto',
  'kv-cache-dtype': 'fp8_e4m3',
  'cuda-graph': 'on',
  'cuda-graph-max-bs': 'auto',
};
const attempt1 = { ...base, 'cuda-graph-max-bs': '512' };
const attempt3 = { ...base, 'attention-backend': 'triton' };
const attempt4 = { ...base, 'nsa-decode-backend': 'flashmla_sparse' };
const attempt6 = { ...attempt4, 'fp8-gemm-backend': 'cutlass', 'kv-cache-dtype': 'auto', 'cuda-graph': 'off' };

const NAN_LINE =
  '[2026-02-19 00:31:07 TP3] /pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:112: _assert_async_cuda_kernel: ' +
  'block: [0,0,0], thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.';

function nan(): DiagnosisLike {
  return {
    category: 'nan_in_sampling',
    phase: 'decode',
    summary: 'probability tensor contains inf/nan',
    evidence: [{ text: NAN_LINE }, { text: 'RuntimeError: CUDA error: device-side assert triggered' }],
  };
}

const last = (e: Excerpt | undefined) => e?.headingPath[e.headingPath.length - 1];

describe('excerptsFor on knowledge/FINDINGS.md', () => {
  it('NaN in sampling with flashmla_sparse: the NaN/DSA-on-SM120 section first', async () => {
    for (const flags of [attempt4, attempt6]) {
      const ex = await index.excerptsFor(nan(), flags);
      expect(last(ex[0])).toBe('NaN in decode (device-side assert)');
      expect(ex[0]!.headingPath).toEqual(['GLM-5-NVFP4 on SM120', 'NaN in decode (device-side assert)']);
      expect(ex[0]!.lines.join('\n')).toContain('probability tensor');
    }
  });

  it('the bare assertion line alone still finds it', async () => {
    const ex = await index.excerptsFor({
      category: 'nan_in_sampling',
      evidence: [{ text: 'Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.' }],
    });
    expect(last(ex[0])).toBe('NaN in decode (device-side assert)');
  });

  it('OOM in CUDA graph capture: the graph-capture memory section', async () => {
    const ex = await index.excerptsFor(
      {
        category: 'cuda_oom',
        phase: 'cuda_graph_capture',
        summary: 'CUDA out of memory during CUDA graph capture',
        evidence: [
          { text: '[2026-02-18 22:10:41 TP5] Capture cuda graph begin. This can take up to several minutes.' },
          {
            text: 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 5 has a total capacity of 94.97 GiB of which 812.00 MiB is free.',
          },
        ],
      },
      attempt1,
    );
    expect(last(ex[0])).toBe('OOM in CUDA graph capture');
    expect(ex[0]!.lines.join('\n')).toMatch(/256/);
  });

  it('CUDA graph capture failure names the same section', async () => {
    const ex = await index.excerptsFor(
      {
        category: 'cuda_graph_capture_failed',
        phase: 'cuda_graph_capture',
        evidence: [{ text: 'Exception: Capture cuda graph failed: CUDA out of memory.' }],
      },
      attempt1,
    );
    expect(last(ex[0])).toBe('OOM in CUDA graph capture');
  });

  it('triton + fp8 KV assertion: its own section', async () => {
    const ex = await index.excerptsFor(
      {
        category: 'backend_assertion',
        phase: 'prefill',
        summary: 'AssertionError in set_kv_buffer',
        evidence: [
          { text: '  File "/opt/sglang/python/sglang/srt/mem_cache/memory_pool.py", line 1498, in set_kv_buffer' },
          { text: '    assert not self.nsa_kv_cache_store_fp8' },
          { text: 'AssertionError' },
        ],
      },
      attempt3,
    );
    expect(last(ex[0])).toBe('Triton attention with fp8 KV: AssertionError');
    expect(ex[0]!.lines.join('\n')).toContain('nsa_kv_cache_store_fp8');
  });

  it('unsupported architecture on SM120: the FlashMLA/DeepGEMM/TRT-LLM section', async () => {
    const ex = await index.excerptsFor(
      {
        category: 'unsupported_arch',
        phase: 'decode',
        evidence: [
          {
            text: '[2026-02-19 01:02:03 TP0] RuntimeError: Assertion error (/deepgemm/csrc/apis/attention.hpp:219): Unsupported architecture',
          },
        ],
      },
      attempt4,
    );
    expect(last(ex[0])).toBe('Unsupported architecture (FlashMLA, DeepGEMM, TRT-LLM-gen)');
  });

  it('shared memory exceeded: the #14311 section, then SM120 vs SM100', async () => {
    const ex = await index.excerptsFor({
      category: 'shared_memory_exceeded',
      phase: 'prefill',
      evidence: [
        {
          text: 'triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: 101376.',
        },
      ],
    });
    expect(ex.map(last).slice(0, 2)).toEqual(['SM120 shared-memory block-size fix (PR #14311)', 'SM120 is not SM100']);
  });

  it('shared-expert fusion size mismatch, port in use, watchdog: their sections', async () => {
    const cases: Array<[DiagnosisLike, string]> = [
      [
        {
          category: 'model_load_error',
          phase: 'weight_load',
          evidence: [{ text: 'RuntimeError: The size of tensor a (3072) must match the size of tensor b (6144)' }],
        },
        'Shared-expert fusion size mismatch',
      ],
      [
        {
          category: 'port_in_use',
          phase: 'startup',
          evidence: [
            {
              text: "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use",
            },
          ],
        },
        'Port already in use',
      ],
      [
        {
          category: 'watchdog_timeout',
          phase: 'decode',
          evidence: [{ text: 'Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)' }],
        },
        'Watchdog timeout',
      ],
    ];
    for (const [d, heading] of cases) expect(last((await index.excerptsFor(d, base))[0])).toBe(heading);
  });

  it('returns 1 to 3 excerpts, each a bounded window of the file', async () => {
    for (const cat of Object.keys(CATEGORY_TERMS)) {
      const ex = await index.excerptsFor({ category: cat, evidence: [] }, attempt4);
      expect(ex.length).toBeGreaterThan(0);
      expect(ex.length).toBeLessThanOrEqual(3);
      for (const e of ex) {
        expect(e.lines.length).toBeLessThanOrEqual(MAX_EXCERPT_LINES);
        expect(e.endLine - e.startLine + 1).toBe(e.lines.length);
        expect(e.lines).toEqual(fileLines.slice(e.startLine - 1, e.endLine));
        expect(e.lines[0]!.trim()).not.toBe('');
        expect(e.url).toBeUndefined(); // the example has no web address
      }
    }
    expect((await index.excerptsFor(nan(), attempt4, 1)).length).toBe(1);
  });

  it('is deterministic', async () => {
    const a = await index.excerptsFor(nan(), attempt6);
    const b = await index.excerptsFor(nan(), attempt6);
    expect(b).toEqual(a);
  });
});

describe('search by hand', () => {
  it('the DeepGemm ue8m0 warning finds the red-herring section', async () => {
    const ex = await index.search(
      'DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0. This might cause accuracy degradation on Blackwell.',
    );
    expect(last(ex[0])).toBe('DeepGemm scale_fmt is not ue8m0');
    expect(ex[0]!.headingPath[0]).toBe('Known warnings (red herrings)');
    expect(ex[0]!.lines.join('\n')).toContain('red herring');
  });

  it('short queries, quoted phrases and class names', async () => {
    expect(last((await index.search('ue8m0'))[0])).toBe('DeepGemm scale_fmt is not ue8m0');
    expect(last((await index.search('modelopt_fp4 disable-cuda-graph kimi'))[0])).toBe('Working launch');
    expect(last((await index.search('"12.48 GB"'))[0])).toBe('Memory');
    expect(last((await index.search('cuda_oom'))[0])).toBe('OOM in CUDA graph capture');
    expect(last((await index.search('#14691'))[0])).toBe('Triton attention with fp8 KV: AssertionError');
    expect(await index.search('zebra')).toEqual([]);
    expect(await index.search('')).toEqual([]);
  });
});

describe('diagnosisQuery', () => {
  const keys = (flags: Record<string, string>) =>
    diagnosisQuery({ category: 'none', evidence: [] }, flags).map((t) => t.tokens.join(' '));

  it('uses flag values that say something, as phrases', () => {
    const k = keys(attempt6);
    expect(k).toContain('flashmla sparse');
    expect(k).toContain('cutlass');
    expect(k).toContain('disable cuda graph');
    expect(k).toContain('glm 5 nvfp4');
    expect(k).not.toContain('auto');
    expect(k).not.toContain('8');
    expect(keys(attempt1)).toContain('cuda graph max bs 512');
  });

  it('drops timestamps, ranks, paths and numbers from evidence', () => {
    const q = diagnosisQuery({ category: 'none', evidence: [{ text: NAN_LINE }] });
    const words = new Set(q.flatMap((t) => t.tokens));
    for (const w of ['2026', '00', 'tp3', 'tp', 'pytorch', 'aten', '112', '0']) expect(words.has(w)).toBe(false);
    for (const w of ['probability', 'tensor', 'nan', 'inf', 'assert']) expect(words.has(w)).toBe(true);
  });

  it('has words for every crash class the classifier speaks', () => {
    // The classifier's own list: a class added there without words here fails this test.
    const classes = CATEGORIES.filter((c) => c !== 'none');
    expect(Object.keys(CATEGORY_TERMS).sort()).toEqual([...classes].sort());
  });
});
