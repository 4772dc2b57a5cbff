// The environment of every process the bot starts on its own machine (a `local: true` host). Never process.env: the
// bot's environment holds its Slack tokens, signing secret and GitHub token, and a server started with it would hand
// them to anyone who can read /proc/PID/environ or the server's own logs. Only what a shell and a Python need to
// find their programs, files and locale is passed on; the server's own variables arrive through the launch script.
const ALLOWED = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'TERM']);

export function childEnv(from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(from)) {
    if (v !== undefined && (ALLOWED.has(k) || k.startsWith('LC_'))) out[k] = v;
  }
  return out;
}
