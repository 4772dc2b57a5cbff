import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { ConfigError } from '../../src/errors.ts';
import { loadProfiles } from '../../src/profiles/index.ts';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh profiles folder under os.tmpdir() holding the given files (name -> YAML text). */
export function profileDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'profiles-'));
  made.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Loads the folder expecting failure; returns the ConfigError. */
export function loadError(files: Record<string, string>): ConfigError {
  const dir = profileDir(files);
  try {
    loadProfiles(dir);
  } catch (err) {
    return err as ConfigError;
  }
  throw new Error('expected loadProfiles to throw');
}

/** `label: path` without the temp folder's random name. */
export function paths(err: ConfigError): string[] {
  return err.issues.map((i) => i.path.replace(/^profiles-[^/]+\//, ''));
}
