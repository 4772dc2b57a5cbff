import { describe, expect, it } from 'vitest';
import { cleanLine, LineSplitter } from '../../src/logs/lines.ts';

describe('line splitting', () => {
  it('keeps byte offsets exact across chunk boundaries and multibyte characters', () => {
    const text = 'héllo\nwörld\nlast';
    const buf = Buffer.from(text);
    const s = new LineSplitter(100);
    const out = [];
    for (let i = 0; i < buf.length; i++) out.push(...s.push(buf.subarray(i, i + 1)));
    expect(out.map((l) => l.text)).toEqual(['héllo', 'wörld']);
    expect(out[0]!.endOffset).toBe(100 + Buffer.byteLength('héllo\n'));
    expect(out[1]!.endOffset).toBe(100 + Buffer.byteLength('héllo\nwörld\n'));
    expect(s.resumeOffset).toBe(out[1]!.endOffset);
  });

  it('reduces tqdm carriage-return progress to its last state and strips ANSI colours', () => {
    expect(cleanLine('Loading:  1% | 1/83\rLoading: 50% | 42/83\rLoading: 100% | 83/83')).toBe('Loading: 100% | 83/83');
    expect(cleanLine('\x1b[32mINFO\x1b[0m:     Uvicorn running\r')).toBe('INFO:     Uvicorn running');
    expect(cleanLine('\x1b]0;title\x07plain')).toBe('plain');
  });

  it('bounds memory for a line of any length', () => {
    const s = new LineSplitter(0, 1024);
    const huge = Buffer.alloc(10 * 1024 * 1024, 0x61);
    let out = s.push(huge);
    expect(out).toEqual([]);
    out = s.push(Buffer.from('\nnext\n'));
    expect(out[0]!.text.length).toBeLessThan(1100);
    expect(out[0]!.text.endsWith('[line truncated]')).toBe(true);
    expect(out[0]!.endOffset).toBe(huge.length + 1);
    expect(out[1]).toMatchObject({ text: 'next', endOffset: huge.length + 6 });
  });
});
