// Autopilot on the seeds' story over a real sshd: from glm5-nvfp4 (NaN at the first request on SM120) to the
// tilelang/bf16 configuration the stand-in serves, without a person, then faster under the SLO; a restart in the
// middle resumes from the ledger; a cancel stops every server; the GPUs stay held between trials.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type AutopilotOutcome, resumeAutopilots } from '../../src/autopilot/run.ts';
import { autopilotStore } from '../../src/autopilot/store.ts';
import { readGpus } from '../../src/lifecycle/host-info.ts';
import { freshDirs, type TestBot, until } from '../helpers/app.ts';
import { decodePng } from '../helpers/png.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();
const bots: TestBot[] = [];

function freshBot(dirs = freshDirs()): TestBot {
  const b = shared.bot({ dirs });
  bots.push(b);
  return b;
}

const LOAD = '--concurrency 8 --input-len 128 --output-len 32 --requests 16';
// The tuning test's load: one request at a time, so each decodes alone (batch 1) and the server's own latency
// (meta_info.e2e_latency, the stand-in's simulated clock), which the tuner compares, follows the configuration only.
// At 8 at once the batch a request joins depends on when the client's next request arrives: on the machine's speed.
const TUNE_LOAD = '--concurrency 1 --input-len 128 --output-len 16 --requests 8';

const liveOfRuns = (b: TestBot) =>
  b.app.engine.attempts.list({ limit: 1000 }).filter((a) => a.active && a.groupKey?.startsWith('autopilot:'));

async function idleGpus(b: TestBot): Promise<boolean> {
  const { engine } = b.app;
  const r = await readGpus(engine.pool.get('gpu'), engine.loaded.config.hosts.gpu!);
  return r.gpus.every((g) => g.memUsedMiB < 1024);
}

