// Multi-node basics: --nnodes/--node-rank/--dist-init-addr rendezvous on loopback, worker dummy health server.

import { describe, expect, it } from 'vitest';
import { baseEnv, type Ctx, freePort, GLM5, http, launch, type Proc } from './helpers.ts';

function node(ctx: Ctx, rank: number, dist: number, port: number, extra: string[] = []): Proc {
  const p = launch(
    [
      '--model-path',
      GLM5,
      '--tp',
      '16',
      '--nnodes',
      '2',
      '--node-rank',
      String(rank),
      '--dist-init-addr',
      `127.0.0.1:${dist}`,
      '--cuda-graph-max-bs',
      '64',
      '--port',
      String(port),
      ...extra,
    ],
    baseEnv(),
  );
  ctx.onTestFinished(() => p.killGroup());
  return p;
}

describe.concurrent('multi-node', () => {
  it('the head waits for the worker, then both load; only the head serves the API', async (ctx) => {
    const [dist, hp, wp] = [await freePort(), await freePort(), await freePort()];
    const head = node(ctx, 0, dist, hp);
    await head.waitFor(/TP7\] Init torch distributed begin\./);
    await new Promise((r) => setTimeout(r, 100));
    expect(head.out).not.toContain('Load weight begin');
    const worker = node(ctx, 1, dist, wp);
    await head.waitFor(/fired up/);
    await worker.waitFor(/Uvicorn running on/);
    // ranks: head logs TP0-7, the worker TP8-15; shard progress only on rank 0
    expect(head.out).toMatch(/ TP7\] Load weight end\./);
    expect(head.out).not.toMatch(/ TP8\]/);
    expect(worker.out).toMatch(/ TP15\] Load weight end\./);
    expect(worker.out).not.toMatch(/ TP7\]/);
    expect(worker.out).not.toContain('Loading safetensors checkpoint shards');
    expect(worker.out).not.toContain('fired up');
    expect((await http(hp, '/health')).status).toBe(200);
    expect((await http(wp, '/health')).status).toBe(200);
    expect((await http(wp, '/health_generate')).status).toBe(200);
    expect((await http(wp, '/v1/models')).status).toBe(404);
    expect((await http(hp, '/v1/models')).status).toBe(200);
  });

  it('a worker fails like torch.distributed when the head is unreachable', async (ctx) => {
    const [dist, wp] = [await freePort(), await freePort()];
    const worker = node(ctx, 1, dist, wp, ['--dist-timeout', '30']);
    expect((await worker.waitExit()).signal).toBe('SIGKILL');
    expect(worker.out).toMatch(
      new RegExp(
        `torch\\.distributed\\.DistNetworkError: The client socket has timed out after \\d+ms while trying to connect to \\(127\\.0\\.0\\.1, ${dist}\\)\\.`,
      ),
    );
    expect(worker.out).toMatch(/ TP8\] Scheduler hit an exception: Traceback/);
  });

  it('the head times out waiting for workers', async (ctx) => {
    const [dist, hp] = [await freePort(), await freePort()];
    const head = node(ctx, 0, dist, hp, ['--dist-timeout', '30']);
    await head.waitExit();
    expect(head.out).toContain('torch.distributed.DistStoreError: Timed out after');
    expect(head.out).toContain('waiting for clients. 1/2 clients joined.');
  });

  it('a worker dies with gloo "Connection closed by peer" when the head goes away', async (ctx) => {
    const [dist, hp, wp] = [await freePort(), await freePort(), await freePort()];
    const head = node(ctx, 0, dist, hp);
    const worker = node(ctx, 1, dist, wp);
    await worker.waitFor(/Uvicorn running on/);
    await head.waitFor(/fired up/);
    head.killGroup();
    await worker.waitExit();
    expect(worker.out).toContain(`Connection closed by peer [127.0.0.1]:${dist}`);
  });
});
