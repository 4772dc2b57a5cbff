// Reader rules added on the o- round's dev cases, each from constructed lines.

import { describe, expect, it } from 'vitest';
import { splitJoined } from '../../src/logs/classify/normalise.ts';
import { diagnose } from './diagnose.ts';

const answer = (lines: string[]) => {
  const { category, line } = diagnose(lines);
  return { category, root: line };
};

describe('a traceback cut before its exception line', () => {
  const lines = [
    'box-1:100:200 [0] net.cc:50 NCCL WARN Connection closed by remote peer',
    'box-1:100:200 [0] NCCL INFO transport.cc:10 -> 6',
    'box-1:100:100 [0] NCCL INFO comm 0xabc rank 0 nranks 8 cudaDev 0 busId 1000 - Abort COMPLETE',
    'Traceback (most recent call last):',
    '  File "/opt/app/train.py", line 12, in main',
    '    loop(step)',
    '  File "/opt/app/train.py", line 40, in loop',
  ];
  it('takes the failure record before its header as the root, bare and under an ERROR wrapper', () => {
    const bare = answer(lines);
    expect(bare).toEqual({ category: 'nccl_error', root: 1 });
    expect(answer(lines.map((l) => `ERROR:root:${l}`))).toEqual(bare);
  });
});

describe("UCX's signal handler and backtrace in a joined line", () => {
  it('splits before the handler line, the backtrace header and each frame', () => {
    const joined = [
      '[2024-01-01 10:00:00,001] [INFO] [run.py:10:step] step=5',
      '[node-a:4242 :0:4300] Caught signal 11 (Segmentation fault: address not mapped)',
      '==== backtrace (tid:   4300) ====',
      '0 0x00000000000abcde someFunc() ???:0',
      '1 0x00000000000abcdf otherFunc() ???:0',
    ].join(' ');
    expect(splitJoined(joined)).toEqual([
      '[2024-01-01 10:00:00,001] [INFO] [run.py:10:step] step=5',
      '[node-a:4242 :0:4300] Caught signal 11 (Segmentation fault: address not mapped)',
      '==== backtrace (tid:   4300) ====',
      '0 0x00000000000abcde someFunc() ???:0',
      '1 0x00000000000abcdf otherFunc() ???:0',
    ]);
  });
});

describe('a first line cut mid-word inside a C++ logger’s function name', () => {
  const later = [
    '[Engine][WARNING] [cache manager] storeBlocks: Cannot find sequence for request 2050',
    '[Engine][WARNING] [cache manager] storeBlocks: Cannot find sequence for request 2051',
    '[Engine][INFO] serving',
  ];
  it('is the warning a later line repeats (another request’s number), no failure record', () => {
    const log = ['reBlocks: Cannot find sequence for request 2049', ...later];
    expect(answer(log)).toEqual({ category: 'none', root: null });
  });
  it('keeps what it states when no later line repeats it, and a lower-case own label is never read as cut', () => {
    const alone = ['reBlocks: Cannot find sequence for request 2049', '[Engine][INFO] serving'];
    expect(answer(alone).category).not.toBe('none');
    const own = ['error: Cannot find sequence for request 2049', ...later];
    expect(answer(own).category).not.toBe('none');
  });
});
