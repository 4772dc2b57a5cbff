// Issue 5's figures: the load benchmark's own accuracy and overhead. The stand-in is told its time to first token
// and per-token delay; the benchmark (over the SSH tunnel, one channel per request) must report them back, and its
// client must stay far from a full core at concurrency 64.
import { runLevel } from '../src/bench-load/client.ts';
import { levelMetrics } from '../src/bench-load/metrics.ts';
import { freshDirs, makeBot, testConfig } from '../test/helpers/app.ts';
import { freePort, type Sshd } from '../test/helpers/sshd.ts';
import { ms, type Row, ratio } from './stats.ts';

const TTFT = 1000;
const TPOT = 20;
const OUT = 64;

export async function benchLoad(sshd: Sshd): Promise<Row[]> {
  const dirs = freshDirs();
  const bot = makeBot(
    testConfig(sshd, { ...dirs, env: { STANDIN_TTFT_MS: String(TTFT), STANDIN_TPOT_MS: String(TPOT) } }),
    dirs,
  );
  const rows: Row[] = [];
  try {
    const l = await bot.run(`launch small --no-check --port ${await freePort()}`);
    if (l.exitCode !== 0) throw new Error(`launch failed: ${l.text}`);
    const a = bot.app.engine.attempts.activeOn('gpu')!;
    const host = bot.app.engine.pool.get('gpu');
    await runLevel(host, a.port, { concurrency: 1, requests: 1, inputLen: 64, outputLen: 8 });
    const cycle = TTFT + (OUT - 1) * TPOT;
    for (const c of [1, 64]) {
      const m = levelMetrics(
        await runLevel(host, a.port, { concurrency: c, requests: c === 1 ? 2 : 64, inputLen: 64, outputLen: OUT }),
      );
      const expectTput = (c * OUT * 1000) / cycle;
      if (m.failed > 0) throw new Error(`concurrency ${c}: ${m.failed} requests failed: ${m.firstError}`);
      rows.push(
        {
          metric: `TTFT p50, concurrency ${c}`,
          value: ms(m.ttftMs.median),
          reference: `${TTFT} ms (stand-in)`,
          ratio: ratio(m.ttftMs.median, TTFT),
          target: 'within 5%',
        },
        {
          metric: `ITL mean, concurrency ${c}`,
          value: ms(m.itlMs.mean),
          reference: `${TPOT} ms (stand-in)`,
          ratio: ratio(m.itlMs.mean, TPOT),
          target: 'within 5%',
        },
        {
          metric: `output tok/s, concurrency ${c}`,
          value: m.outputThroughput.toFixed(1),
          reference: `${expectTput.toFixed(1)} (c x ${OUT} / (TTFT + ${OUT - 1} x TPOT))`,
          ratio: ratio(m.outputThroughput, expectTput),
          target: 'within 5%',
        },
        {
          metric: `client CPU, concurrency ${c}`,
          value: `${m.client.cpuPct.toFixed(1)}% of a core`,
          reference: '100% (one core)',
          ratio: ratio(m.client.cpuPct, 100),
          target: 'below 80%',
        },
        {
          metric: `client event-loop delay p99, concurrency ${c}`,
          value: ms(m.client.loopDelayP99Ms),
          reference: '10 ms (sampling interval)',
          ratio: ratio(m.client.loopDelayP99Ms, 10),
          target: 'below 50 ms',
        },
      );
    }
  } finally {
    await bot.run('stop').catch(() => {});
    await bot.app.close();
  }
  return rows;
}
