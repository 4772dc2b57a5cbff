// Reading SGLang's flags from argparse's --help text, and checking a launch argv against them as argparse would.
// The fixtures are real CPython argparse output (scripts/argparse-reference.py) for the stand-in's two SGLang
// parsers; the other shapes are the layouts other Python versions and other wrappers produce.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config/load.ts';
import { checkArgv, parseHelp, problemIssue, shippedTable } from '../../src/profiles/help-flags.ts';
// @ts-expect-error: the stand-in is plain JavaScript without types
import { buildParser } from '../../standin/flags.mjs';

const fixture = (name: string) => readFileSync(join(PACKAGE_ROOT, 'test/fixtures/sglang-help', name), 'utf8');

interface StandinAction {
  optionStrings: string[];
  kind: string;
  nargs: number | string | null;
  choices: Array<string | number> | null;
}

describe('parseHelp on real argparse output', () => {
  for (const [file, flavor] of [
    ['f-80.txt', 'f'],
    ['j-120.txt', 'j'],
  ] as const) {
    it(`reads every flag of the ${flavor} parser with its arity and choices (${file})`, () => {
      const table = parseHelp(fixture(file));
      const { parser } = buildParser(flavor, () => {});
      const actions = parser.actions as StandinAction[];
      expect(table.flags.size).toBe(actions.reduce((n, a) => n + a.optionStrings.length, 0));
      for (const a of actions) {
        for (const name of a.optionStrings) {
          const info = table.flags.get(name);
          expect(info, name).toBeDefined();
          const [min, max] =
            a.nargs === 0
              ? [0, 0]
              : a.nargs === '+'
                ? [1, Number.POSITIVE_INFINITY]
                : a.nargs === '*'
                  ? [0, Number.POSITIVE_INFINITY]
                  : a.nargs === '?'
                    ? [0, 1]
                    : [1, 1];
          expect({ name, min: info!.min, max: info!.max }).toEqual({ name, min, max });
          expect(info!.choices, name).toEqual(a.choices ? a.choices.map(String) : null);
          expect(info!.names).toEqual(a.optionStrings);
        }
      }
    });
  }

  it('never reads help text as a flag: a wrapped line starting with -1 or --flag, braces in help beside a switch', () => {
    const table = parseHelp(fixture('j-120.txt'));
    expect(table.flags.has('-1')).toBe(false);
    // `--disable-cuda-graph  Deprecated. Use --cuda-graph-backend-{decode,prefill}=disabled instead.`
    expect(table.flags.get('--disable-cuda-graph')).toMatchObject({ min: 0, max: 0, choices: null });
    const f = parseHelp(fixture('f-80.txt'));
    expect(f.flags.get('--chunked-prefill-size')).toMatchObject({ min: 1, max: 1, choices: null });
  });
});

describe('parseHelp on other layouts', () => {
  it("CPython 3.13's invocation (metavar once, after the last alias) and 3.9's 'optional arguments:'", () => {
    const py313 = [
      'usage: launch_server.py [-h] --model-path MODEL_PATH [--tp-size TP_SIZE]',
      '',
      'options:',
      '  -h, --help            show this help message and exit',
      '  --model-path, --model MODEL_PATH',
      '                        The path of the model weights.',
      '  --tp-size, --tensor-parallel-size TP_SIZE',
      '                        The tensor parallelism size.',
      '  --kv-cache-dtype {auto,fp8_e4m3}',
      '  --trust-remote-code   Whether or not to allow for custom models.',
      '',
    ].join('\n');
    const t = parseHelp(py313);
    expect(t.flags.get('--tensor-parallel-size')).toEqual({
      min: 1,
      max: 1,
      choices: null,
      names: ['--tp-size', '--tensor-parallel-size'],
    });
    expect(t.flags.get('--model')?.names).toEqual(['--model-path', '--model']);
    expect(t.flags.get('--trust-remote-code')?.max).toBe(0);
    const py39 = py313.replace('options:', 'optional arguments:');
    expect(parseHelp(py39).flags.get('--kv-cache-dtype')?.choices).toEqual(['auto', 'fp8_e4m3']);
  });

  it('a choice list broken across lines by a terminal, and colour codes', () => {
    const text = [
      'usage: launch_server.py [-h] [--attention-backend {triton,fa3,flashinfer}]',
      '',
      '\x1b[1;34moptions:\x1b[0m',
      '  --attention-backend {triton,torch_native,fa3,',
      'flashinfer,flashmla}',
      '                        Choose the kernels for attention layers.',
      '  --dist-init-addr DIST_INIT_ADDR,',
      '  --nccl-init-addr DIST_INIT_ADDR',
      '                        The host address for initializing distributed backend.',
      '  --lora-paths [LORA_PATHS ...]',
      '  --numa-node NUMA_NODE [NUMA_NODE ...]',
      '  --hybrid-kvcache-ratio [HYBRID_KVCACHE_RATIO]',
    ].join('\n');
    const t = parseHelp(text);
    expect(t.flags.get('--attention-backend')?.choices).toEqual([
      'triton',
      'torch_native',
      'fa3',
      'flashinfer',
      'flashmla',
    ]);
    expect(t.flags.get('--nccl-init-addr')?.names).toEqual(['--dist-init-addr', '--nccl-init-addr']);
    expect(t.flags.get('--lora-paths')).toMatchObject({ min: 0, max: Number.POSITIVE_INFINITY });
    expect(t.flags.get('--numa-node')).toMatchObject({ min: 1, max: Number.POSITIVE_INFINITY });
    expect(t.flags.get('--hybrid-kvcache-ratio')).toMatchObject({ min: 0, max: 1 });
  });

  it('text that is not argparse help gives no flags', () => {
    expect(parseHelp('/usr/bin/python3: No module named sglang\n').flags.size).toBe(0);
  });
});

