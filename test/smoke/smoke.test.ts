// Smoke checks over a real sshd against the SGLang stand-in: a pass, a NaN crash mid-request caught and classified,
// wrong answers, a tokens/s regression against the last pass, launch mode, history.
import { execFileSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyDelta } from '../../src/smoke/logdelta.ts';
import { smokeText } from '../../src/smoke/report.ts';
import { runSmoke } from '../../src/smoke/run.ts';
import { decodePng } from '../helpers/png.ts';
import { freePort, groupMembers } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';
import { profilesWith, type SmokeBot, smokeBot } from './helpers.ts';

const shared = sshdWithBots();
const bot = (opts: Parameters<typeof smokeBot>[1] = {}): SmokeBot => smokeBot(shared, opts);

interface SmokeData {
  verdict: string;
  passed: number;
  total: number;
  ttftMs: number;
  tokS: number;
  prompts: Array<{ name: string; endpoint: string; ok: boolean; problems: string[] }>;
  comparison: { regressions: string[]; baselineId: number } | null;
  log: { crashed: boolean; diagnosis: { category: string; phase: string; evidence: Array<{ text: string }> } | null };
}

describe('smoke against the running server', () => {
  it('passes on a working server, measures TTFT and tokens/s, and a NaN mid-request fails it with its class', async () => {
    const b = bot();
    const l = await b.run(`launch small --port ${await freePort()}`);
    expect(l.exitCode, b.said.join('\n')).toBe(0);

    const ok = await b.run('smoke');
    const d = ok.data as SmokeData;
    expect(ok.exitCode, ok.text).toBe(0);
    expect(d.verdict).toBe('pass');
    expect(d.passed).toBe(d.total);
    expect(d.prompts.map((p) => `${p.name}/${p.endpoint}`)).toEqual([
      'capital/chat',
      'capital/generate',
      'arithmetic/chat',
      'arithmetic/generate',
      'echo/chat',
      'count/chat',
      'count/generate',
    ]);
    // STANDIN_TTFT_MS=20, STANDIN_TPOT_MS=4: 250 tokens/s of decode (loose bounds: a busy 2-core box delays timers;
    // test/smoke/bench.test.ts holds the measurement to 5%).
    expect(d.ttftMs).toBeGreaterThanOrEqual(19);
    expect(d.ttftMs).toBeLessThan(200);
    expect(d.tokS).toBeGreaterThan(120);
    expect(d.tokS, ok.text).toBeLessThan(280);
    expect(ok.text).toMatch(/smoke PASS: attempt #1 \(small\) on gpu, 7\/7 answers right/);
    expect(ok.text).toMatch(/no crash in the \d+ bytes written during the smoke/);

    // The running server turns bad: the first decode step after the switch NaNs and the server dies.
    writeFileSync(b.control, 'nan_decode\n');
    const bad = await b.run('smoke');
    const f = bad.data as SmokeData;
    expect(bad.exitCode).toBe(1);
    expect(f.verdict).toBe('fail');
    expect(f.prompts[0]!.ok).toBe(false);
    expect(f.prompts[0]!.problems.join(' ')).toMatch(/request failed/);
    expect(f.log.crashed).toBe(true);
    expect(f.log.diagnosis).toMatchObject({ category: 'nan_in_sampling' });
    expect(f.log.diagnosis!.evidence.some((e) => /probability tensor contains either/.test(e.text))).toBe(true);
    expect(bad.text).toMatch(/CRASH nan_in_sampling/);
    expect(bad.text).toMatch(/health after: no answer/);
    // The attempt is closed as crashed, as a crash seen by the log follower would be.
    expect(b.app.engine.attempts.get(1)).toMatchObject({ status: 'crashed', active: false });

    const h = await b.run('smoke --history');
    expect(h.text).toMatch(/pass/);
    expect(h.text).toMatch(/fail .*nan_in_sampling/);
  });
});

describe('wrong answers and bad settings', () => {
  // The stand-in answers the default prompts right; a profile whose smoke asks what it cannot answer stands in
  // for a model that answers wrong (see the note on a wrong-answer knob for the stand-in).
  const profiles = profilesWith({
    'small-quiz': [
      'extends: small',
      'smoke:',
      '  defaults: false',
      '  prompts:',
      '    - name: germany',
      "      prompt: 'What is the capital of Germany? Answer with one word.'",
      "      generate_prompt: 'The capital city of Germany is'",
      '      expect: { contains: Berlin }',
      '    - name: paris',
      "      prompt: 'What is the capital of France?'",
      '      endpoints: [chat]',
      "      expect: { regex: '\\bParis\\b' }",
      '',
    ].join('\n'),
    'small-badsmoke': [
      'extends: small',
      'smoke:',
      '  prompts:',
      '    - name: x',
      '      prompt: hi',
      "      expect: { regex: '(' }",
      '    - prompt: hi',
      '      expect: {}',
      '  budget_s: -1',
      '',
    ].join('\n'),
  });

  it('fails a model that answers wrong, naming the prompt and what was expected', async () => {
    const b = bot({ profilesDir: profiles });
    const r = await b.run(`smoke --profile small-quiz --launch --port ${await freePort()}`);
    const d = r.data as SmokeData;
    expect(r.exitCode, r.text).toBe(1);
    expect(d.verdict).toBe('fail');
    expect(d.prompts.map((p) => [p.name, p.endpoint, p.ok])).toEqual([
      ['germany', 'chat', false],
      ['germany', 'generate', false],
      ['paris', 'chat', true],
    ]);
    expect(r.text).toMatch(/FAIL\s+germany\s+chat .*expected it to contain 'Berlin' \(got "/);
    expect(r.text).toMatch(/no crash in the \d+ bytes/);
    // Launch mode stops what it launched.
    expect(r.text).toMatch(/stopped attempt #1 after the smoke/);
    expect(b.app.engine.attempts.get(1)).toMatchObject({ status: 'stopped', active: false });
  });

  it("reports every problem of a profile's smoke: section as path: message", async () => {
    const b = bot({ profilesDir: profiles });
    const r = await b.run(`smoke --profile small-badsmoke --launch --port ${await freePort()}`);
    expect(r.exitCode).toBe(2);
    expect(r.text).toContain('smoke.prompts.0.expect.regex: is not a valid regular expression');
    expect(r.text).toContain('smoke.prompts.1.name:');
    expect(r.text).toContain('smoke.prompts.1.expect: needs contains or regex');
    expect(r.text).toContain('smoke.budget_s:');
    expect(b.app.engine.attempts.list()).toHaveLength(0);
  });
});

describe('launch mode and regressions', () => {
  it('flags a tokens/s regression against the last passing run of the same profile and host', async () => {
    const first = bot({ env: { STANDIN_TPOT_MS: '4' } });
    const a = await first.run(`smoke --profile small --launch --port ${await freePort()}`);
    expect(a.exitCode, a.text).toBe(0);
    expect((a.data as SmokeData).verdict).toBe('pass');
    await first.app.close();
    // Same ledger, a slower build: every decode step takes three times as long.
    const second = bot({ env: { STANDIN_TPOT_MS: '12' }, dirs: first.dirs, control: first.control });
    const r = await second.run(`smoke --profile small --launch --port ${await freePort()}`);
    const d = r.data as SmokeData;
    expect(r.exitCode, r.text).toBe(1);
    expect(d.verdict).toBe('regression');
    expect(d.passed).toBe(d.total);
    expect(d.comparison!.baselineId).toBe((a.data as { id: number }).id);
    expect(d.comparison!.regressions.join()).toMatch(/decode (6\d|7\d)% fewer tokens\/s/);
    expect(r.text).toMatch(/REGRESSION against smoke run #1 .*decode \d+% fewer tokens\/s \(threshold 20%\)/);
    expect(r.text).toMatch(/attempt #2 \(small\)/);
    // A regressed run is no baseline: the next comparison is still with run #1.
    const h = await second.run('smoke --history --json');
    expect((h.data as Array<{ verdict: string }>).map((x) => x.verdict)).toEqual(['pass', 'regression']);

    // The history chart comes with the report (the scheduler posts it in the nightly report's thread): TTFT and
    // tokens/s per run, the regression ringed in red.
    const files = (r.data as { files: Array<{ filename: string; path: string }> }).files;
    expect(files).toHaveLength(1);
    expect(files[0]!.filename).toMatch(/^smoke-history-\d+\.png$/);
    const img = decodePng(readFileSync(files[0]!.path));
    expect(img).toMatchObject({ width: 1000, height: 420 });
    expect(img.near([31, 119, 180])).toBeGreaterThan(200);
    expect(img.near([214, 39, 40])).toBeGreaterThan(100);
    expect(img.dark()).toBeGreaterThan(1000);
    const text = await second.run('smoke --history');
    expect((text.data as { files: unknown[] }).files).toHaveLength(1);
  });

  it('flags a slow drift (each night within the threshold of the one before) against a baseline that does not drift', async () => {
    // Decode gets about 12% slower every night: 10 ms per token, then 11.4, 13, 14.8.
    const nights = ['10', '11.4', '13', '14.8'];
    let dirs: { workdir: string; dataDir: string } | undefined;
    let control: string | undefined;
    const seen: Array<{ verdict: string; text: string }> = [];
    for (const tpot of nights) {
      const b = bot({ env: { STANDIN_TPOT_MS: tpot }, dirs, control });
      dirs = b.dirs;
      control = b.control;
      const r = await b.run(`smoke --profile small --launch --port ${await freePort()}`);
      seen.push({ verdict: (r.data as SmokeData).verdict, text: r.text });
      await b.app.close();
    }
    // The first slower night is within 20% of everything before it.
    expect(seen[1]!.verdict, seen[1]!.text).toBe('pass');
    // By the last night (about -32% from the first) it is a regression, and the report says against what.
    const last = seen.at(-1)!;
    expect(last.verdict, last.text).toBe('regression');
    expect(last.text).toMatch(
      /REGRESSION: .*decode \d+% fewer tokens\/s than the best of the last 30 days \((decode: )?smoke run #1\b/,
    );
    expect(last.text).toMatch(/decode \d+% fewer tokens\/s than the median of the last \d passing runs \(#1-#\d\)/);
  }, 90_000);

  it('launches glm5-nvfp4 for the smoke; its first real request NaNs, which the smoke reports and classifies', async () => {
    const b = bot();
    const r = await b.run(`smoke --profile glm5-nvfp4 --launch --port ${await freePort()}`);
    const d = r.data as SmokeData;
    expect(r.exitCode, b.said.join('\n')).toBe(1);
    expect(d.verdict).toBe('fail');
    expect(d.log.diagnosis).toMatchObject({ category: 'nan_in_sampling', phase: 'decode' });
    expect(r.text).toMatch(/smoke FAIL: attempt #1 \(glm5-nvfp4\) on gpu, 0\/7 answers right, fresh launch/);
    expect(b.app.engine.attempts.get(1)).toMatchObject({ status: 'crashed', outcome: 'nan_in_sampling' });
  });
});

describe('a failure record the server writes during the smoke', () => {
  const RECORD = '[2025-11-05 12:01:00] Failed to push metrics to the collector: connection refused';

  /**
   * A smoke of the running `small` server; with `die`, once the first answer is in, the server logs RECORD and exits 1
   * printing nothing else (the say hook waits until its processes are gone, so the smoke's next request and its
   * health check find it gone).
   */
  async function smokeOf(die: boolean) {
    const b = bot();
    const l = await b.run(`launch small --port ${await freePort()}`);
    expect(l.exitCode, b.said.join('\n')).toBe(0);
    const a = b.app.engine.attempts.get(1)!;
    let answers = 0;
    const r = await runSmoke(
      b.app.engine,
      { hostName: 'gpu', actor: 'tester', origin: 'terminal', role: 'operator' },
      {
        diagnoser: b.app.diagnoser,
        say: (t) => {
          if (!die || !t.startsWith('  ok') || ++answers !== 1) return;
          appendFileSync(a.logPath!, `${RECORD}\n`);
          writeFileSync(b.control, 'exit_quietly\n');
          while (groupMembers(a.pgid!).length > 0) execFileSync('sleep', ['0.05']);
        },
      },
    );
    return { b, r };
  }

  it('and then dies: the record is the crash, the attempt is closed crashed, the report says so', async () => {
    const { b, r } = await smokeOf(true);
    expect(r.health.status).toBeNull();
    expect(r.row.verdict).toBe('fail');
    expect(r.log).toMatchObject({ crashed: true, diagnosis: { category: 'other' } });
    const a = b.app.engine.attempts.get(1)!;
    expect(a).toMatchObject({ active: false, status: 'crashed', outcome: 'other', exitCode: 1 });
    expect((a.classification as { evidence: Array<{ text: string }> }).evidence.map((e) => e.text)).toContain(RECORD);
    const text = smokeText(r);
    expect(text).toMatch(/health after: no answer/);
    expect(text).toMatch(/CRASH other during .*Failed to push metrics to the collector/);
    expect(text).not.toMatch(/served on/);
  });

  it("the report calls a record one the server served on only next to a health check's 200", async () => {
    const { b, r } = await smokeOf(false);
    expect(r.health.status).toBe(200);
    // The log of a smoke whose last line is the record (a health check's access line after it shows it served on).
    const log = classifyDelta(b.app.diagnoser, `${RECORD}\n`, { bytes: 0, lines: 0 });
    expect(log).toMatchObject({ crashed: false, diagnosis: { category: 'other' } });
    expect(smokeText({ ...r, log })).toMatch(/log: a failure record the server served on: 1: .*Failed to push metrics/);
    const gone = smokeText({ ...r, log, health: { status: null, error: 'connection refused' } });
    expect(gone).toMatch(/health after: no answer/);
    expect(gone).not.toMatch(/served on/);
    expect(gone).toMatch(/log: a failure record, the server's health check not answered 200 after it: 1: .*Failed/);
  });
});