describe('autopilot', () => {
  it('goes from the crashing glm5-nvfp4 to the working tilelang/bf16 configuration, then tunes it', async () => {
    const bot = freshBot();
    const port = await freePort();
    const r = await bot.run(
      `autopilot glm5-nvfp4 --allow-known-crash --attempts 12 --knobs mem_fraction_static,chunked_prefill_size ${TUNE_LOAD} --port ${port} --json`,
    );
    const out = r.data as AutopilotOutcome;
    expect(r.exitCode, r.text.slice(0, 4000)).toBe(0);
    const [first, second, ...rest] = out.trials;
    // The seeds' attempt 2, then the configuration the stand-in serves on SM120, chosen from the crash class.
    expect(first).toMatchObject({
      phase: 'find',
      profile: 'glm5-nvfp4',
      outcome: 'crashed',
      category: 'nan_in_sampling',
    });
    expect(second).toMatchObject({ phase: 'find', profile: 'glm5-tilelang-bf16', outcome: 'works' });
    const tuned = rest.filter((t) => t.phase === 'tune');
    expect(tuned[0]).toMatchObject({
      changes: '(working configuration)',
      outcome: 'measured',
      attemptId: second!.attemptId,
    });
    const base = tuned[0]!.throughput!;
    const winner = out.trials.find((t) => t.profile === out.winner)!;
    expect(winner.phase).toBe('tune');
    expect(winner.meetsSlo).toBe(true);
    expect(winner.throughput!).toBeGreaterThan(base);
    for (const t of tuned) expect(t.knobs).toHaveProperty('mem_fraction_static');
    // The search's path, the same on every run: the figures are the server's own (the stand-in's simulated clock),
    // so each step is taken or not by what the configuration does, never by how busy the machine was. A larger static
    // pool helps until it no longer fits (0.95 OOMs beside 8192-token chunks, 16384-token chunks beside 0.93), then
    // smaller chunks help until a step gains less than MIN_GAIN (512 tokens), and a second pass finds nothing more.
    expect(tuned.slice(1).map((t) => `${t.changes}: ${t.outcome}`)).toEqual([
      'mem_fraction_static=0.91: measured',
      'mem_fraction_static=0.93: measured',
      'mem_fraction_static=0.95: crashed',
      'mem_fraction_static=0.93, chunked_prefill_size=16384: crashed',
      'mem_fraction_static=0.93, chunked_prefill_size=4096: measured',
      'mem_fraction_static=0.93, chunked_prefill_size=2048: measured',
      'mem_fraction_static=0.93, chunked_prefill_size=1024: measured',
      'mem_fraction_static=0.93, chunked_prefill_size=512: measured',
      'mem_fraction_static=0.95, chunked_prefill_size=1024: measured',
      'mem_fraction_static=0.91, chunked_prefill_size=1024: measured',
    ]);
    // The winner is the fastest configuration measured: the static pool at 0.93 and the smallest chunks.
    const fastest = Math.max(...tuned.filter((t) => t.outcome === 'measured').map((t) => t.throughput!));
    expect(winner.throughput).toBe(fastest);
    expect(winner.knobs).toEqual({ mem_fraction_static: 0.93, chunked_prefill_size: 512 });
    expect(out.ending).toBe('tuned: no step improved throughput any more under the SLO');
    // Every trial is an attempt in the ledger with its figures; the budget holds; nothing is left running.
    const attempts = bot.app.engine.attempts.list({ limit: 1000 });
    expect(attempts.length).toBeLessThanOrEqual(12);
    expect(attempts.every((a) => a.groupKey === out.run.groupKey && !a.active)).toBe(true);
    expect(await idleGpus(bot)).toBe(true);
    expect(autopilotStore(bot.app.engine.ledger).holdsOn('gpu')).toEqual([]);
    // The winner as a profile that extends the start and names only what changed.
    const file = parse(readFileSync(out.profileFile!, 'utf8')) as Record<string, unknown>;
    expect(file.extends).toBe('glm5-nvfp4');
    expect(file).toMatchObject({ kv_cache_dtype: 'bfloat16', nsa_decode_backend: 'tilelang' });
    expect(file).not.toHaveProperty('model_path');
    expect(file).not.toHaveProperty('tp');
    const name = out
      .profileFile!.split('/')
      .pop()!
      .replace(/\.yaml$/, '');
    expect((await bot.run(`launch ${name} --dry-run`)).text).toContain('--nsa-decode-backend tilelang');
    // The evidence: the table, the chart, the upstream draft for the NaN.
    expect(out.report).toMatch(
      /#\s+phase\s+attempt\s+what changed\s+outcome\s+class\s+out tok\/s\s+TTFT p99 ms\s+ITL p50 ms/,
    );
    expect(readFileSync(out.chartPath!).subarray(1, 4).toString()).toBe('PNG');
    const chart = decodePng(readFileSync(out.chartPath!));
    expect(chart).toMatchObject({ width: 1000, height: 460 });
    expect(chart.dark()).toBeGreaterThan(1000); // text and the SLO's dashed lines, not a blank page
    expect(readFileSync(out.draftFile!, 'utf8')).toMatch(/nan|NaN|probability tensor/);
    expect(bot.app.engine.audit.list(50).some((a) => a.command === 'autopilot')).toBe(true);
  }, 240_000);

  it('skips the configuration known to crash on SM120, and resumes after a bot restart from the ledger', async () => {
    const dirs = freshDirs();
    const a = freshBot(dirs);
    const port = await freePort();
    const running = a.run(
      `autopilot glm5-nvfp4 --attempts 6 --knobs chunked_prefill_size ${LOAD} --port ${port} --json`,
    );
    const store = autopilotStore(a.app.engine.ledger);
    await until(
      () => store.trials(1).some((t) => t.phase === 'tune' && t.changes !== '(working configuration)'),
      120_000,
    );
    await a.app.close();
    const stopped = (await running).data as AutopilotOutcome;
    expect(stopped.ending).toMatch(/interrupted by a bot restart/);
    const before = stopped.trials.length;

    const b = freshBot(dirs);
    const said: string[] = [];
    const resumed = resumeAutopilots(b.app.engine, { say: (t) => said.push(t), diagnoser: b.app.diagnoser });
    expect(resumed).toHaveLength(1);
    const out = await resumed[0]!;
    expect(said[0]).toMatch(/autopilot run #1: resumed after a restart \(tune phase\)/);
    expect(out.run.status).toBe('done');
    expect(out.trials.length).toBeGreaterThan(before);
    expect(out.trials.map((t) => t.n)).toEqual(out.trials.map((_, i) => i + 1));
    // Known to crash here: not launched at all.
    expect(out.trials[0]).toMatchObject({ profile: 'glm5-nvfp4', outcome: 'skipped_known', attemptId: null });
    expect(out.trials[1]).toMatchObject({ profile: 'glm5-tilelang-bf16', outcome: 'works' });
    const attempts = b.app.engine.attempts.list({ limit: 1000 });
    expect(attempts.length).toBeLessThanOrEqual(6);
    expect(liveOfRuns(b)).toEqual([]);
    expect(await idleGpus(b)).toBe(true);
  }, 240_000);

  it('holds its GPUs between trials, and a cancel stops every server it started', async () => {
    const c = freshBot();
    const port = await freePort();
    const running = c.run(`autopilot glm5-tilelang-bf16 --attempts 8 ${LOAD} --port ${port} --json`);
    await until(() => liveOfRuns(c).length > 0, 60_000);
    // Another launch is refused the run's GPUs, naming the run (by its lease while a trial runs, or its hold).
    const other = await c.run(`launch small --port ${await freePort()}`);
    expect(other.exitCode).toBe(2);
    expect(other.text).toMatch(/held by (attempt #\d+ \(glm5-tilelang-bf16|autopilot run #1)/);
    const held = autopilotStore(c.app.engine.ledger).holdsOn('gpu');
    expect(held.map((h) => h.gpu)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(held[0]!.holder).toMatch(/^autopilot run #1 \(glm5-tilelang-bf16, tester\)$/);
    const cancel = await c.run('autopilot --cancel');
    expect(cancel.text).toMatch(/autopilot run #1 on gpu is stopping/);
    const out = (await running).data as AutopilotOutcome;
    expect(out.run.status).toBe('cancelled');
    expect(out.ending).toBe('cancelled');
    expect(liveOfRuns(c)).toEqual([]);
    expect(await idleGpus(c)).toBe(true);
    expect(autopilotStore(c.app.engine.ledger).holdsOn('gpu')).toEqual([]);
    expect(existsSync(out.profileFile ?? '/nonexistent')).toBe(false);
  }, 120_000);

  it('refuses bad input with exit code 2 and what to write instead', async () => {
    const b = bots[0]!;
    const slo = await b.run('autopilot glm5-nvfp4 --slo ttft<2s');
    expect(slo.exitCode).toBe(2);
    expect(slo.text).toMatch(/'ttft<2s' is not an objective: write METRIC<VALUE/);
    const knobs = await b.run('autopilot glm5-nvfp4 --knobs mem_fraction,cuda_graph_max_bs');
    expect(knobs.exitCode).toBe(2);
    expect(knobs.text).toMatch(/each knob one of cuda_graph_max_bs, mem_fraction_static/);
    expect((await b.run('autopilot --cancel')).text).toMatch(/no autopilot run is going on gpu/);
  });
});
