// Issue 16's figure: how many launches autopilot spends to reach its best configuration, against an exhaustive sweep
// of the same knobs' values (every combination launched and benchmarked at the same load), in the same run.

import type { AutopilotOutcome } from '../src/autopilot/run.ts';
import { grid, type KnobName } from '../src/autopilot/search.ts';
import type { BenchRow } from '../src/bench-load/store.ts';
import { saveVariant } from '../src/profiles/saved.ts';
import { freshDirs, makeBot, testConfig } from '../test/helpers/app.ts';
import { freePort, type Sshd } from '../test/helpers/sshd.ts';
import { type Row, ratio } from './stats.ts';

const KNOB_SET: KnobName[] = ['mem_fraction_static', 'chunked_prefill_size'];
const LOAD = '--concurrency 8 --input-len 128 --output-len 32 --requests 16';
const START = 'glm5-tilelang-bf16';

export async function benchAutopilot(sshd: Sshd): Promise<Row[]> {
  const dirs = freshDirs();
  const bot = makeBot(testConfig(sshd, dirs), dirs);
  const port = await freePort();
  try {
    const r = await bot.run(
      `autopilot ${START} --attempts 60 --knobs ${KNOB_SET.join(',')} ${LOAD} --port ${port} --json`,
    );
    const out = r.data as AutopilotOutcome;
    if (!out?.winner) throw new Error(`autopilot found nothing: ${r.text.slice(0, 500)}`);
    const winner = out.trials.find((t) => t.profile === out.winner)!;
    const launchesToBest = new Set(
      out.trials.filter((t) => t.n <= winner.n && t.attemptId !== null).map((t) => t.attemptId),
    ).size;
    const launches = new Set(out.trials.map((t) => t.attemptId).filter((x) => x !== null)).size;

    // The exhaustive reference: every combination of the same ladders, each launched and measured once.
    const configs = grid({}, KNOB_SET);
    let best = { throughput: 0, at: 0, name: '' };
    let n = 0;
    for (const c of configs) {
      n += 1;
      const name = saveVariant(bot.app.engine, START, c as Record<string, unknown>, 'exhaustive sweep (npm run bench)');
      const l = await bot.run(`launch ${name} --port ${port} --yes --no-check`);
      if (l.exitCode === 0) {
        const b = await bot.run(`bench ${LOAD} --json`);
        const level = (b.data as BenchRow | undefined)?.levels[0];
        if (level && level.outputThroughput > best.throughput)
          best = { throughput: level.outputThroughput, at: n, name };
      }
      if (bot.app.engine.attempts.activeOn('gpu')) await bot.run('stop');
    }
    return [
      {
        metric: `launches to reach the best configuration (${KNOB_SET.join(' x ')}, from the working ${START})`,
        value: `${launchesToBest} (of ${launches} used; best ${winner.throughput!.toFixed(0)} tok/s)`,
        reference: `${configs.length} (exhaustive sweep; its best ${best.throughput.toFixed(0)} tok/s, at launch ${best.at})`,
        ratio: ratio(launchesToBest, configs.length),
        target: '< 0.5x',
      },
      {
        metric: 'throughput of the configuration found vs the sweep best',
        value: `${winner.throughput!.toFixed(1)} tok/s`,
        reference: `${best.throughput.toFixed(1)} tok/s (${best.name.replace(`${START}.`, '')})`,
        ratio: ratio(winner.throughput!, best.throughput),
        target: '>= 0.9x',
      },
    ];
  } finally {
    if (bot.app.engine.attempts.activeOn('gpu')) await bot.run('stop').catch(() => {});
    await bot.app.close();
  }
}
