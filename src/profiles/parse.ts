// One profile file: YAML, then the zod schema, then the checks that need only that file. Problems go into `issues`;
// whatever did validate is kept so that later checks can still run on it.
import { parseDocument } from 'yaml';
import type { Issue } from '../errors.ts';
import { yamlValue } from '../yaml.ts';
import { checkFile } from './checks.ts';
import { fromZod } from './issues.ts';
import { PROFILE_KEYS, PROFILE_NAME, profileSchema, type RawProfile } from './schema.ts';

/** One profile file's text, as read from disk (or made up by a test). */
export interface ProfileSource {
  name: string;
  /** Absolute path, kept on the resolved profile. */
  file: string;
  /** How issues name the file, e.g. `profiles/glm5-attempt3.yaml`. */
  label: string;
  text: string;
}

export interface Parsed {
  source: ProfileSource;
  /** The fields that validated; a field with a problem is left out so the rest can still be checked. */
  raw: RawProfile;
  /** False when the file has its own problems; the profile is then not resolved. */
  ok: boolean;
  /** Fields left out of `raw` because they did not validate. */
  dropped: Set<string>;
}

export function parseSource(s: ProfileSource, issues: Issue[]): Parsed | undefined {
  const nameOk = PROFILE_NAME.test(s.name);
  if (!nameOk) {
    issues.push({
      path: s.label,
      message: 'profile names use lowercase letters, digits, - and . (starting with a letter or digit)',
      fix: `rename the file, e.g. ${s.name
        .toLowerCase()
        .replace(/[^a-z0-9.-]+/g, '-')
        .replace(/^[^a-z0-9]+/, '')}.yaml`,
    });
  }
  const doc = parseDocument(s.text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    for (const e of doc.errors) {
      const line = e.linePos?.[0];
      // prettyErrors adds the position and a code excerpt to the message; the position goes into the path instead.
      const message = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
      issues.push({ path: line ? `${s.label}:${line.line}` : s.label, message: `YAML: ${message}` });
    }
    return undefined;
  }
  const v = yamlValue(doc);
  if (!v.ok) {
    issues.push({ path: s.label, message: `YAML: ${v.message}`, fix: v.fix });
    return undefined;
  }
  const data: unknown = v.value;
  if (data === null || data === undefined) {
    issues.push({ path: s.label, message: 'empty profile', fix: 'set at least model_path, or extends' });
    return undefined;
  }
  if (typeof data !== 'object' || Array.isArray(data)) {
    issues.push({ path: s.label, message: 'a profile is a mapping of field: value' });
    return undefined;
  }
  const dropped = new Set<string>();
  let raw: RawProfile;
  const result = profileSchema.safeParse(data);
  if (result.success) {
    raw = result.data;
  } else {
    const badEnv = new Set<string>();
    for (const zi of result.error.issues) {
      issues.push(...fromZod(s.label, data, zi));
      const [top, key] = zi.path;
      // A bad env entry costs only itself; any other problem drops its whole field.
      if (top === 'env' && zi.path.length === 2) badEnv.add(String(key));
      else if (top !== undefined) dropped.add(String(top));
    }
    // Keep checking what did validate, so one pass reports every problem.
    const rest: Record<string, unknown> = Object.fromEntries(
      Object.entries(data).filter(([k]) => !dropped.has(k) && PROFILE_KEYS.includes(k)),
    );
    if (badEnv.size > 0 && rest.env && typeof rest.env === 'object') {
      rest.env = Object.fromEntries(Object.entries(rest.env).filter(([k]) => !badEnv.has(k)));
    }
    const again = profileSchema.safeParse(rest);
    raw = again.success ? again.data : {};
  }
  const own = checkFile(s.label, raw);
  issues.push(...own);
  return { source: s, raw, ok: result.success && own.length === 0 && nameOk, dropped };
}
