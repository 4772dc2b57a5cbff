// `npx glm COMMAND ...` as a person types it in a shell: the real bin, a fresh HOME (the embedded default).
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config/load.ts';
import { tokenize } from '../../src/runtime/parse.ts';
import { readSlackEnv } from '../../src/slack/env.ts';
import { closest } from '../../src/suggest.ts';

function glm(...args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [join(PACKAGE_ROOT, 'bin', 'glm.js'), ...args], {
      // A HOME (and so a ledger) of its own: these run concurrently.
      env: { PATH: process.env.PATH, HOME: mkdtempSync(join(tmpdir(), 'glm-cli-')), GLM_STANDIN_TIME_SCALE: '0.002' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (d) => {
      out += String(d);
    });
    p.stderr.on('data', (d) => {
      out += String(d);
    });
    p.once('exit', (code) => resolve({ code, out }));
  });
}

describe.concurrent('one-shot terminal commands', () => {
  it('--help and -h are help; COMMAND --help is help COMMAND; help lists slack', async () => {
    const [long, short, launch, slack] = await Promise.all([
      glm('--help'),
      glm('-h'),
      glm('launch', '--help'),
      glm('help', 'slack'),
    ]);
    for (const r of [long, short]) {
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^commands:\n/);
      expect(r.out).toMatch(/\n {2}slack +run the bot as a Slack app/);
      expect(r.out).toContain('npx glm help COMMAND shows its options');
    }
    expect(launch.code).toBe(0);
    expect(launch.out).toMatch(/^launch: start an SGLang server/);
    expect(slack.out).toContain('GLM_HTTP_HOST');
    expect(slack.out).toContain('/slack/events');
  }, 60_000);

  it('errors say `npx glm help`, suggest only near misses, and exit 2', async () => {
    const [typo, bogus, helpBogus] = await Promise.all([glm('lanch'), glm('bogus'), glm('help', 'bogus')]);
    expect(typo.code).toBe(2);
    expect(typo.out).toContain("did you mean 'launch'? npx glm help lists the commands");
    for (const r of [bogus, helpBogus]) {
      expect(r.code).toBe(2);
      expect(r.out).toContain("unknown command 'bogus'");
      expect(r.out).not.toMatch(/did you mean/);
      expect(r.out).toContain('npx glm help lists the commands');
      expect(r.out).not.toContain('type help');
    }
  }, 60_000);

  it('a bad number says what was typed; a bad --set value (a line break too) is bad input, exit 2', async () => {
    const [port, set, newline] = await Promise.all([
      glm('launch', 'small', '--port', 'abc', '--dry-run'),
      glm('launch', 'small', '--set', 'kv_cache_dtype=bf17', '--dry-run'),
      glm('launch', 'small', '--set', 'model_path=org/a\nb', '--dry-run'),
    ]);
    expect(port.code).toBe(2);
    expect(port.out).toContain("launch: --port: 'abc' is not a number");
    expect(port.out).not.toMatch(/NaN/);
    expect(set.code).toBe(2);
    expect(set.out).toMatch(/kv_cache_dtype: --kv-cache-dtype 'bf17' is not a choice of SGLang/);
    expect(set.out).toContain("did you mean 'bf16'?");
    expect(newline.code).toBe(2);
    expect(newline.out).toMatch(/model_path: must not contain/);
  }, 60_000);

  it("words with ' or a trailing backslash arrive as typed", async () => {
    const [quote, slash] = await Promise.all([glm('findings', "don't stop"), glm('findings', 'C:\\')]);
    for (const r of [quote, slash]) {
      expect(r.code).toBe(0);
      expect(r.out).not.toMatch(/unbalanced quote/);
    }
  }, 60_000);
});

describe('the interactive tokenizer and suggestions', () => {
  it('reads quotes as a POSIX shell does, expanding nothing', () => {
    expect(tokenize(`findings "don't stop"`)).toEqual(['findings', "don't stop"]);
    expect(tokenize(`findings 'C:\\'`)).toEqual(['findings', 'C:\\']);
    expect(tokenize(`findings don\\'t a\\ b "say \\"hi\\""`)).toEqual(['findings', "don't", 'a b', 'say "hi"']);
    expect(tokenize(`x 'a\\nb' $(id)`)).toEqual(['x', 'a\\nb', '$(id)']);
    expect(() => tokenize(`findings 'open`)).toThrow(/a ' is never closed/);
  });

  it('suggests typos (swaps count once), not unrelated short words', () => {
    expect(closest('bogus', ['logs', 'launch', 'stop'])).toBeUndefined();
    expect(closest('lgos', ['logs', 'launch'])).toBe('logs');
    expect(closest('staus', ['status', 'stop'])).toBe('status');
  });
});

describe('Slack mode choice', () => {
  const base = { SLACK_BOT_TOKEN: 'xoxb-1' };
  it('refuses both mode secrets without GLM_SLACK_MODE, saying how to choose', () => {
    expect(() => readSlackEnv({ ...base, SLACK_APP_TOKEN: 'xapp-1', SLACK_SIGNING_SECRET: 's' })).toThrow(
      /both SLACK_APP_TOKEN \(Socket Mode\) and SLACK_SIGNING_SECRET \(HTTP mode\) are set: .*GLM_SLACK_MODE=socket or GLM_SLACK_MODE=http/,
    );
  });
  it('GLM_SLACK_MODE picks, and keeps only the chosen secret', () => {
    const both = { ...base, SLACK_APP_TOKEN: 'xapp-1', SLACK_SIGNING_SECRET: 's' };
    expect(readSlackEnv({ ...both, GLM_SLACK_MODE: 'http' })).toMatchObject({
      transport: 'http',
      signingSecret: 's',
      appToken: undefined,
    });
    expect(readSlackEnv({ ...both, GLM_SLACK_MODE: 'socket' })).toMatchObject({
      transport: 'socket',
      appToken: 'xapp-1',
    });
    expect(() => readSlackEnv({ ...base, SLACK_SIGNING_SECRET: 's', GLM_SLACK_MODE: 'socket' })).toThrow(
      /GLM_SLACK_MODE=socket needs SLACK_APP_TOKEN/,
    );
    expect(() => readSlackEnv({ ...both, GLM_SLACK_MODE: 'ws' })).toThrow(/use socket or http/);
  });
});

describe('one-shot limits', () => {
  it('a value over the limit is refused from a shell too (words skip the tokenizer, not the limits)', async () => {
    const r = await glm('findings', 'x'.repeat(5000));
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/a value of 5000 characters .*the limit is 4096 per value/);
  }, 60_000);
});
