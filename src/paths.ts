// Paths people give (config fields, GLM_CONFIG, classify FILE) are checked before the file system sees them: a NUL
// byte or an over-long name makes Node and the kernel throw errors that say nothing useful (ERR_INVALID_ARG_VALUE,
// ENAMETOOLONG). Limits are Linux's (limits.h): PATH_MAX is 4096 bytes with the terminating NUL, NAME_MAX 255 bytes.
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
// A type-only import: erased from the compiled file, which still loads without zod.
import type { z as zod } from 'zod';

export const PATH_MAX_BYTES = 4095;
export const NAME_MAX_BYTES = 255;

/**
 * `~` and `~/x` as the user's home (what a shell would do; a path from a file or Node gets no such help). Only a
 * leading `~` alone or before `/`: `~user` and `a/~` are names like any other. Nothing else changes (no
 * normalising), so the host's scripts (`HOME_PATH_SH`) expand a path to the very same text.
 */
export function expandHome(p: string, home: string = homedir()): string {
  return p === '~' ? home : p.startsWith('~/') ? `${home}${p.slice(1)}` : p;
}

/** What is wrong with `p` as a path (never echoing a long one back), or undefined. */
export function pathProblem(p: string): string | undefined {
  if (p.includes('\0')) return 'contains a NUL byte, which no path can hold';
  const bytes = Buffer.byteLength(p);
  if (bytes > PATH_MAX_BYTES) return `is ${bytes} bytes long; a path is at most ${PATH_MAX_BYTES} bytes (PATH_MAX)`;
  const long = p.split('/').find((c) => Buffer.byteLength(c) > NAME_MAX_BYTES);
  if (long !== undefined)
    return `has a name of ${Buffer.byteLength(long)} bytes (${long.slice(0, 16)}...); a file or directory name is at most ${NAME_MAX_BYTES} bytes (NAME_MAX)`;
  return undefined;
}

/**
 * A path as a zod string: one line, within the limits. Built from the zod the caller has (a command's definition is
 * handed its zod: src/runtime/define.ts), so this file loads without zod.
 */
export function pathString(z: typeof zod) {
  return z
    .string()
    .min(1)
    .superRefine((s, ctx) => {
      const problem = pathProblem(s) ?? (/[\n\r]/.test(s) ? 'must not contain line breaks' : undefined);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}

/** A local file named in the config: `~` and `~/...` from the home directory, a relative path from `baseDir`. */
export function localPath(path: string, baseDir: string): string {
  const p = expandHome(path);
  return isAbsolute(p) ? p : resolve(baseDir, p);
}
