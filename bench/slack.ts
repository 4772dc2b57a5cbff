// Issue 4's figures: how fast the Slack face acks slash commands (Slack gives up after 3 s) when 50 arrive at once,
// against the same signed requests to a bare node:http handler that only reads the body and answers 200. The bot's
// Web API calls go to the tests' local Slack stand-in; the commands do their work (status on a local host) after
// the ack, so later acks compete with earlier commands' work, as they would in a busy channel.

import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { startFakeSlack } from '../test/slack/fake-slack.ts';
import { localConfig, sign, slashBody, startFace, waitFor } from '../test/slack/helpers.ts';
import { ms, pct, type Row, ratio } from './stats.ts';

const CONCURRENT = 50;
const ROUNDS = 3;

// The load generator runs in a worker thread: its own event loop (as Slack's servers would be), so the bot's event
// loop is measured, not the client's. Bodies are signed here; the worker only sends them and times the answers.
const CLIENT = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', async ({ port, reqs }) => {
  const out = await Promise.all(reqs.map(async ({ body, ts, sig }) => {
    const t = performance.now();
    const res = await fetch('http://127.0.0.1:' + port + '/slack/events', { method: 'POST', body, headers: {
      'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': String(ts), 'x-slack-signature': sig } });
    await res.text();
    return { status: res.status, ms: performance.now() - t };
  }));
  parentPort.postMessage(out);
});`;

function loadClient() {
  const worker = new Worker(CLIENT, { eval: true });
  return {
    async burst(port: number, bodies: string[]): Promise<number[]> {
      const ts = Math.floor(Date.now() / 1000);
      const done = new Promise<Array<{ status: number; ms: number }>>((resolve) => worker.once('message', resolve));
      worker.postMessage({ port, reqs: bodies.map((body) => ({ body, ts, sig: sign(body, ts) })) });
      const out = await done;
      const bad = out.find((r) => r.status !== 200);
      if (bad) throw new Error(`request failed: HTTP ${bad.status}`);
      return out.map((r) => r.ms);
    },
    close: () => worker.terminate(),
  };
}

export async function benchSlackAck(): Promise<Row[]> {
  const fake = await startFakeSlack();
  // Production log level: debug logging of every Web API call is not what a deployed bot pays.
  const face = await startFace(fake, localConfig(mkdtempSync(join(tmpdir(), 'glm-bench-'))), { logLevel: 'info' });
  const client = loadClient();
  const bare = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', () => r()));
  const barePort = (bare.address() as AddressInfo).port;
  try {
    const commands = ['status', 'help', 'profiles', 'attempts', 'help launch'];
    const make = () =>
      Array.from({ length: CONCURRENT }, (_, i) => slashBody(fake, commands[i % commands.length]!, 'UVIEW'));
    // Warm up both with a full burst (JIT, lazily loaded code paths, connections), then measure alternating rounds.
    await client.burst(
      face.port,
      make().map((x) => x.body),
    );
    await client.burst(
      barePort,
      make().map((x) => x.body),
    );
    await new Promise((r) => setTimeout(r, 1000));
    const bot: number[] = [];
    const ref: number[] = [];
    let answered = 0;
    const answerMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const reqs = make();
      const t = performance.now();
      bot.push(
        ...(await client.burst(
          face.port,
          reqs.map((x) => x.body),
        )),
      );
      // Every command's answer arrives through the outbox (response_url): time until the last one is there.
      const ids = new Set(reqs.map((x) => x.rid));
      await waitFor('answers', () => fake.responses.filter((r) => ids.has(r.id)).length === ids.size, 60_000);
      answerMs.push(performance.now() - t);
      answered += ids.size;
      ref.push(
        ...(await client.burst(
          barePort,
          make().map((x) => x.body),
        )),
      );
      // Let the commands' work settle between rounds, as between bursts in a channel.
      await new Promise((r) => setTimeout(r, 500));
    }
    return [
      {
        metric: `ack latency p50 (${CONCURRENT} concurrent /glm, ${ROUNDS} rounds)`,
        value: ms(pct(bot, 50)),
        reference: `${ms(pct(ref, 50))} (bare node:http 200)`,
        ratio: ratio(pct(bot, 50), pct(ref, 50)),
        target: '-',
      },
      {
        metric: `ack latency p99 (${CONCURRENT} concurrent /glm, ${ROUNDS} rounds)`,
        value: ms(pct(bot, 99)),
        reference: `${ms(pct(ref, 99))} (bare node:http 200)`,
        ratio: ratio(pct(bot, 99), pct(ref, 99)),
        target: '< 300 ms (Slack: 3 s)',
      },
      {
        metric: `all ${CONCURRENT} answers delivered (burst start -> last response_url post), median round`,
        value: ms(pct(answerMs, 50)),
        reference: `${answered} answers, each once`,
        ratio: '-',
        target: '-',
      },
    ];
  } finally {
    await client.close();
    await new Promise<void>((r) => bare.close(() => r()));
    await face.stop();
    await fake.close();
  }
}
