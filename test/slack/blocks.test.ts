// Block Kit rendering: escaping of untrusted text, Slack's limits, overflow into a file, and the client errors the
// outbox must retry versus skip.
import { describe, expect, it } from 'vitest';
import type { View } from '../../src/chat/types.ts';
import { TransientChatError } from '../../src/chat/types.ts';
import { scrub } from '../../src/slack/adapter.ts';
import { LIMITS, renderMessage } from '../../src/slack/blocks.ts';
import { chatError } from '../../src/slack/client.ts';
import { esc, normalizeCommandText } from '../../src/slack/mrkdwn.ts';
import { blockText } from './helpers.ts';

type Alert = Extract<View, { type: 'alert' }>;

function alert(over: Partial<Alert> = {}): Alert {
  return {
    type: 'alert',
    attemptId: 7,
    profile: 'glm5-attempt3',
    host: 'gpu',
    actor: 'U123ABC',
    diagnosis: {
      category: 'backend_assertion',
      phase: 'cuda_graph_capture',
      summary: 'assert failed <!channel> & friends',
      evidence: [{ line: 812, text: 'AssertionError: <@U999> <https://evil|click> & more' }],
      rank: 0,
      dedupKey: 'k',
      confidence: 0.9,
    },
    flagChanges: [{ flag: 'kv-cache-dtype', from: 'auto', to: 'fp8_e4m3' }],
    comparedWith: 'last good attempt #3 (glm5-nvfp4)',
    excerpts: [],
    alreadyTried: [{ attemptId: 3, profile: 'glm5-attempt2', outcome: 'backend_assertion' }],
    count: 1,
    nextSteps: ['use --attention-backend nsa'],
    known: [],
    ...over,
  };
}

const sections = (blocks: unknown[]) =>
  (blocks as Array<{ type: string; text?: { text: string } }>).filter((b) => b.type === 'section');

