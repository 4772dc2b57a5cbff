// The environment an upstream bug report needs (SGLang's form: "Run `python3 -m sglang.check_env` and paste output
// here"), captured on the GPU host at launch. check_env imports torch, so it costs seconds: it runs once per host and
// SGLang version, and the result is kept in the ledger. When check_env cannot run, a constant script collects the
// same facts (Python, CUDA, driver, GPUs and compute capability, `nvidia-smi topo -m`, key package versions).

import type { HostConfig } from '../config/schema.ts';
import { HOME_PATH_SH } from '../hosts/quote.ts';
import type { EnvReport } from '../ledger/environments.ts';
import { redactText } from '../redact.ts';
import { type SingleFlight, singleFlight } from '../single-flight.ts';
import { type Engine, type HostContext, hostOf } from './engine.ts';
import { parseCheckEnv } from './env-parse.ts';
import { readVersions } from './host-info.ts';
import { script } from './scripts.ts';

export type { EnvReport } from '../ledger/environments.ts';

/** The packages the fallback asks for: the ones an SGLang maintainer asks about first. */
const FALLBACK_MODULES = ['torch', 'sglang', 'sgl_kernel', 'flashinfer', 'transformers', 'triton'];

/**
 * env PYTHON PATH_PREPEND TIMEOUT_S: check_env's stdout after GLM_CHECK_ENV, or GLM_FALLBACK <exit> and tagged
 * sections (@stderr @python @pkg @nvcc @gpus @topo) for the bot to assemble.
 */
export const ENV_SCRIPT = `
if [ -n "$2" ]; then PATH=$2:$PATH; export PATH; fi
${HOME_PATH_SH}
PY=$(home_path "$1")
T=; if command -v timeout >/dev/null 2>&1; then T="timeout $3"; fi
e=$(mktemp 2>/dev/null || echo "/tmp/glm-env.$$")
out=$($T "$PY" -m sglang.check_env 2>"$e"); rc=$?
if [ "$rc" = 0 ] && [ -n "$out" ]; then rm -f "$e"; echo GLM_CHECK_ENV; printf '%s\\n' "$out"; exit 0; fi
echo "GLM_FALLBACK $rc"
echo @stderr; tail -n 3 "$e" 2>/dev/null; rm -f "$e"
echo @python; "$PY" --version 2>&1 | head -n 1
for m in ${FALLBACK_MODULES.join(' ')}; do
  v=$("$PY" -c "import $m; print($m.__version__)" 2>/dev/null | tail -n 1)
  echo "@pkg $m \${v:-Module Not Found}"
done
echo @nvcc; nvcc --version 2>/dev/null | grep -i release | head -n 1
if command -v nvidia-smi >/dev/null 2>&1; then
  echo @gpus; nvidia-smi --query-gpu=index,name,compute_cap,driver_version --format=csv,noheader 2>&1
  echo @topo; nvidia-smi topo -m 2>&1
fi
exit 0
`;

/** check_env takes a few seconds; a wedged CUDA driver must not hold a launch for longer than this. */
const CHECK_ENV_TIMEOUT_S = 120;

function sections(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let cur: string[] | undefined;
  for (const line of text.split('\n')) {
    const tag = line.match(/^@(stderr|python|nvcc|gpus|topo)$/);
    const pkg = line.match(/^@pkg (\S+) (.*)$/);
    if (tag) {
      cur = [];
      out.set(tag[1]!, cur);
    } else if (pkg) {
      out.set(`pkg:${pkg[1]}`, [pkg[2]!]);
      cur = undefined;
    } else if (cur && line !== '') cur.push(line);
  }
  return out;
}

/** The fallback's sections, laid out as check_env would print them, so one parser and one reader serve both. */
export function fallbackText(raw: string): { text: string; problem: string } {
  const s = sections(raw);
  const rc = raw.match(/^GLM_FALLBACK (\d+)/m)?.[1] ?? '?';
  const why = (s.get('stderr') ?? []).join(' ').trim();
  const problem = `python -m sglang.check_env failed (exit ${rc})${why ? `: ${why}` : ''}`;
  const lines: string[] = [];
  const py = s.get('python')?.[0]?.replace(/^Python\s+/, '');
  lines.push(`Python: ${py ?? 'unknown'}`);
  const gpuRows = (s.get('gpus') ?? []).map((l) => l.split(',').map((x) => x.trim()));
  const valid = gpuRows.filter((r) => r.length >= 4 && /^\d+$/.test(r[0]!));
  lines.push(`CUDA available: ${valid.length > 0 ? 'True' : 'unknown (nvidia-smi did not list GPUs)'}`);
  // Grouped by name and capability, as check_env groups them.
  const groups = new Map<string, { ids: string[]; name: string; cap: string }>();
  for (const [index, name, cap] of valid) {
    const k = `${name}|${cap}`;
    const g = groups.get(k) ?? { ids: [], name: name!, cap: cap! };
    g.ids.push(index!);
    groups.set(k, g);
  }
  for (const g of groups.values()) lines.push(`GPU ${g.ids.join(',')}: ${g.name}`);
  for (const g of groups.values()) lines.push(`GPU ${g.ids.join(',')} Compute Capability: ${g.cap}`);
  const nvcc = s.get('nvcc')?.[0];
  if (nvcc) lines.push(`NVCC: ${nvcc.trim()}`);
  const drivers = [...new Set(valid.map((r) => r[3]!))];
  if (drivers.length === 1) lines.push(`CUDA Driver Version: ${drivers[0]}`);
  else if (drivers.length > 1) lines.push(`CUDA Driver Versions: ${drivers.join(', ')}`);
  lines.push(`PyTorch: ${s.get('pkg:torch')?.[0] ?? 'Module Not Found'}`);
  for (const m of FALLBACK_MODULES.slice(1)) lines.push(`${m}: ${s.get(`pkg:${m}`)?.[0] ?? 'Module Not Found'}`);
  const topo = s.get('topo');
  if (topo?.length) lines.push(`NVIDIA Topology: \n${topo.join('\n')}`);
  return { text: `${lines.join('\n')}\n`, problem };
}

