// Advice rules live in the signature catalog beside each crash class (catalog/signatures.yaml `advice:`), and users
// add their own through the config's `signatures:` (an entry with a built-in id replaces it, rules included). The
// classifier's compiled catalog does not carry them, so they are read here from the same two sources, with the same
// schema.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { BUILTIN_CATALOG } from '../logs/classify/index.ts';
import { type AdviceRule, catalogFileSchema, signatureSchema } from '../logs/classify/schema.ts';

export interface RuleSet {
  signatureId: string;
  category?: string;
  rules: AdviceRule[];
}

const fileCache = new Map<string, unknown[]>();

function builtinEntries(file: string): unknown[] {
  const hit = fileCache.get(file);
  if (hit) return hit;
  const parsed = catalogFileSchema.safeParse(parseYaml(readFileSync(file, 'utf8')));
  // An invalid catalog already stopped the bot at start-up (src/logs/classify/catalog.ts); nothing to add here.
  const entries = parsed.success ? parsed.data.signatures : [];
  fileCache.set(file, entries);
  return entries;
}

/** Every signature's advice, in catalog order, user entries last (or in place of the built-in with their id). */
export function loadRuleSets(configSignatures: readonly unknown[] = [], file = BUILTIN_CATALOG): RuleSet[] {
  const out: RuleSet[] = [];
  for (const entry of [...builtinEntries(file), ...configSignatures]) {
    const s = signatureSchema.safeParse(entry);
    if (!s.success) continue;
    const set: RuleSet = {
      signatureId: s.data.id,
      ...(s.data.category ? { category: s.data.category } : {}),
      rules: s.data.advice,
    };
    const i = out.findIndex((r) => r.signatureId === set.signatureId);
    if (i >= 0) out[i] = set;
    else out.push(set);
  }
  return out;
}

/** The rules for a crash: the matched signature's first, then those of the other signatures of its class. */
export function rulesFor(
  sets: readonly RuleSet[],
  crash: { category: string; signatureId?: string },
): Array<{ signatureId: string; rule: AdviceRule }> {
  const own = sets.find((s) => s.signatureId === crash.signatureId);
  const rest = sets.filter((s) => s !== own && s.category === crash.category);
  return (own ? [own, ...rest] : rest).flatMap((s) => s.rules.map((rule) => ({ signatureId: s.signatureId, rule })));
}
