// Issue 3's figures: classification throughput on a generated 500 MB log against `grep -E -c` with the catalog's
// patterns in the same run; alert latency from a line appended on the host to the alert reaching the chat
// abstraction over sshd; peak RSS while following 1 GB of log.
import { execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createApp } from '../src/app.ts';
import { createConsoleAdapter } from '../src/chat/console.ts';
import { SETTLE_MS } from '../src/lifecycle/early-alert.ts';
import { diagnoseFile, loadCatalog } from '../src/logs/classify/index.ts';
import { freshDirs, terminalContext, testConfig } from '../test/helpers/app.ts';
import { freePort, type Sshd } from '../test/helpers/sshd.ts';
import { ms, pct, type Row, ratio } from './stats.ts';

// Lines of a healthy server at work, with the red herrings a real log has.
const HEALTHY = [
  '[2026-02-19 00:31:02 TP0] Decode batch, #running-req: 12, #token: 20480, token usage: 0.05, cuda graph: True, gen throughput (token/s): 812.44, #queue-req: 0',
  '[2026-02-19 00:31:02] INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
  '[2026-02-19 00:31:03 TP0] Prefill batch, #new-seq: 1, #new-token: 734, #cached-token: 0, token usage: 0.05, #running-req: 11, #queue-req: 0, input throughput (token/s): 10234.11, ',
  '[2026-02-19 00:31:03 TP3] DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0. This might cause accuracy degradation on Blackwell.',
].join('\n');
const CRASH = [
  '/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:112: _assert_async_cuda_kernel: block: [0,0,0], thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed.',
  '[2026-02-19 00:32:10 TP0] Scheduler hit an exception: Traceback (most recent call last):',
  'RuntimeError: CUDA error: device-side assert triggered',
  '[2026-02-19 00:32:11] Received sigquit from a child process. It usually means the child failed.',
].join('\n');

/**
 * A catalog pattern in grep -E's syntax: JavaScript's non-capturing group `(?:` is a plain group there (grep reads
 * `(?:` as a group starting with a literal `:`, with a warning), `\d` a digit class. Anything else only JavaScript
 * has stops the bench rather than comparing against a different pattern.
 */
export function toGrepERE(source: string): string {
  if (/\(\?[=!<]/.test(source)) throw new Error(`no grep -E equivalent for ${source}`);
  return source.replaceAll('(?:', '(').replace(/(^|[^\\])\\d/g, '$1[0-9]');
}

function writeLog(path: string, bytes: number): void {
  const block = Buffer.from(`${HEALTHY}\n`.repeat(Math.ceil((4 << 20) / (HEALTHY.length + 1))));
  const fd = openSync(path, 'w');
  for (let written = 0; written < bytes; written += block.length) writeSync(fd, block);
  writeSync(fd, `${CRASH}\n`);
  closeSync(fd);
}

export async function benchThroughput(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'glm-bench-log-'));
  try {
    return await measureThroughput(dir);
  } finally {
    // 500 MB per run: not left behind in the temp directory.
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureThroughput(dir: string): Promise<Row[]> {
  const log = join(dir, 'big.log');
  writeLog(log, 500 << 20);
  const size = statSync(log).size;
  const catalog = loadCatalog();
  const patterns = join(dir, 'patterns.txt');
  writeFileSync(
    patterns,
    `${catalog.signatures.flatMap((s) => s.regexes.map((r) => toGrepERE(r.source))).join('\n')}\n`,
  );
  // Each side twice, alternating, the faster run of each kept: on a shared machine one run can be slowed by others.
  let ours = Number.POSITIVE_INFINITY;
  let grep = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 2; run++) {
    let t = performance.now();
    const d = await diagnoseFile(log, { catalog });
    ours = Math.min(ours, performance.now() - t);
    if (d.classification.category !== 'nan_in_sampling')
      throw new Error(`bench log misclassified: ${d.classification.category}`);
    t = performance.now();
    // -i as the widest reading of the catalog (some patterns are case-insensitive).
    execFileSync('sh', ['-c', 'grep -E -i -c -f "$1" "$2" || true', 'grep', patterns, log], { encoding: 'utf8' });
    grep = Math.min(grep, performance.now() - t);
  }
  const mbs = (msTaken: number) => size / (1 << 20) / (msTaken / 1000);
  return [
    {
      metric: `classifier throughput, ${(size / (1 << 20)).toFixed(0)} MB log (file path)`,
      value: `${mbs(ours).toFixed(0)} MB/s (${(ours / 1000).toFixed(2)} s)`,
      reference: `${mbs(grep).toFixed(0)} MB/s (${(grep / 1000).toFixed(2)} s, grep -E -i -c, ${catalog.signatures.length} signatures; best of 2 each)`,
      // Speed against grep's: above 1 is faster than grep.
      ratio: ratio(grep, ours),
      target: '>= 1.00x (as fast as grep)',
    },
  ];
}

function chatApp(sshd: Sshd) {
  const dirs = freshDirs();
  const printed: Array<{ at: number; text: string }> = [];
  const app = createApp({
    loaded: testConfig(sshd, dirs),
    log: pino({ level: 'silent' }),
    chat: {
      adapter: createConsoleAdapter((s) => printed.push({ at: performance.now(), text: s })),
      channel: 'bench',
      parentMessages: false,
      milestonesInThread: false,
    },
  });
  // As the long-lived faces do at start (src/slack/face.ts, the interactive terminal).
  app.preload();
  const ctx = terminalContext(app, { actor: 'bench', longLived: true });
  return { app, printed, run: (t: string) => app.dispatch.run(t, ctx) };
}

