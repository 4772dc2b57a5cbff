// Tables that fit the terminal: the seeds' attempts table is hundreds of columns wide once a few flags differ.
import { describe, expect, it } from 'vitest';
import { table } from '../../src/format/table.ts';

const headers = [
  '#',
  'profile',
  'attention-backend',
  'nsa-decode-backend',
  'fp8-gemm-backend',
  'kv-cache-dtype',
  'cuda-graph',
  'host',
  'who',
  'started (UTC)',
  'took',
  'outcome',
];
const rows = [
  [
    '1',
    'glm5-attempt1',
    'flashinfer',
    'auto',
    'auto',
    'fp8_e4m3',
    'on',
    'rtx6000',
    'alice@workstation.example',
    '2026-02-19 00:12',
    '2m41s',
    'cuda_oom (cuda_graph_capture)',
  ],
  [
    '2',
    'glm5-attempt5',
    'flashinfer',
    'flashmla_sparse',
    'cutlass',
    'fp8_e4m3',
    'on',
    'rtx6000',
    'alice@workstation.example',
    '2026-02-19 01:02',
    '2m58s',
    'nan_in_sampling (decode)',
  ],
  [
    '3',
    'glm5-attempt7',
    'flashinfer',
    'trtllm',
    'cutlass',
    'auto',
    'off',
    'rtx6000',
    'bob@laptop.example',
    '2026-02-19 02:40',
    '3m03s',
    'loading',
  ],
];

describe('table', () => {
  it('without a width, prints every cell whole', () => {
    const t = table(headers, rows);
    expect(t).toContain('alice@workstation.example');
    expect(t).toContain('cuda_oom (cuda_graph_capture)');
    expect(Math.max(...t.split('\n').map((l) => l.length))).toBeGreaterThan(160);
  });

  it('fits a width by cutting the widest columns, marking each cut', () => {
    const t = table(headers, rows, 160);
    const lines = t.split('\n');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(160);
    expect(lines).toHaveLength(5);
    expect(t).toContain('…');
    // Short columns are never cut: ids, durations, the flags that differ.
    expect(t).toContain('2m41s');
    expect(t).toContain('off');
  });

  it('too narrow to keep columns readable: one block per row, nothing cut', () => {
    const t = table(headers, rows, 60);
    expect(Math.max(...t.split('\n').map((l) => l.length))).toBeLessThanOrEqual(60);
    expect(t).toContain('nsa-decode-backend: flashmla_sparse');
    expect(t).toContain('outcome:            cuda_oom (cuda_graph_capture)');
    expect(t.split('\n\n')).toHaveLength(3);
  });
});
