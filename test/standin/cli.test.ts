// The stand-in's command line: argparse-exact launch_server errors, python --version / -c, check_env.

import { describe, expect, it } from 'vitest';
import { baseEnv, PYTHON, ROOT, run } from './helpers.ts';

const launch = (args: string[], extra: Record<string, string> = {}) =>
  run(PYTHON, ['-m', 'sglang.launch_server', ...args], baseEnv(extra));

/** The last line argparse prints, and the usage line before it. */
function argparseError(stderr: string): { usage: string; error: string } {
  const lines = stderr.trimEnd().split('\n');
  return { usage: lines[0] ?? '', error: lines[lines.length - 1] ?? '' };
}

describe.concurrent('launch_server argument errors (argparse, exit 2)', () => {
  it('rejects unknown flags with the usage line first', async () => {
    const r = await launch(['--model-path', 'm', '--foo']);
    expect(r.code).toBe(2);
    const { usage, error } = argparseError(r.stderr);
    expect(usage).toBe('usage: launch_server.py [-h] --model-path MODEL_PATH');
    expect(error).toBe('launch_server.py: error: unrecognized arguments: --foo');
    expect(r.stdout).toBe('');
  });

  it('lists an unknown flag with its value', async () => {
    const r = await launch(['--model-path', 'm', '--foo', 'bar']);
    expect(argparseError(r.stderr).error).toBe('launch_server.py: error: unrecognized arguments: --foo bar');
  });

  it('validates choices like argparse (repr of each choice)', async () => {
    const r = await launch(['--model-path', 'm', '--kv-cache-dtype', 'fp9']);
    expect(r.code).toBe(2);
    expect(argparseError(r.stderr).error).toBe(
      "launch_server.py: error: argument --kv-cache-dtype: invalid choice: 'fp9' (choose from 'auto', 'fp8_e5m2', 'fp8_e4m3', 'bf16', 'bfloat16', 'fp4_e2m1')",
    );
  });

  it('requires --model-path (named with its alias, as argparse does)', async () => {
    const r = await launch(['--tp', '8']);
    expect(r.code).toBe(2);
    expect(argparseError(r.stderr).error).toBe(
      'launch_server.py: error: the following arguments are required: --model-path/--model',
    );
  });

  it('reports bad values, ambiguous prefixes and explicit store_true values like argparse', async () => {
    // Many argv cases through the same parser in one process (spawning one per case is slow on small machines).
    const cases: Record<string, string[]> = {
      badInt: ['--model-path', 'm', '--tp', 'x'],
      badFloat: ['--model-path', 'm', '--mem-fraction-static=abc'],
      ambiguous: ['--model-path', 'm', '--disable-cuda'],
      explicit: ['--model-path', 'm', '--trust-remote-code=1'],
      missingValue: ['--model-path', 'm', '--port'],
      missingList: ['--model-path', 'm', '--cuda-graph-bs'],
      dsa: ['--model-path', 'm', '--dsa-decode-backend', 'tilelang'],
      negative: ['--model-path', 'm', '--chunked-prefill-size', '-1', '--cuda-graph-bs', '1', '2', '--foo'],
      ok: ['--model', 'm', '--tp=8', '--nsa-decode', 'flashmla_sparse', '--ep', '8', '--disable-cuda-graph'],
    };
    const script = `
      import { buildParser } from ${JSON.stringify(`${ROOT}/standin/flags.mjs`)};
      const out = {};
      for (const [k, argv] of Object.entries(${JSON.stringify(cases)})) {
        const { parser } = buildParser('f', () => {});
        try { const r = parser.parse(argv); out[k] = { values: r.values, seen: r.seen }; }
        catch (e) { out[k] = { error: parser.formatError(e.message).trimEnd().split(String.fromCharCode(10)).pop() }; }
      }
      process.stdout.write(JSON.stringify(out));`;
    const r = await run(process.execPath, ['--input-type=module', '-e', script], baseEnv());
    const res = JSON.parse(r.stdout);
    const err = (k: string) => res[k].error;
    expect(err('badInt')).toBe(
      "launch_server.py: error: argument --tensor-parallel-size/--tp-size: invalid int value: 'x'",
    );
    expect(err('badFloat')).toBe("launch_server.py: error: argument --mem-fraction-static: invalid float value: 'abc'");
    expect(err('ambiguous')).toBe(
      'launch_server.py: error: ambiguous option: --disable-cuda could match --disable-cuda-graph, --disable-cuda-graph-padding',
    );
    expect(err('explicit')).toBe(
      "launch_server.py: error: argument --trust-remote-code: ignored explicit argument '1'",
    );
    expect(err('missingValue')).toBe('launch_server.py: error: argument --port: expected one argument');
    expect(err('missingList')).toBe(
      'launch_server.py: error: argument --cuda-graph-bs: expected at least one argument',
    );
    expect(err('dsa')).toBe('launch_server.py: error: unrecognized arguments: --dsa-decode-backend tilelang');
    expect(err('negative')).toBe('launch_server.py: error: unrecognized arguments: --foo');
    expect(res.ok.values).toMatchObject({
      model_path: 'm',
      tensor_parallel_size: 8,
      nsa_decode_backend: 'flashmla_sparse',
      expert_parallel_size: 8,
      disable_cuda_graph: true,
    });
    expect(res.ok.seen.tensor_parallel_size).toBe('--tp-size');
  });

  it('wraps the usage at $COLUMNS like argparse', async () => {
    const r = await launch(['--model-path', 'm', '--foo'], { COLUMNS: '200' });
    const first = r.stderr.split('\n')[0] ?? '';
    expect(
      first.startsWith('usage: launch_server.py [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH]'),
    ).toBe(true);
    expect(first.length).toBeLessThanOrEqual(198);
  });

  it('in the new flavour: dsa names, --tp-size first, nsa names as deprecated aliases', async () => {
    const env = { STANDIN_SGLANG_FLAVOR: 'new' };
    const r = await launch(['--model-path', 'm', '--tp', 'x'], env);
    expect(argparseError(r.stderr).error).toBe(
      "launch_server.py: error: argument --tp-size/--tensor-parallel-size: invalid int value: 'x'",
    );
    const d = await launch(['--model-path', 'm', '--nsa-decode-backend', 'tilelang', '--foo'], env);
    expect(d.stderr).toContain(
      "'--nsa-decode-backend' is deprecated and will be removed in a future release. Use '--dsa-decode-backend' instead.",
    );
    const c = await launch(['--model-path', 'm', '--dsa-decode-backend', 'nope'], env);
    expect(argparseError(c.stderr).error).toContain("argument --dsa-decode-backend: invalid choice: 'nope'");
  });
});