export function reportFromOutput(host: string, sglangVersion: string | null, at: number, stdout: string): EnvReport {
  const marker = stdout.indexOf('GLM_CHECK_ENV\n');
  if (marker >= 0) {
    const text = redactText(stdout.slice(marker + 'GLM_CHECK_ENV\n'.length));
    return { host, sglangVersion, source: 'check_env', capturedAt: at, text, facts: parseCheckEnv(text) };
  }
  if (/^GLM_FALLBACK/m.test(stdout)) {
    const raw = fallbackText(stdout.slice(stdout.search(/^GLM_FALLBACK/m)));
    const text = redactText(raw.text);
    const problem = redactText(raw.problem);
    return { host, sglangVersion, source: 'fallback', capturedAt: at, text, facts: parseCheckEnv(text), problem };
  }
  return unavailable(host, sglangVersion, at, `unexpected output from the environment script: ${stdout.slice(0, 200)}`);
}

function unavailable(host: string, sglangVersion: string | null, at: number, problem: string): EnvReport {
  return {
    host,
    sglangVersion,
    source: 'unavailable',
    capturedAt: at,
    text: '',
    facts: { gpus: [], packages: {} },
    problem,
  };
}

async function runCapture(
  engine: HostContext & Pick<Engine, 'clock'>,
  hostName: string,
  cfg: HostConfig,
  sglang: string | null,
) {
  const { host } = hostOf(engine, hostName);
  const r = await host.exec(
    script(ENV_SCRIPT, 'glm-env', [cfg.python, cfg.bin_dirs.join(':'), String(CHECK_ENV_TIMEOUT_S)]),
    { timeoutMs: (CHECK_ENV_TIMEOUT_S + 60) * 1000 },
  );
  return reportFromOutput(hostName, sglang, engine.clock.now(), r.stdout);
}

// Two launches on one host (or a launch and a draft) asking at once share one check_env run.
const flights = new WeakMap<object, SingleFlight<EnvReport>>();

/** What capturing a host's environment touches: the host, the ledger's environments, the clock, the log. */
export type EnvContext = HostContext & Pick<Engine, 'ledger' | 'clock' | 'log'>;

/**
 * The host's environment for an upstream report: from the ledger when this host and SGLang version were captured
 * before, else captured now (and kept). Never throws: a host that cannot be asked gives an `unavailable` report that
 * says why (and is not kept, so the next call asks again). With `attemptId`, the report is linked to that attempt.
 */
export async function captureEnvironment(
  engine: EnvContext,
  hostName: string,
  opts: { attemptId?: number; fresh?: boolean } = {},
): Promise<EnvReport> {
  const store = engine.ledger.environments;
  let cfg: HostConfig;
  let sglang: string | null = null;
  try {
    const h = hostOf(engine, hostName);
    cfg = h.cfg;
    sglang = (await readVersions(h.host, cfg)).sglang ?? null;
  } catch (e) {
    return unavailable(hostName, null, engine.clock.now(), (e as Error).message);
  }
  const link = (r: EnvReport) => {
    if (opts.attemptId === undefined || r.id === undefined) return r;
    try {
      store.link(opts.attemptId, r.id);
    } catch (e) {
      // An attempt id the ledger does not know: the report stands, unlinked.
      engine.log.warn({ err: (e as Error).message, attempt: opts.attemptId }, 'environment not linked to attempt');
    }
    return r;
  };
  if (sglang && !opts.fresh) {
    const hit = store.latest(hostName, sglang);
    if (hit) return link(hit);
  }
  let flight = flights.get(engine);
  if (!flight) {
    flight = singleFlight<EnvReport>();
    flights.set(engine, flight);
  }
  let report: EnvReport;
  try {
    report = await flight(`${hostName}\0${sglang ?? ''}\0${opts.fresh ? engine.clock.now() : ''}`, async () => {
      const r = await runCapture(engine, hostName, cfg, sglang);
      // Kept only when it says something and is keyed by a real version: a broken install is asked again next time.
      if (r.source !== 'unavailable' && sglang) r.id = store.save(r);
      return r;
    });
  } catch (e) {
    return unavailable(hostName, sglang, engine.clock.now(), (e as Error).message);
  }
  return link(report);
}
