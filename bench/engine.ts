// Issue 2's figures: SSH connections for 50 concurrent probes (pooled vs one connection per probe), probe latency
// against a bare exec round trip, and the delay from the stand-in writing its ready line to the bot reporting ready
// against the delay of a bare `tail -F` stream delivering an appended line.
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSshHost, type SshTarget } from '../src/hosts/ssh.ts';
import { freshDirs, makeBot, testConfig } from '../test/helpers/app.ts';
import { freePort, type Sshd, userDir } from '../test/helpers/sshd.ts';
import { ms, pct, type Row, ratio } from './stats.ts';

function target(sshd: Sshd): SshTarget {
  return {
    name: 'bench',
    host: '127.0.0.1',
    port: sshd.port,
    username: sshd.user,
    privateKey: readFileSync(sshd.userKeyPath),
    knownHostsPath: sshd.knownHostsPath,
    keepaliveIntervalMs: 5000,
    connectTimeoutMs: 10_000,
    execTimeoutMs: 30_000,
  };
}

/** Waits for `needle` to appear in a local file; returns the time it was first seen (polled every 1 ms). */
async function seenAt(file: string, needle: string, fromByte: number, timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if (statSync(file).size > fromByte && readFileSync(file, 'utf8').slice(fromByte).includes(needle))
        return performance.now();
    } catch {
      // not created yet
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error(`${needle} not seen in ${file}`);
}

export async function benchEngine(sshd: Sshd): Promise<Row[]> {
  const rows: Row[] = [];
  const dirs = freshDirs();
  const bot = makeBot(testConfig(sshd, { ...dirs, env: { STANDIN_TIME_SCALE: '0.002' } }), dirs);
  const port = await freePort();
  const out = await bot.run(`launch small --port ${port} --no-check`);
  if (out.exitCode !== 0) throw new Error(`bench launch failed: ${out.text}`);

  // 1. 50 concurrent probes through the bot (one pooled connection), against 50 probes each on its own connection.
  // A fresh pool, so the count covers exactly the probes.
  await bot.app.engine.pool.closeAll();
  const host = bot.app.engine.pool.get('gpu') as ReturnType<typeof createSshHost>;
  const before = host.stats.connectionsOpened;
  const probeTimes: number[] = [];
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      const t = performance.now();
      const r = await bot.run('probe --json');
      probeTimes.push(performance.now() - t);
      if (r.exitCode !== 0) throw new Error(`probe failed: ${r.text.slice(0, 200)}`);
    }),
  );
  const opened = host.stats.connectionsOpened - before;
  const freshTimes: number[] = [];
  let freshConnections = 0;
  // sshd refuses bursts of unauthenticated connections (MaxStartups 10:30:100), so the reference goes 5 at a time.
  for (let batch = 0; batch < 10; batch++) {
    await Promise.all(
      Array.from({ length: 5 }, async () => {
        const t = performance.now();
        const h = createSshHost(target(sshd));
        await h.exec(['true']);
        freshConnections += h.stats.connectionsOpened;
        freshTimes.push(performance.now() - t);
        await h.close();
      }),
    );
  }
  rows.push({
    metric: 'SSH connections for 50 concurrent probes',
    value: String(opened),
    reference: `${freshConnections} (a connection per probe, 5 at a time)`,
    ratio: ratio(opened, freshConnections),
    target: '1',
  });
  rows.push({
    metric: 'probe latency p50 (50 concurrent, full probe)',
    value: ms(pct(probeTimes, 50)),
    reference: `${ms(pct(freshTimes, 50))} (new connection + exec true)`,
    ratio: ratio(pct(probeTimes, 50), pct(freshTimes, 50)),
    target: '-',
  });
  rows.push({
    metric: 'probe latency p95 (50 concurrent, full probe)',
    value: ms(pct(probeTimes, 95)),
    reference: `${ms(pct(freshTimes, 95))} (new connection + exec true)`,
    ratio: ratio(pct(probeTimes, 95), pct(freshTimes, 95)),
    target: '-',
  });

  // Sequential probes: the latency a person sees.
  const seq: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < 30; i++) {
    let t = performance.now();
    await bot.run('probe --json');
    seq.push(performance.now() - t);
    t = performance.now();
    await host.exec(['true']);
    bare.push(performance.now() - t);
  }
  rows.push({
    metric: 'probe latency p50 (one at a time)',
    value: ms(pct(seq, 50)),
    reference: `${ms(pct(bare, 50))} (exec true, pooled)`,
    ratio: ratio(pct(seq, 50), pct(bare, 50)),
    target: '-',
  });
  rows.push({
    metric: 'probe latency p95 (one at a time)',
    value: ms(pct(seq, 95)),
    reference: `${ms(pct(bare, 95))} (exec true, pooled)`,
    ratio: ratio(pct(seq, 95), pct(bare, 95)),
    target: '-',
  });
  await bot.run('stop');

  // 2. Ready line written -> bot says ready (no first request), over several launches.
  const delays: number[] = [];
  for (let i = 0; i < 12; i++) {
    const p = await freePort();
    let readyAt = 0;
    const said = bot.said.length;
    const run = bot.run(`launch small --port ${p} --no-check`);
    // The run directory appears once the launcher ran; find the log and watch it locally.
    const runs = join(dirs.workdir, 'runs');
    let log = '';
    const until = Date.now() + 10_000;
    while (!log && Date.now() < until) {
      const a = bot.app.engine.attempts.activeOn('gpu');
      if (a?.logPath) log = a.logPath;
      else await new Promise((r) => setTimeout(r, 1));
    }
    const lineSeen = seenAt(log, 'The server is fired up and ready to roll!', 0, 20_000);
    const r = await run;
    readyAt = performance.now();
    const seen = await lineSeen;
    if (r.exitCode !== 0) throw new Error(`launch failed: ${r.text}`);
    // Ready is reported when the command returns: measure to that moment.
    delays.push(readyAt - seen);
    void said;
    void runs;
    await bot.run('stop');
  }
  // Reference: a bare tail -F stream over the same connection delivering an appended line.
  const dir = userDir('glm-bench-');
  const file = join(dir, 'ref.log');
  writeFileSync(file, '', { mode: 0o666 });
  const stream = host.stream(['tail', '-c', '+0', '-F', '--', file]);
  const iter = stream.chunks[Symbol.asyncIterator]();
  const refDelays: number[] = [];
  await new Promise((r) => setTimeout(r, 300));
  for (let i = 0; i < 12; i++) {
    const t = performance.now();
    appendFileSync(file, `line ${i}\n`);
    await iter.next();
    refDelays.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
  stream.close();
  rows.push({
    metric: 'ready line -> bot reports ready p50',
    value: ms(pct(delays, 50)),
    reference: `${ms(pct(refDelays, 50))} (tail -F line delivery)`,
    ratio: ratio(pct(delays, 50), pct(refDelays, 50)),
    target: '-',
  });
  rows.push({
    metric: 'ready line -> bot reports ready p95',
    value: ms(pct(delays, 95)),
    reference: `${ms(pct(refDelays, 95))} (tail -F line delivery)`,
    ratio: ratio(pct(delays, 95), pct(refDelays, 95)),
    target: '< 300 ms',
  });
  await bot.app.close();
  return rows;
}
