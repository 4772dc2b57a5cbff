// A streamed /generate chunk as the load client reads it (src/bench-load/client.ts): a server's odd e2e_latency
// (null, negative, a string) does not make the chunk "unexpected" (which fails the request); it reads as absent.
import { describe, expect, it } from 'vitest';
import { Chunk } from '../../src/bench-load/client.ts';

const chunk = (meta: Record<string, unknown>) => ({ text: 'hi', meta_info: { completion_tokens: 3, ...meta } });

describe('a /generate chunk', () => {
  it('keeps a non-negative e2e_latency', () => {
    expect(Chunk.parse(chunk({ e2e_latency: 0.42 })).meta_info).toMatchObject({
      completion_tokens: 3,
      e2e_latency: 0.42,
    });
  });
  it('reads a null, negative or non-number e2e_latency as absent, and keeps the rest', () => {
    for (const bad of [null, -1.5, 'soon'])
      expect(Chunk.parse(chunk({ e2e_latency: bad })).meta_info).toEqual({ completion_tokens: 3 });
  });
  it('still refuses a chunk that is not one', () => {
    expect(Chunk.safeParse({ text: 5 }).success).toBe(false);
  });
});
