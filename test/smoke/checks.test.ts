// Answer checks as plain functions: right answers pass; empty, looping, garbled or wrong ones fail with a reason.
// (The stand-in answers right; these are the broken-model shapes it cannot produce yet.)
import { describe, expect, it } from 'vitest';
import { garbage, judge, repetition } from '../../src/smoke/checks.ts';
import { DEFAULT_PROMPTS, effectiveSmoke } from '../../src/smoke/settings.ts';

const expectOf = (name: string) => DEFAULT_PROMPTS.find((p) => p.name === name)!.expect;

describe('smoke answer checks', () => {
  it('passes what a working model says to the default prompts, on both endpoints', () => {
    expect(judge('The capital of France is Paris.', expectOf('capital')).ok).toBe(true);
    expect(judge(' Paris.', expectOf('capital')).ok).toBe(true);
    expect(judge('17 + 25 = 42.', expectOf('arithmetic')).ok).toBe(true);
    expect(judge(' 42', expectOf('arithmetic')).ok).toBe(true);
    expect(judge('smoke test ok', expectOf('echo')).ok).toBe(true);
    const count = Array.from({ length: 20 }, (_, i) => i + 1).join(', ');
    expect(judge(count, expectOf('count')).ok).toBe(true);
    expect(judge(` ${count.split(', ').slice(3).join(', ')}`, expectOf('count')).ok).toBe(true);
  });

  it('fails wrong, empty, looping and garbled answers, saying why', () => {
    expect(judge('The capital of France is Lyon.', expectOf('capital'))).toEqual({
      ok: false,
      problems: ["expected it to contain 'Paris'"],
    });
    expect(judge(' 4 2', expectOf('arithmetic')).problems).toEqual([
      `expected it to match /${expectOf('arithmetic').regex}/`,
    ]);
    expect(judge('   \n', expectOf('capital'))).toEqual({ ok: false, problems: ['empty answer'] });
    const loop = 'Paris Paris Paris Paris Paris Paris Paris Paris Paris Paris Paris Paris';
    expect(judge(loop, expectOf('capital')).problems[0]).toMatch(
      /^degenerate: 'Paris' repeated over \d+% of the answer/,
    );
    expect(repetition('!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!')).toMatch(/'!' repeated 30 times/);
    expect(garbage('\uFFFD\uFFFD\uFFFD\uFFFD Paris \uFFFD\uFFFD')).toMatch(/characters are not text/);
    expect(garbage('ʔ⟆⟆⟆⟆⟆⟆⟆⟆⟆⟆ ⟆⟆ ⟆⟆')).toMatch(/letters, digits or punctuation/);
    // Ordinary text is neither.
    expect(repetition('1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20')).toBeNull();
    expect(garbage('Die Hauptstadt von Frankreich ist Paris. 巴黎是法国的首都。')).toBeNull();
  });

  it('merges the default set, the config and the profile (a later prompt of the same name replaces)', () => {
    const e = effectiveSmoke({ regression_pct: 15, budget_s: 600, max_tokens: 32, defaults: true }, 'p', {
      prompts: [{ name: 'capital', prompt: 'Capital of Italy?', expect: { contains: 'Rome' } }],
      max_tokens: 48,
    });
    expect(e.prompts.map((p) => p.name)).toEqual(['capital', 'arithmetic', 'echo', 'count']);
    expect(e.prompts[0]).toMatchObject({
      prompt: 'Capital of Italy?',
      endpoints: ['chat', 'generate'],
      max_tokens: 48,
    });
    expect(e.prompts[3]!.max_tokens).toBe(96);
    expect(e).toMatchObject({ regressionPct: 15, budgetS: 600, maxTokens: 48 });
  });
});
