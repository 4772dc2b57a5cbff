// The nvidia-smi stand-in: memory used follows running stand-in servers through the state dir.

import { describe, expect, it } from 'vitest';
import { baseEnv, freePort, GLM5, launch, NVIDIA_SMI, QWEN, run } from './helpers.ts';

const QUERY_GPU = ['--query-gpu=index,name,memory.used,memory.total,compute_cap', '--format=csv,noheader,nounits'];
const QUERY_APPS = ['--query-compute-apps=pid,used_memory', '--format=csv,noheader,nounits'];

function rows(csv: string): string[][] {
  return csv
    .trim()
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => l.split(', '));
}

describe.concurrent('nvidia-smi stand-in', () => {
  it('shows 8 idle SM120 cards when nothing runs', async () => {
    const env = baseEnv();
    const r = await run(NVIDIA_SMI, QUERY_GPU, env);
    expect(r.code).toBe(0);
    expect(rows(r.stdout)).toEqual(
      Array.from({ length: 8 }, (_, i) => [
        String(i),
        'NVIDIA RTX PRO 6000 Blackwell Server Edition',
        '3',
        '97887',
        '12.0',
      ]),
    );
    expect((await run(NVIDIA_SMI, QUERY_APPS, env)).stdout).toBe('');
    const table = await run(NVIDIA_SMI, [], env);
    expect(table.stdout).toContain('NVIDIA-SMI 570.172.08');
    expect(table.stdout).toContain('No running processes found');
    const headed = await run(NVIDIA_SMI, ['--query-gpu=index,memory.used', '--format=csv', '-i', '0'], env);
    expect(headed.stdout).toBe('index, memory.used [MiB]\n0, 3 MiB\n');
    const topo = (await run(NVIDIA_SMI, ['topo', '-m'], env)).stdout.split('\n');
    expect(topo[0]).toBe('\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID');
    expect(topo[1]).toBe('GPU0\t X \tPIX\tNODE\tNODE\tSYS\tSYS\tSYS\tSYS\t0-47,96-143\t0\t\tN/A');
    const bad = await run(NVIDIA_SMI, ['--query-gpu=index,bogus', '--format=csv'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toContain('Field "bogus" is not a valid field to query.');
  });

  it('reports the memory of a running tp 8 server per GPU and its scheduler pids, and frees it when it stops', async (ctx) => {
    const env = baseEnv();
    const port = await freePort();
    const p = launch(['--model-path', GLM5, '--tp', '8', '--cuda-graph-max-bs', '128', '--port', String(port)], env);
    ctx.onTestFinished(() => p.killGroup());
    await p.waitFor(/fired up/);
    const used = rows((await run(NVIDIA_SMI, QUERY_GPU, env)).stdout).map((r) => Number(r[2]));
    expect(used).toHaveLength(8);
    for (const u of used) {
      expect(u).toBeGreaterThan(80_000);
      expect(u).toBeLessThan(97_887);
    }
    const apps = rows((await run(NVIDIA_SMI, QUERY_APPS, env)).stdout);
    expect(apps).toHaveLength(8);
    const pids = new Set(apps.map((a) => Number(a[0])));
    expect(pids.size).toBe(8);
    expect(pids.has(p.pid)).toBe(false);
    const table = (await run(NVIDIA_SMI, [], env)).stdout;
    expect(table).toMatch(/\| +7 +N\/A +N\/A +\d+ +C +python3 +\d+MiB \|/);

    p.signal('SIGTERM');
    expect((await p.waitExit()).code).toBe(0);
    const after = rows((await run(NVIDIA_SMI, QUERY_GPU, env)).stdout).map((r) => Number(r[2]));
    expect(after).toEqual([3, 3, 3, 3, 3, 3, 3, 3]);
  });

  it('ignores the record of a server that was SIGKILLed (dead pid)', async (ctx) => {
    const env = baseEnv();
    const port = await freePort();
    const p = launch(['--model-path', QWEN, '--port', String(port)], env);
    ctx.onTestFinished(() => p.killGroup());
    await p.waitFor(/fired up/);
    const before = rows((await run(NVIDIA_SMI, QUERY_GPU, env)).stdout).map((r) => Number(r[2]));
    expect(before[0]).toBeGreaterThan(1000);
    expect(before.slice(1)).toEqual([3, 3, 3, 3, 3, 3, 3]);
    p.killGroup();
    await p.waitExit();
    const after = rows((await run(NVIDIA_SMI, QUERY_GPU, env)).stdout).map((r) => Number(r[2]));
    expect(after[0]).toBe(3);
  });

  it('honours CUDA_VISIBLE_DEVICES of the server', async (ctx) => {
    const env = baseEnv({ CUDA_VISIBLE_DEVICES: '6,7' });
    const port = await freePort();
    const p = launch(['--model-path', QWEN, '--tp', '2', '--port', String(port)], env);
    ctx.onTestFinished(() => p.killGroup());
    await p.waitFor(/fired up/);
    const used = rows(
      (await run(NVIDIA_SMI, QUERY_GPU, baseEnv({ STANDIN_STATE_DIR: env.STANDIN_STATE_DIR ?? '' }))).stdout,
    ).map((r) => Number(r[2]));
    expect(used.slice(0, 6)).toEqual([3, 3, 3, 3, 3, 3]);
    expect(used[6]).toBeGreaterThan(1000);
    expect(used[7]).toBeGreaterThan(1000);
  });
});
