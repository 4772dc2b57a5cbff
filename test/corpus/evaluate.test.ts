import { describe, expect, it } from 'vitest';
import { rootMatches } from '../../src/corpus/evaluate.ts';

describe('rootMatches (is the labelled root line the one the classifier shows?)', () => {
  const line = '(EngineCore_0 pid=268) ERROR 08-22 10:01:02 [core.py:684] TimeoutError';

  it('takes a label that holds part of the line’s logger prefix: it is an exact substring of the log’s line', () => {
    expect(rootMatches('[core.py:684] TimeoutError', line)).toBe(true);
  });

  it('takes a label written without the wrapper the evidence line carries', () => {
    expect(rootMatches('TimeoutError', line)).toBe(true);
    expect(
      rootMatches(
        'torch.OutOfMemoryError: CUDA out of memory.',
        `[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried`,
      ),
    ).toBe(true);
  });

  it('refuses another line, and a label that is not in the line', () => {
    expect(rootMatches('[core.py:700] TimeoutError', line)).toBe(false);
    expect(rootMatches('RuntimeError: NCCL error', line)).toBe(false);
    expect(rootMatches('TimeoutError', null)).toBe(false);
  });
});