describe('checkArgv: what argparse would refuse', () => {
  const table = parseHelp(fixture('f-80.txt'));
  const kinds = (args: string[]) =>
    checkArgv(table, args).map((p) => `${p.kind} ${p.arg}${p.value ? `=${p.value}` : ''}`);

  it('accepts what the bot renders, abbreviations, = values, negative numbers and nargs lists', () => {
    expect(
      kinds([
        '--model-path',
        'm',
        '--tp',
        '8',
        '--kv-cache-dtype=fp8_e4m3',
        '--chunked-prefill-size',
        '-1',
        '--trust-remote-code',
        '--cuda-graph-bs',
        '1',
        '2',
        '4',
        '--nsa-decode-backend',
        'tilelang',
      ]),
    ).toEqual([]);
  });

  it('refuses an unknown flag once (with its values), an ambiguous prefix, a bad choice', () => {
    expect(kinds(['--enable-metrcs', 'x', 'y', '--enable', '--kv-cache-dtype', 'nvfp4'])).toEqual([
      'unknown --enable-metrcs',
      'ambiguous --enable',
      'choice --kv-cache-dtype=nvfp4',
    ]);
  });

  it('refuses a switch given a value, a value flag without one, a value after a switch', () => {
    expect(kinds(['--trust-remote-code=yes', '--port', '--stream-output', 'x'])).toEqual([
      'no-value --trust-remote-code=yes',
      'missing-value --port',
      'stray x',
    ]);
  });

  it('names the setting, what the host takes and the closest choice', () => {
    const [p] = checkArgv(table, ['--kv-cache-dtype', 'fp8_e4m']);
    const issue = problemIssue(p!, () => 'small: kv_cache_dtype', table, 'SGLang 0.5.8 on gpu');
    expect(issue).toEqual({
      path: 'small: kv_cache_dtype',
      message:
        "--kv-cache-dtype 'fp8_e4m' is not a choice of SGLang 0.5.8 on gpu, which takes: auto, fp8_e5m2, fp8_e4m3, bf16, bfloat16, fp4_e2m1",
      fix: "did you mean 'fp8_e4m3'? use one of those, or launch on a host whose SGLang takes 'fp8_e4m'",
    });
    const [u] = checkArgv(table, ['--enable-metrcs']);
    expect(problemIssue(u!, () => 'small: extra_args[0]', table, 'SGLang 0.5.8 on gpu').fix).toMatch(
      /^did you mean '--enable-metrics'\?/,
    );
  });

  it('the shipped table checks the typed flags and lets other flags through', () => {
    const shipped = shippedTable();
    expect(shipped.complete).toBe(false);
    const got = checkArgv(shipped, ['--kv-cache-dtype', 'fp9', '--some-new-flag', 'v', '--trust-remote-code']);
    expect(got.map((p) => p.kind)).toEqual(['choice']);
  });
});