describe.concurrent('python entry points', () => {
  it('answers --version and -V', async () => {
    expect((await run(PYTHON, ['--version'], baseEnv())).stdout).toBe('Python 3.12.3\n');
    expect((await run(PYTHON, ['-V'], baseEnv())).stdout).toBe('Python 3.12.3\n');
  });

  it('prints sglang.__version__ (labelled as the stand-in)', async () => {
    const r = await run(PYTHON, ['-c', 'import sglang; print(sglang.__version__)'], baseEnv());
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('0.5.8+standin\n');
    const n = await run(
      PYTHON,
      ['-c', 'import sglang; print(sglang.__version__)'],
      baseEnv({ STANDIN_SGLANG_FLAVOR: 'new' }),
    );
    expect(n.stdout).toBe('0.5.15+standin\n');
  });

  it('fails like Python for anything else', async () => {
    const c = await run(PYTHON, ['-c', 'print(1)'], baseEnv());
    expect(c.code).toBe(1);
    expect(c.stderr).toMatch(/^Traceback \(most recent call last\):/);
    const m = await run(PYTHON, ['-m', 'nosuchmodule'], baseEnv());
    expect(m.code).toBe(1);
    expect(m.stderr).toBe('/usr/bin/python3: No module named nosuchmodule\n');
    const f = await run(PYTHON, ['script.py'], baseEnv());
    expect(f.code).toBe(2);
    expect(f.stderr).toContain("can't open file 'script.py'");
  });

  it('runs check_env: key: value lines on stdout for 8 simulated SM120 GPUs', async () => {
    const r = await run(PYTHON, ['-m', 'sglang.check_env'], baseEnv());
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^Python: 3\.12\.3 /);
    expect(lines).toContain('CUDA available: True');
    expect(lines).toContain('GPU 0,1,2,3,4,5,6,7: NVIDIA RTX PRO 6000 Blackwell Server Edition');
    expect(lines).toContain('GPU 0,1,2,3,4,5,6,7 Compute Capability: 12.0');
    expect(lines).toContain('PyTorch: 2.9.1+cu128');
    expect(lines).toContain('sglang: 0.5.8+standin');
    expect(lines).toContain('transformers: 5.2.0');
    expect(lines).toContain('vllm: Module Not Found');
    expect(r.stdout).toContain('NVIDIA Topology: \n\tGPU0\tGPU1');
    expect(r.stdout).toMatch(/GPU0\t X \tPIX\tNODE\tNODE\tSYS/);
    expect(lines.some((l) => /^Simulated: True/.test(l))).toBe(true);
    const order = [
      'Python',
      'CUDA available',
      'CUDA_HOME',
      'NVCC',
      'CUDA Driver Version',
      'PyTorch',
      'sglang',
      'NVIDIA Topology',
      'ulimit soft',
    ];
    const idx = order.map((k) => lines.findIndex((l) => l.startsWith(`${k}:`)));
    expect(idx.every((v, i) => v >= 0 && (i === 0 || v > (idx[i - 1] ?? -1)))).toBe(true);
  });
});