export async function benchAlertLatency(sshd: Sshd): Promise<Row[]> {
  const b = chatApp(sshd);
  const latencies: number[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await b.run(`launch small --no-check --port ${await freePort()}`);
    if (r.exitCode) throw new Error(r.text);
    const a = b.app.engine.attempts.activeOn('gpu')!;
    await new Promise((res) => setTimeout(res, 300)); // the monitor's stream is open
    const before = b.printed.length;
    const t = performance.now();
    appendFileSync(a.logPath!, `${CRASH}\n`);
    // A crash on a ready server is told only once the server confirms it (its process gone or /health_generate not
    // 200: early-alert.ts confirmCrash), so the server dies right after the line, as a real NaN crash ends it. The
    // confirmation is inside the figure.
    process.kill(-a.pgid!, 'SIGKILL');
    const end = Date.now() + 10_000;
    // The first crash is a new alert; the same crash again is a "same crash as #N" post (and a count update).
    const isAlert = (t: string) => t.includes('CRASH ') || t.includes('same crash as attempt');
    while (!b.printed.slice(before).some((p) => isAlert(p.text)) && Date.now() < end) {
      await new Promise((res) => setTimeout(res, 2));
    }
    const hit = b.printed.slice(before).find((p) => isAlert(p.text));
    if (!hit) throw new Error('no alert');
    latencies.push(hit.at - t);
    await b.run('stop');
  }
  await b.app.close();
  return [
    {
      metric: 'alert latency p50 (line appended -> chat)',
      value: ms(pct(latencies, 50)),
      reference: `${ms(SETTLE_MS)} (settle time, included)`,
      ratio: ratio(pct(latencies, 50), SETTLE_MS),
      target: '-',
    },
    {
      metric: 'alert latency p95 (line appended -> chat)',
      value: ms(pct(latencies, 95)),
      reference: `${ms(SETTLE_MS)} (settle time, included)`,
      ratio: ratio(pct(latencies, 95), SETTLE_MS),
      target: '< 1000 ms',
    },
    {
      // The first crash after start used to wait for the known-upstream index (built on first use until preload()
      // built it): 700 ms more than the rest.
      metric: 'alert latency of the first crash after start',
      value: ms(latencies[0]!),
      reference: `${ms(pct(latencies, 50))} (p50 above)`,
      ratio: ratio(latencies[0]!, pct(latencies, 50)),
      target: '< 1000 ms',
    },
  ];
}

export async function benchFollowRss(sshd: Sshd): Promise<Row[]> {
  const b = chatApp(sshd);
  const r = await b.run(`launch small --no-check --port ${await freePort()}`);
  if (r.exitCode) throw new Error(r.text);
  const a = b.app.engine.attempts.activeOn('gpu')!;
  // The launch left the bot's own monitor following the log, as in a running bot: it alone reads and classifies the
  // 1 GB (a second follower here would classify every byte twice). How far it got is the offset it saves in the
  // ledger every 64 KiB.
  const startOffset = statSync(a.logPath!).size;
  const seen = () => (b.app.engine.attempts.get(a.id)?.logOffset ?? 0) - startOffset;
  global.gc?.();
  const before = process.memoryUsage();
  let peakHeap = 0;
  let peakBuffers = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakBuffers = Math.max(peakBuffers, m.arrayBuffers);
  }, 20);
  const total = 1 << 30;
  const t = performance.now();
  const block = Buffer.from(`${HEALTHY}\n`.repeat(Math.ceil((4 << 20) / (HEALTHY.length + 1))));
  let written = 0;
  for (; written < total; written += block.length) {
    appendFileSync(a.logPath!, block);
    // Let the follower keep up roughly, as a real log grows over minutes, not in one burst.
    while (written - seen() > 256 << 20) await new Promise((res) => setTimeout(res, 5));
  }
  while (seen() < written - (128 << 10)) await new Promise((res) => setTimeout(res, 5));
  const took = performance.now() - t;
  clearInterval(sampler);
  // The kernel's high-water mark of this process's resident memory: a sampler misses a peak between its ticks.
  const peak = process.resourceUsage().maxRSS * 1024;
  await b.run('stop');
  await b.app.close();
  const mb = (n: number) => `${(n / (1 << 20)).toFixed(0)} MB`;
  return [
    {
      metric: 'peak RSS following 1 GB of log (sshd, classifier on)',
      value: mb(peak),
      reference: `${mb(before.rss)} before following (the bot with its ledger, catalog and SSH connections, the server launched; JS heap ${mb(before.heapUsed)}); while following: JS heap up to ${mb(peakHeap)}, Buffers ${mb(peakBuffers)}`,
      ratio: ratio(peak, before.rss),
      target: '< 120 MB',
    },
    {
      metric: "follow + classify throughput over sshd (the bot's monitor)",
      value: `${(total / (1 << 20) / (took / 1000)).toFixed(0)} MB/s`,
      reference: '-',
      ratio: '-',
      target: '-',
    },
  ];
}