describe('rendering', () => {
  it('an alert says why in one line and links the known upstream reports that look like it', () => {
    const view = alert({
      diagnosis: { ...alert().diagnosis, reason: 'exception rule exc-backend-validation: AssertionError, line 812' },
      known: [
        {
          ref: 'sgl-project/sglang#14691',
          url: 'https://github.com/sgl-project/sglang/issues/14691',
          title: 'DeepSeek-V3.2 with FP8 KV Cache, Assert Error',
          state: 'closed',
        },
      ],
    });
    const text = blockText(renderMessage({ text: 'crash', view }).blocks);
    expect(text).toContain('why: exception rule exc-backend-validation: AssertionError, line 812');
    expect(text).toContain(
      '<https://github.com/sgl-project/sglang/issues/14691|sgl-project/sglang#14691>: DeepSeek-V3.2 with FP8 KV Cache, Assert Error (closed)',
    );
    // Without them, neither line appears.
    const plain = blockText(renderMessage({ text: 'crash', view: alert() }).blocks);
    expect(plain).not.toContain('why:');
    expect(plain).not.toContain('looks like');
  });

  it('escapes & < > in untrusted text and nothing else; mentions only the launcher', () => {
    expect(esc('a & b <c> "d" *e*')).toBe('a &amp; b &lt;c&gt; "d" *e*');
    const r = renderMessage({ text: 'crash', view: alert() });
    const text = blockText(r.blocks);
    expect(text).toContain('&lt;!channel&gt; &amp; friends');
    expect(text).toContain('&lt;@U999&gt; &lt;https://evil|click&gt;');
    expect(text).toContain('launched by <@U123ABC>');
    expect(text).not.toContain('<!channel>');
    // The notification text mentions the launcher too (it is what a phone shows).
    expect(r.text).toBe(
      'crash: backend_assertion during cuda_graph_capture: attempt #7 glm5-attempt3 on gpu, launched by <@U123ABC>',
    );
    // Terminal users are not Slack IDs: shown as text.
    expect(blockText(renderMessage({ text: 'x', view: alert({ actor: 'root@box' }) }).blocks)).toContain('root@box');
  });

  it('keeps sections under 3000 characters and messages under 50 blocks; the rest goes into a file, not cut', () => {
    const evidence = Array.from({ length: 400 }, (_, i) => ({ line: i, text: `${'x'.repeat(150)} line ${i}` }));
    const excerpts = Array.from({ length: 60 }, (_, i) => ({
      source: 'kb',
      file: 'FINDINGS.md',
      headingPath: ['NaN', `case ${i}`],
      startLine: i,
      endLine: i + 3,
      lines: ['a finding line'],
      score: 1,
    }));
    const r = renderMessage({
      text: 'crash',
      view: alert({ diagnosis: { ...alert().diagnosis, evidence }, excerpts }),
    });
    expect(r.blocks.length).toBeLessThanOrEqual(LIMITS.blocks);
    for (const s of sections(r.blocks)) expect(s.text!.text.length).toBeLessThanOrEqual(3000);
    expect(JSON.stringify(r.blocks).length).toBeLessThan(LIMITS.totalChars + 3000);
    expect(r.overflow?.filename).toBe('attempt-7-crash.txt');
    // Everything is in the file, including the last root line and the last finding.
    expect(r.overflow!.content).toContain('line 399');
    expect(r.overflow!.content).toContain('case 59');
    expect(blockText(r.blocks)).toContain('everything is in the file attempt-7-crash.txt');
  });

  it('a long table goes as a file with a one-line summary; a short one inline in a code block', () => {
    const table = ['id  profile', ...Array.from({ length: 80 }, (_, i) => `${i}   p${i}`)].join('\n');
    const long = renderMessage({ text: table }, { filename: 'glm-attempts.txt' });
    expect(long.blocks).toHaveLength(1);
    expect(blockText(long.blocks)).toContain('81 lines: see the file glm-attempts.txt');
    expect(long.overflow!.content).toBe(table);
    const short = renderMessage({ text: 'a\nb <x>' });
    expect(sections(short.blocks)[0]!.text!.text).toBe('```a\nb &lt;x&gt;```');
    expect(short.overflow).toBeUndefined();
  });

  it('attempt messages: state, launcher, buttons with only the attempt id; no Stop once it ended', () => {
    const v: View = {
      type: 'attempt',
      attemptId: 12,
      profile: 'small',
      host: 'gpu',
      actor: 'U1AB',
      state: 'ready',
      detail: 'in 161 s',
      elapsedS: 161,
      simulated: true,
    };
    const r = renderMessage({ text: 'x', view: v });
    expect(blockText(r.blocks)).toMatch(/\*attempt #12\* `small` on `gpu`: ready in 2m41s/);
    expect(blockText(r.blocks)).toContain('SIMULATED');
    const actions = (r.blocks as Array<{ type: string; elements?: Array<{ action_id: string; value: string }> }>).find(
      (b) => b.type === 'actions',
    )!;
    expect(actions.elements!.map((e) => `${e.action_id}=${e.value}`)).toEqual([
      'glm_stop=12',
      'glm_probe=12',
      'glm_logs=12',
    ]);
    const crashed = renderMessage({ text: 'x', view: { ...v, state: 'crashed', detail: 'oom' } });
    expect(blockText(crashed.blocks)).toContain('crashed: oom');
    expect(blockText(crashed.blocks)).not.toContain('glm_stop');
  });

  it('scrubs secrets from every string it sends', () => {
    const token = `hf_${'a'.repeat(34)}`;
    expect(JSON.stringify(scrub({ text: `HF_TOKEN=${token}`, blocks: [{ t: [`x ${token}`] }] }))).not.toContain(token);
  });
});

describe('inbound command text', () => {
  it('undoes what Slack clients do to typed text', () => {
    expect(normalizeCommandText('launch glm5 —dry-run –host a')).toBe('launch glm5 --dry-run --host a');
    expect(normalizeCommandText('audit --user <@U123ABC|alice>')).toBe('audit --user U123ABC');
    expect(normalizeCommandText('diff “a b” ‘c’ &lt;x&gt; &amp;')).toBe('diff "a b" \'c\' <x> &');
  });
});

describe('Slack errors', () => {
  it('rate limits, 5xx and network failures are transient (with Retry-After); the rest are not', () => {
    const rl = chatError({ code: 'slack_webapi_rate_limited_error', retryAfter: 7 }, 'chat.update');
    expect(rl).toBeInstanceOf(TransientChatError);
    expect((rl as TransientChatError).retryAfterMs).toBe(7000);
    expect(chatError({ code: 'slack_webapi_http_error', statusCode: 503 }, 'x')).toBeInstanceOf(TransientChatError);
    expect(chatError({ code: 'slack_webapi_request_error', message: 'fetch failed' }, 'x')).toBeInstanceOf(
      TransientChatError,
    );
    expect(chatError({ code: 'slack_webapi_platform_error', data: { error: 'ratelimited' } }, 'x')).toBeInstanceOf(
      TransientChatError,
    );
    const perm = chatError({ code: 'slack_webapi_platform_error', data: { error: 'channel_not_found' } }, 'post');
    expect(perm).not.toBeInstanceOf(TransientChatError);
    expect(perm.message).toBe('post: channel_not_found');
    expect(chatError({ code: 'slack_webapi_http_error', statusCode: 400 }, 'x')).not.toBeInstanceOf(TransientChatError);
  });
});
