// npm run bench: measured figures, each beside a reference measured in the same run.

import { execFileSync } from 'node:child_process';
import { startSshd } from '../test/helpers/sshd.ts';
import { benchAutopilot } from './autopilot.ts';
import { benchAlertLatency, benchThroughput } from './diagnosis.ts';
import { benchEngine } from './engine.ts';
import { benchFleet } from './fleet.ts';
import { benchLoad } from './load.ts';
import { benchSlackAck } from './slack.ts';
import { benchSlurm } from './slurm.ts';
import type { Row } from './stats.ts';
import { printTable } from './stats.ts';

const sshd = await startSshd();

function followRssInChild(s: typeof sshd): Row[] {
  const { port, dir, user, hostKeyPub, userKeyPath, knownHostsPath } = s;
  const out = execFileSync(
    process.execPath,
    [
      'bin/tsx-run.js',
      'bench/follow-rss.ts',
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
} finally {
  await sshd.stop();
}
