// Smoke-test settings: the prompts with their expected answers, from three places merged in this order: the
// built-in default set, the config's `smoke:` section, and the profile's `smoke:` field. Profiles carry `smoke:` as
// free data (z.unknown in the profile schema), so it is validated here and its problems reported as `path: message`.
import type { z } from 'zod';
import { type SmokeConfig, SmokeProfileSchema, type SmokePrompt } from '../config/smoke.ts';
import { UserError } from '../errors.ts';

/**
 * Answers a working model gives and a broken one does not: facts, arithmetic, instruction following, and a longer
 * counting answer so the decode speed is measured over more than a handful of tokens. /generate has no chat
 * template, so it gets completion-style text.
 */
export const DEFAULT_PROMPTS: SmokePrompt[] = [
  {
    name: 'capital',
    prompt: 'What is the capital of France? Answer with one word.',
    generate_prompt: 'The capital city of France is',
    endpoints: ['chat', 'generate'],
    expect: { contains: 'Paris' },
  },
  {
    name: 'arithmetic',
    prompt: 'What is 17 + 25? Answer with the number only.',
    generate_prompt: '17 + 25 =',
    endpoints: ['chat', 'generate'],
    expect: { regex: '(^|\\D)42(\\D|$)' },
  },
  {
    name: 'echo',
    prompt: 'Reply with exactly: smoke test ok',
    endpoints: ['chat'],
    expect: { contains: 'smoke test ok' },
  },
  {
    name: 'count',
    prompt: 'Count from 1 to 20, separated by commas.',
    generate_prompt: 'Count from 1 to 20: 1, 2, 3,',
    endpoints: ['chat', 'generate'],
    expect: { regex: '(^|\\D)17,\\s*18,\\s*19,\\s*20(\\D|$)' },
    max_tokens: 96,
  },
];

export interface EffectiveSmoke {
  prompts: Array<SmokePrompt & { max_tokens: number }>;
  maxTokens: number;
  budgetS: number;
  regressionPct: number;
}

/** Validates a profile's `smoke:` value; every problem at once, as `path: message`. */
export function parseProfileSmoke(profileName: string, raw: unknown): z.infer<typeof SmokeProfileSchema> {
  if (raw === undefined || raw === null) return { defaults: true };
  const r = SmokeProfileSchema.safeParse(raw);
  if (r.success) return r.data;
  const lines = r.error.issues.map((i) => `${['smoke', ...i.path.map(String)].join('.')}: ${i.message}`);
  throw new UserError(
    `profile ${profileName} has an invalid smoke: section\n  ${lines.join('\n  ')}`,
    `fix profiles/${profileName}.yaml (or the profile it extends)`,
  );
}

/** Defaults, then the config's prompts, then the profile's; a later prompt with the same name replaces. */
export function effectiveSmoke(
  cfg: SmokeConfig | undefined,
  profileName: string,
  profileSmoke: unknown,
): EffectiveSmoke {
  const p = parseProfileSmoke(profileName, profileSmoke);
  const maxTokens = p.max_tokens ?? cfg?.max_tokens ?? 64;
  const byName = new Map<string, SmokePrompt>();
  const useDefaults = p.defaults && (cfg?.defaults ?? true);
  if (useDefaults) for (const d of DEFAULT_PROMPTS) byName.set(d.name, d);
  for (const x of cfg?.prompts ?? []) byName.set(x.name, x);
  for (const x of p.prompts ?? []) byName.set(x.name, x);
  if (byName.size === 0) {
    throw new UserError(
      `profile ${profileName}: no smoke prompts (defaults are off and none are configured)`,
      'add smoke.prompts to the profile or the config, or set smoke.defaults: true',
    );
  }
  return {
    prompts: [...byName.values()].map((x) => ({ ...x, max_tokens: x.max_tokens ?? maxTokens })),
    maxTokens,
    budgetS: p.budget_s ?? cfg?.budget_s ?? 1800,
    regressionPct: p.regression_pct ?? cfg?.regression_pct ?? 20,
  };
}
