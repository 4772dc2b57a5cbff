// npm run bench: measured figures, each beside a reference measured in the same run.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startSshd } from '../test/helpers/sshd.ts';
import { benchAutopilot } from './autopilot.ts';
import { benchAlertLatency, benchThroughput } from './diagnosis.ts';
import { benchEngine } from './engine.ts';
import { benchFleet } from './fleet.ts';
import { benchStatusHosts } from './hosts.ts';
import { benchLedger } from './ledger.ts';
import { benchLoad } from './load.ts';
import { benchSlackAck } from './slack.ts';
import { benchSlurm } from './slurm.ts';
import { benchStartup } from './startup.ts';
import type { Row } from './stats.ts';
import { printTable } from './stats.ts';

const sshd = await startSshd();

// The processes whose memory and start-up are measured run compiled JavaScript, as users run the bot: tsx's loader
// (a worker thread with its own heap, and esbuild) would be most of what they measure.
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.bench.json'], { stdio: 'inherit' });

// The follower runs with the V8 flags bin/glm.js's first line gives the bot.
const BOT_FLAGS = readFileSync('bin/glm.js', 'utf8')
  .split('\n')[0]!
  .split(/\s+/)
  .filter((w) => w.startsWith('--'));

function followRssInChild(s: typeof sshd): Row[] {
  const { port, dir, user, hostKeyPub, userKeyPath, knownHostsPath } = s;
  const out = execFileSync(
    process.execPath,
    [
      '--expose-gc',
      ...BOT_FLAGS,
      'dist-bench/bench/follow-rss.js',
      JSON.stringify({ port, dir, user, hostKeyPub, userKeyPath, knownHostsPath }),
    ],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(out.trim().split('\n').pop() ?? '[]') as Row[];
}
try {
  printTable(
    'start-up (issue 15): one-shot commands as users run them (bin/glm.js, compiled), against node -e 1',
    benchStartup(),
  );
  printTable(
    'engine (issue 2): SSH pooling, probe latency, readiness delay; OpenSSH sshd on 127.0.0.1, SGLang stand-in',
    await benchEngine(sshd),
  );
  printTable('diagnosis (issue 3): classifier throughput, alert latency, memory while following', [
    ...(await benchThroughput()),
    ...(await benchAlertLatency(sshd)),
    ...followRssInChild(sshd),
  ]);
  printTable('slack (issue 4): ack latency of 50 concurrent signed /glm commands', await benchSlackAck());
  printTable(
    "load benchmark (issue 5): measured against the stand-in's set TTFT and per-token delay",
    await benchLoad(sshd),
  );
  printTable(
    'fleet (issue 7): GPU lease refusals, multi-node launch and crash handling over two hosts',
    await benchFleet(sshd),
  );
  printTable(
    'slurm (issue 14): a launch through sbatch on a real slurmctld/slurmd against the same launch over direct SSH',
    await benchSlurm(sshd),
  );
  printTable(
    'autopilot (issue 16): launches to the best configuration against an exhaustive sweep of the same knobs, stand-in performance model',
    await benchAutopilot(sshd),
  );
  printTable('how cost grows (issue 15): status over 16 and 64 hosts, ledger commands on 100 and 100,000 attempts', [
    ...(await benchStatusHosts(sshd)),
    ...(await benchLedger()),
  ]);
} finally {
  await sshd.stop();
}
