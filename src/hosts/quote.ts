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
