// YAML that people write (the config, profile files) becomes data through here: the yaml package's guard against
// alias expansion ("billion laughs": a few lines whose aliases expand to gigabytes) stays on, and its error becomes a
// problem a person can fix, not an internal error.
import type { Document } from 'yaml';

/** yaml's own default: alias references allowed before expansion counts as an attack (its maxAliasCount option). */
export const MAX_ALIAS_COUNT = 100;

export type YamlValue = { ok: true; value: unknown } | { ok: false; message: string; fix: string };

export function yamlValue(doc: Document.Parsed): YamlValue {
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (e) {
    // yaml throws a ReferenceError ("Excessive alias count ...") while expanding; anything else is ours.
    if (!(e instanceof ReferenceError) || !/alias count/i.test(e.message)) throw e;
    return {
      ok: false,
      message: `its aliases (*name) expand to too much data (more than ${MAX_ALIAS_COUNT} alias references: a "billion laughs" document?)`,
      fix: 'write the repeated values out, or use fewer aliases',
    };
  }
}
