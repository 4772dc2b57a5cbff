// The stand-in's `python -m sglang.launch_server --help`: byte for byte what CPython's own argparse prints for the
// same parser (the fixtures were written by scripts/argparse-reference.py with CPython 3.11's argparse, whose help
// layout 3.12 keeps), in both flavours and at two terminal widths.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv, PYTHON, ROOT, run } from './helpers.ts';

const fixture = (name: string) => readFileSync(path.join(ROOT, 'test/fixtures/sglang-help', name), 'utf8');
const help = (env: Record<string, string>) => run(PYTHON, ['-m', 'sglang.launch_server', '--help'], baseEnv(env));

describe.concurrent('launch_server --help', () => {
  it('prints what argparse prints for the February 2026 parser at 80 columns, exit 0 on stdout', async () => {
    const r = await help({ COLUMNS: '80' });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(fixture('f-80.txt'));
  });

  it('prints what argparse prints for the July 2026 parser at 120 columns', async () => {
    const r = await help({ COLUMNS: '120', STANDIN_SGLANG_FLAVOR: 'new' });
    expect(r.stdout).toBe(fixture('j-120.txt'));
  });

  it('lays out an option as argparse does: help beside a short invocation, wrapped at textwrap hyphens', async () => {
    const r = await help({ COLUMNS: '80' });
    expect(r.stdout).toContain('  --host HOST           The host of the HTTP server.\n');
    expect(r.stdout).toContain(
      '  --tensor-parallel-size TENSOR_PARALLEL_SIZE, --tp-size TENSOR_PARALLEL_SIZE\n                        The tensor parallelism size.\n',
    );
    const j = await help({ COLUMNS: '80', STANDIN_SGLANG_FLAVOR: 'new' });
    expect(j.stdout).toContain(
      '  --disable-cuda-graph  Deprecated. Use --cuda-graph-\n                        backend-{decode,prefill}=disabled instead.\n',
    );
  });
});
