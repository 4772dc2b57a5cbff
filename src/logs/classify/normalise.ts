// Layer 1 of the classifier: take off what other programs put in front of a line, so the rest reads the payload as
// SGLang or Python wrote it. Real logs arrive through docker compose, Ray, vLLM's logger, Python's logging module,
// Kubernetes (CRI) and journald timestamps, mpirun/srun/torchrun rank labels, and Markdown quoting when pasted into
// an issue; several can stack (`sglang-1  | (SGLangEngine pid=7) ...`). Only a line's start is touched: the payload,
// its indentation included (traceback frames are indented), is kept exactly. ANSI escapes and `\r` progress bars are
// taken off earlier, when bytes become lines (../lines.ts).

const WRAPPERS: RegExp[] = [
  // Markdown / e-mail quoting: `> `, `>> `; inline code around a pasted line: `` `ValueError: ...` ``
  /^(?:> ?)+/,
  /^`{1,3}(?=\S)/,
  // Kubernetes CRI log lines and `docker logs -t`: `2025-11-05T12:19:32.123456789Z stdout F `
  /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? (?:(?:stdout|stderr) [FP] )?/,
  // CI runners that stamp each line with an ISO time in brackets (Jenkins' timestamper, buildkite): `[2025-11-06T02:10:00.702Z] `
  /^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\] /,
  // docker compose v1/v2: `sglang-1  | `, `vllm_server_1 | `
  /^[A-Za-z][\w.-]* +\| ?/,
  // Ray and vLLM worker processes: `(RayWorkerWrapper pid=123) `, `(EngineCore_DP0 pid=1) `, `(pid=5, ip=10.0.0.2) `,
  // vLLM's multiprocessing workers with their rank: `(VllmWorker rank=3 pid=1090) `
  /^\((?:[A-Za-z_][\w-]* )?(?:[a-z_]+=\w+ )*pid=\d+(?:, ip=[^)]*)?\) ?/,
  /^\((?:raylet|autoscaler|monitor|dashboard)[^)]*\) ?/,
  // vLLM's logger: `ERROR 11-05 12:19:32 [core.py:708] ` (V1), `INFO 08-19 07:51:03 model_runner.py:732] ` (V0);
  // servers built on it print the year too: `ERROR 2025-07-21 14:34:24.934 factory.py:62] `
  /^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./-]+:\d+\] ?/,
  // Python logging's default format: `ERROR:root:`, `WARNING:sglang.srt.server:`
  /^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:/,
  // Common logging formats with a date: `2025-01-05 12:19:32,123 - name - ERROR - `, loguru `... | ERROR | mod:fn:12 - `
  /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? - (?:[\w.]+ - )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - /,
  /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? \| (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) +\| [\w.:<>-]+ - /,
  // Shell and process wrappers that put a time stamp and a source before each line: `[ts] [/bin/sh@<0,0>]: `,
  // `[ts] ERROR: `
  /^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[^\]]*\] \[[^\]]*\]: ?/,
  /^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[^\]]*\] (?:ERROR|WARNING|INFO): /,
  // journald / syslog: `Dec 01 12:00:00 gpu-box python3[1234]: `
  /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]+ [\w./@-]+(?:\[\d+\])?: /,
  // pytest's failure report puts `E` and spaces in front of the exception lines: `E       RuntimeError: ...`
  /^E {3,}(?=\S)/,
  // mpirun `[1,0]<stderr>:`, srun --label `3: ` (in front of indented frame lines too)
  /^\[\d+,\d+\]<std(?:out|err)>:/,
  /^\d{1,4}: /,
];

// Every wrapper at once: most lines have none, and one failed match says so instead of one per wrapper (the
// classifier unwraps each line it reads). When it matches, the wrappers are taken off one by one as below. (A
// wrapper with flags could not join it: then every line takes the slow way.)
const ANY_WRAPPER = WRAPPERS.every((re) => re.flags === '')
  ? new RegExp(WRAPPERS.map((re) => `(?:${re.source})`).join('|'))
  : /(?:)/;

/** The line without any wrapper in front of it (repeatedly: wrappers stack). */
export function stripWrappers(line: string): string {
  if (!ANY_WRAPPER.test(line)) return line;
  let s = line;
  for (let changed = true; changed; ) {
    changed = false;
    for (const re of WRAPPERS) {
      const m = re.exec(s);
      if (m && m[0].length > 0) {
        s = s.slice(m[0].length);
        changed = true;
      }
    }
  }
  return s;
}
