// Pattern lists as OpenSSH reads them (ssh_config PATTERNS): `*` and `?` wildcards, a leading `!` negates, and a
// negated match wins over any positive one. Used for known_hosts host patterns and the operator allow-lists.

export function globToRegex(glob: string, opts: { ignoreCase?: boolean } = {}): RegExp {
  const re = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`, opts.ignoreCase ? 'i' : '');
}

/** True when `name` matches a pattern of the list and no negated (`!`) one. */
export function matchesPatternList(
  patterns: readonly string[],
  name: string,
  opts: { ignoreCase?: boolean } = {},
): boolean {
  let matched = false;
  for (const p of patterns) {
    if (p.startsWith('!')) {
      if (globToRegex(p.slice(1), opts).test(name)) return false;
    } else if (globToRegex(p, opts).test(name)) {
      matched = true;
    }
  }
  return matched;
}
