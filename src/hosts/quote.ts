// POSIX shell quoting, done once, at the chokepoint. Inside single quotes nothing is expanded; a single quote is
// written as '\''. Values are validated before they get here; quoting is the second line of defence.

export function shq(s: string): string {
  if (s.includes('\0')) throw new Error('an argument contains a NUL byte');
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function shArgv(argv: readonly string[]): string {
  return argv.map(shq).join(' ');
}

// A path the user gives may start with `~`, which a quoted argument never expands: the host expands it from its own
// $HOME. Both ways live here, so every script and rendered job expands `~` alike (only `~` alone or `~/...`).

/** A sh function for the bot's fixed scripts: `home_path P` prints P with a leading `~` made the host's $HOME. */
export const HOME_PATH_SH =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: this is shell text, not a JS template
  'home_path() { case $1 in "~") printf %s "$HOME" ;; "~/"*) printf %s "$HOME/${1#"~/"}" ;; *) printf %s "$1" ;; esac; }';

/** A path as shell text (a rendered job script): `~/x` as "$HOME"/'x' (the quotes would stop ~ expanding). */
export function shqPath(p: string): string {
  if (p === '~') return '"$HOME"';
  return p.startsWith('~/') ? `"$HOME"/${shq(p.slice(2))}` : shq(p);
}

/** Whether a path needs its host's home to mean anything. */
export function isHomePath(p: string): boolean {
  return p === '~' || p.startsWith('~/');
}
