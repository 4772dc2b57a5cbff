// A log stream that grows faster than the bot reads it waits in its source (the pipe, SSH's window), not in memory.
import { PassThrough } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ChunkQueue } from '../../src/hosts/output.ts';

describe('ChunkQueue flow control', () => {
  it('pauses its source past the high-water mark, resumes once read, and loses nothing', async () => {
    const source = new PassThrough({ highWaterMark: 64 * 1024 });
    const queue = new ChunkQueue(256 * 1024);
    queue.from(source);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const total = 10 << 20;
    // The writer offers everything at once, honouring only the source's own backpressure.
    let written = 0;
    const writeAll = async () => {
      while (written < total) {
        written += chunk.length;
        if (!source.write(chunk)) await new Promise((r) => source.once('drain', r));
      }
      source.end();
    };
    const writer = writeAll();
    source.on('end', () => queue.end());
    for (let i = 0; i < 50; i++) await tick();
    expect(source.isPaused()).toBe(true);
    expect(queue.queued).toBeLessThanOrEqual(256 * 1024 + chunk.length);
    expect(written).toBeLessThan(total);
    let read = 0;
    for await (const b of queue) read += b.length;
    await writer;
    expect(read).toBe(total);
  });
});
