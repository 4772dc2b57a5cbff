// Issue 7's figures: how fast a launch on held GPUs is refused (against the minutes an OOM takes to show), what a
// second node costs a launch (two-node against one-node launch to ready, same profile pacing), and how fast a crash
// on a worker ends the whole attempt (root line written on node 1 -> every node stopped and the crash recorded)
// against the same for a one-node crash.
import { readFileSync, statSync } from 'node:fs';
import pino from 'pino';
import { type App, createApp } from '../src/app.ts';
import { freshDirs, makeBot, terminalContext, testConfig } from '../test/helpers/app.ts';
import { groupConfig } from '../test/helpers/group-config.ts';
import { startHostGroup } from '../test/helpers/netns.ts';
import { freePort, type Sshd } from '../test/helpers/sshd.ts';
import { ms, pct, type Row, ratio } from './stats.ts';

function bot(app: App) {
  const ctx = terminalContext(app, { actor: 'bench' });
  return (t: string) => app.dispatch.run(t, ctx);
}

/** When `needle` first shows in a local file (polled every 2 ms). */
async function seenAt(file: string, needle: RegExp, timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if (statSync(file).size > 0 && needle.test(readFileSync(file, 'utf8'))) return performance.now();
    } catch {
      // not there yet
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`${needle} not seen in ${file}`);
}

async function untilInactive(app: App, id: number, timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (app.engine.attempts.get(id)?.active === false) return performance.now();
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`attempt #${id} still live`);
}

export async function benchFleet(sshd: Sshd): Promise<Row[]> {
  const rows: Row[] = [];

  // 1. Refusal of a launch on held GPUs, against a pooled `exec true` on the same connection.
  const dirs = freshDirs();
  const one = makeBot(testConfig(sshd, dirs), dirs);
  const held = await one.run(`launch small --gpus 0 --port ${await freePort()} --no-check`);
  if (held.exitCode !== 0) throw new Error(`bench launch failed: ${held.text}`);
  const host = one.app.engine.pool.get('gpu');
  const refusal: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < 20; i++) {
    let t = performance.now();
    const r = await one.run(`launch small --gpus 0 --port ${await freePort()}`);
    refusal.push(performance.now() - t);
    if (!/held by attempt #1/.test(r.text)) throw new Error(`not refused: ${r.text}`);
    t = performance.now();
    await host.exec(['true']);
    bare.push(performance.now() - t);
  }
  rows.push({
    metric: 'launch on held GPUs refused, p50',
    value: ms(pct(refusal, 50)),
    reference: `${ms(pct(bare, 50))} (exec true, pooled)`,
    ratio: ratio(pct(refusal, 50), pct(bare, 50)),
    target: '< 1 s (an OOM shows after minutes)',
  });
  rows.push({
    metric: 'launch on held GPUs refused, p95',
    value: ms(pct(refusal, 95)),
    reference: `${ms(pct(bare, 95))} (exec true, pooled)`,
    ratio: ratio(pct(refusal, 95), pct(bare, 95)),
    target: '-',
  });
  await one.run('stop --attempt 1');

  // 2 and 3 on a two-host group (network namespaces when root, else two sshds on loopback).
  const group = await startHostGroup(2);
  if (group.kind !== 'netns') {
    // On one machine every node would bind the same port (see test/lifecycle/multinode.test.ts).
    rows.push({
      metric: 'two-node figures: not measured (needs network namespaces: root and iproute2)',
      value: '-',
      reference: '-',
      ratio: '-',
      target: '-',
    });
    await group.close();
    await one.app.close();
    return rows;
  }
  try {
    const ready1: number[] = [];
    const ready2: number[] = [];
    const crash1: number[] = [];
    const crash2: number[] = [];
    for (let i = 0; i < 5; i++) {
      // Same pacing on both sides: tp 2 on one host, and tp 2 split over two hosts.
      const app = createApp({ loaded: groupConfig(group.hosts), log: pino({ level: 'silent' }) });
      const run = bot(app);
      // Warm-up: the first launch on a host also captures its environment for issue drafts; keep that out of both.
      await run(`launch small --host node0 --port ${30400 + i} --no-check`);
      await run(`stop --host node0`);
      let t = performance.now();
      let r = await run(`launch small --set tp=2 --host node0 --port ${30500 + i} --no-check`);
      ready1.push(performance.now() - t);
      if (r.exitCode) throw new Error(`one-node launch failed: ${r.text}`);
      await run(`stop --host node0`);
      t = performance.now();
      r = await run(`launch small --set tp=2 --host pair --port ${30600 + i} --no-check`);
      ready2.push(performance.now() - t);
      if (r.exitCode) throw new Error(`two-node launch failed: ${r.text}`);
      await run(`stop --host node0`);
      await app.close();

      // A crash: the root line written on the node -> the attempt closed with every node stopped.
      const crashApp = createApp({
        loaded: groupConfig(group.hosts, { nodeEnv: [{ STANDIN_SCENARIO: 'oom_graph_capture' }, {}] }),
        log: pino({ level: 'silent' }),
      });
      const crashRun = bot(crashApp);
      const single = crashRun(`launch small --set tp=2 --host node0 --port ${30700 + i} --no-check`);
      crash1.push(await crashLatency(crashApp, 'node0', 0));
      await single;
      await crashApp.close();
      const crashWorker = createApp({
        loaded: groupConfig(group.hosts, { nodeEnv: [{}, { STANDIN_SCENARIO: 'oom_graph_capture' }] }),
        log: pino({ level: 'silent' }),
      });
      const multi = bot(crashWorker)(`launch small --set tp=2 --host pair --port ${30800 + i} --no-check`);
      crash2.push(await crashLatency(crashWorker, 'node0', 1));
      await multi;
      await crashWorker.close();
    }
    rows.push({
      metric: 'launch to ready, two nodes (tp 2 split), p50',
      value: ms(pct(ready2, 50)),
      reference: `${ms(pct(ready1, 50))} (one node, tp 2)`,
      ratio: ratio(pct(ready2, 50), pct(ready1, 50)),
      target: '-',
    });
    rows.push({
      metric: 'crash root line on node 1 -> all nodes stopped, recorded, p50',
      value: ms(pct(crash2, 50)),
      reference: `${ms(pct(crash1, 50))} (one node: root line -> recorded)`,
      ratio: ratio(pct(crash2, 50), pct(crash1, 50)),
      target: '< 2 s',
    });
    rows.push({
      metric: '  (hosts: network namespaces joined by a bridge, 5 launches each)',
      value: '',
      reference: '',
      ratio: '',
      target: '',
    });
  } finally {
    await group.close();
  }
  await one.app.close();
  return rows;
}

/** From the OOM root line appearing in node `rank`'s log to the attempt being closed. */
async function crashLatency(app: App, head: string, rank: number): Promise<number> {
  const until = Date.now() + 20_000;
  let id = 0;
  let log = '';
  while (!log && Date.now() < until) {
    const a = app.engine.attempts.activeOn(head);
    if (a && (rank === 0 ? a.logPath : app.engine.attempts.nodes(a.id).find((n) => n.rank === rank)?.logPath)) {
      id = a.id;
      log = rank === 0 ? a.logPath! : app.engine.attempts.nodes(a.id).find((n) => n.rank === rank)!.logPath!;
    } else await new Promise((r) => setTimeout(r, 2));
  }
  if (!log) throw new Error('no log');
  const seen = await seenAt(log, /out of memory/i, 20_000);
  const closed = await untilInactive(app, id, 20_000);
  return closed - seen;
}
