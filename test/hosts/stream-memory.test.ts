// A log stream over a real sshd that the bot reads slower than the host writes it: what the bot holds stays bounded
// (the rest waits on the host, behind SSH's flow control), each chunk holds only its own bytes, and every line arrives
// once, in order.
import { describe, expect, it } from 'vitest';
import { ChunkQueue } from '../../src/hosts/output.ts';
import { createSshHost } from '../../src/hosts/ssh.ts';
import { LineSplitter } from '../../src/logs/lines.ts';
import { sshTarget } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

describe('a log stream read slower than it is written', () => {
  it('holds a bounded number of bytes, each chunk its own (no view into a larger ssh2 buffer), and loses no line', async () => {
    const h = createSshHost(sshTarget(shared.sshd));
    // 1.5 million numbered lines (~10 MB): more than the queue, ssh2's buffer and SSH's window hold together.
    const lines = 1_500_000;
    const s = h.stream(['seq', '1', String(lines)]);
    const queue = s.chunks as ChunkQueue;
    expect(queue).toBeInstanceOf(ChunkQueue);
    const splitter = new LineSplitter(0);
    let next = 1;
    let wrong = 0;
    let bytes = 0;
    let maxQueued = 0;
    let pausedWhileBehind = false;
    // A chunk's memory is its own buffer, or a slot in Node's shared pool for a small one.
    let overHeld = 0;
    let chunks = 0;
    for await (const chunk of s.chunks) {
      chunks += 1;
      bytes += chunk.length;
      maxQueued = Math.max(maxQueued, queue.queued);
      if (queue.sourcePaused && bytes < 2 << 20) pausedWhileBehind = true;
      if (chunk.buffer.byteLength > Math.max(chunk.length, Buffer.poolSize)) overHeld += 1;
      for (const l of splitter.push(chunk)) {
        if (l.text !== String(next)) wrong += 1;
        next += 1;
      }
      // The reader is slow for its first 40 chunks (a classifier behind a burst), then catches up.
      if (chunks <= 40) await new Promise((r) => setTimeout(r, 5));
    }
    await s.done;
    await h.close();
    expect(wrong).toBe(0);
    expect(next - 1).toBe(lines);
    expect({ overHeld, of: chunks }).toEqual({ overHeld: 0, of: chunks });
    // The queue's high-water mark (1 MiB) plus the chunk that crossed it; the source was paused while the reader was
    // behind, so the rest waited on the host.
    expect(maxQueued).toBeLessThanOrEqual((1 << 20) + 64 * 1024);
    expect(pausedWhileBehind).toBe(true);
  }, 60_000);
});
