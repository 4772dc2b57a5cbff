// An upstream bug report from failing attempts: the exact command, the configurations tried with the settings that
// differ and each outcome, the root log lines, the classification and the host environment, rendered from the
// user-editable templates in the shape of SGLang's bug-report form. Everything that leaves the team is scrubbed.
import { UserError } from '../errors.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { attemptRows } from '../lifecycle/attempts-table.ts';
import type { EnvReport } from '../lifecycle/env.ts';
import { hardwareOf } from '../lifecycle/env-parse.ts';
import type { Catalog } from '../logs/classify/index.ts';
import { commandLine } from '../profiles/index.ts';
import { REDACTED, SECRET } from '../redact.ts';
import { renderTemplate } from '../templates/template.ts';
import type { IssueTemplates } from './templates.ts';
import { crashKeyOf, type DuplicateCheck } from './upstream.ts';

const LABEL: Record<string, string> = {
  nan_in_sampling: 'NaN in sampling',
  cuda_oom: 'CUDA out of memory',
  cuda_graph_capture_failed: 'CUDA graph capture failed',
  shared_memory_exceeded: 'shared memory exceeded',
  unsupported_arch: 'unsupported GPU architecture',
  illegal_memory_access: 'illegal memory access',
  backend_assertion: 'backend assertion',
  nccl_error: 'NCCL error',
  model_load_error: 'model load error',
  import_error: 'import error',
  port_in_use: 'port in use',
  watchdog_timeout: 'watchdog timeout',
  other: 'crash',
};

interface Cls {
  category: string;
  phase: string;
  summary: string;
  evidence: Array<{ line: number; text: string }>;
  dedupKey: string;
}

function cls(a: Attempt): Cls | undefined {
  const c = a.classification as Cls | null;
  return c?.category && c.category !== 'none' ? c : undefined;
}

/** A crash of the server itself; launches the bot could not even start (launch_refused, ...) are not SGLang's. */
export function isFailing(a: Attempt): boolean {
  return !a.active && (cls(a) !== undefined || a.status === 'crashed');
}

/** Whether an attempt counts in a bug report (reportableIn). */
export type Reportable = (a: Attempt) => boolean;

/**
 * Ledger events that say the bot told a failure while the server still ran (recordHang's `hang`, the early alert's
 * `crash_seen`, a worker node's `node_failed`): NCCL ranks hang after an error and SGLang's HTTP server outlives its
 * scheduler, so such a server is often stopped by a person after, and it failed all the same.
 */
const TOLD_LIVE = new Set(['hang', 'crash_seen', 'node_failed']);

/**
 * The failing attempts a bug report counts. One a person stopped counts when its failure was told while it ran (an
 * event of TOLD_LIVE, or a first request refused) and its classification is no failure record alone (`survivable`:
 * a serving process logs errors it answers and serves on). Rows written before the survival rules kept such a record
 * as the classification of a server that served on, unmarked and with no such event: those are not counted.
 */
export function reportableIn(events: (id: number) => Array<{ kind: string }>): Reportable {
  return (a) => {
    if (!isFailing(a)) return false;
    if (a.status !== 'stopped') return true;
    const c = a.classification as { category?: string; survivable?: boolean } | null;
    if (c?.survivable) return false;
    return c?.category === 'first_request_failed' || events(a.id).some((e) => TOLD_LIVE.has(e.kind));
  };
}

function modelPathOf(a: Attempt): string {
  return a.flags['model-path'] ?? '';
}

/**
 * The attempts a draft is about. Named ones as given; else the newest failing attempt and every finished attempt of
 * the same model on the same host (the configurations tried for it). Infrastructure failures are left out.
 */
export function selectAttempts(all: Attempt[], ids: number[], isReportable: Reportable): Attempt[] {
  if (ids.length > 0) {
    const byId = new Map(all.map((a) => [a.id, a]));
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length) {
      throw new UserError(`no attempt #${missing.join(', #')} in the ledger`, {
        kind: 'command',
        lead: 'list them with',
        command: 'attempts',
      });
    }
    const picked = [...new Set(ids)].sort((a, b) => a - b).map((id) => byId.get(id)!);
    if (!picked.some(isReportable)) {
      throw new UserError('none of these attempts failed: a bug report needs a crash', {
        kind: 'command',
        lead: 'list them with',
        command: 'attempts',
      });
    }
    return picked;
  }
  const latest = [...all].reverse().find(isReportable);
  if (!latest) throw new UserError('no failing attempt in the ledger to report', 'launch one first, or name attempts');
  const infra = /^launch_(refused|failed|unknown)$/;
  return all.filter(
    (a) =>
      !a.active &&
      a.host === latest.host &&
      modelPathOf(a) === modelPathOf(latest) &&
      !infra.test(a.outcome ?? '') &&
      a.id <= latest.id,
  );
}

/**
 * The attempt the report is written around: the newest one of the crash class seen most often, since a crash that
 * survives several configurations is the bug worth filing (ties: the newest class).
 */
export function choosePrimary(attempts: Attempt[], isReportable: Reportable, primaryId?: number): Attempt {
  if (primaryId !== undefined) {
    const p = attempts.find((a) => a.id === primaryId);
    if (!p) throw new UserError(`attempt #${primaryId} is not among the attempts drafted`);
    return p;
  }
  const failing = attempts.filter(isReportable);
  const count = new Map<string, number>();
  for (const a of failing) count.set(cls(a)?.category ?? 'other', (count.get(cls(a)?.category ?? 'other') ?? 0) + 1);
  let best = failing[failing.length - 1]!;
  for (const a of [...failing].reverse()) {
    if ((count.get(cls(a)?.category ?? 'other') ?? 0) > (count.get(cls(best)?.category ?? 'other') ?? 0)) best = a;
  }
  return best;
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Settings that differ between the attempts, in the order the command renders them. */
function differing(attempts: Attempt[]): string[] {
  const order: string[] = [];
  for (const a of attempts) for (const k of Object.keys(a.flags)) if (!order.includes(k)) order.push(k);
  return order.filter((k) => k !== 'port' && new Set(attempts.map((a) => a.flags[k] ?? '-')).size > 1);
}

export function attemptsTable(attempts: Attempt[], scrub: (s: string) => string, now: number): string {
  const keys = differing(attempts);
  const rows = attemptRows(attempts, now);
  const head = ['#', ...keys, 'outcome'];
  const lines = [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...attempts.map((a, i) => {
      const outcome = rows[i]!.outcome;
      return `| ${[String(i + 1), ...keys.map((k) => a.flags[k] ?? '-'), outcome].map((c) => cell(scrub(c))).join(' | ')} |`;
    }),
  ];
  return lines.join('\n');
}

/**
 * The command as it ran, minus secrets (a redacted assignment says nothing to a reader) and minus the SGLang
 * stand-in's own knobs (STANDIN_*, e.g. its simulated time scale), which mean nothing to upstream.
 */
export function reproCommand(a: Pick<Attempt, 'argv' | 'env'>, scrub: (s: string) => string): string {
  const env = Object.fromEntries(
    Object.entries(a.env).filter(([k, v]) => !v.includes(REDACTED) && v !== SECRET && !k.startsWith('STANDIN_')),
  );
  return scrub(commandLine({ argv: a.argv, env }));
}

export function rootLines(c: Cls | undefined, scrub: (s: string) => string, max = 6): string {
  if (!c) return '(no crash line was recognised in the log)';
  const out: string[] = [];
  for (const e of c.evidence) {
    const t = scrub(e.text.trim());
    const short = t.length > 300 ? `${t.slice(0, 299)}…` : t;
    // Eight TP ranks print the same line: once is enough.
    if (!out.includes(short)) out.push(short);
    if (out.length >= max) break;
  }
  return out.join('\n');
}

function shortModel(modelPath: string): string {
  return modelPath.replace(/\/+$/, '').split('/').pop() || modelPath;
}

export interface DraftInput {
  attempts: Attempt[];
  /** Which of them count as failing (reportableIn). */
  isReportable: Reportable;
  primary: Attempt;
  env: EnvReport | undefined;
  catalog: Catalog;
  duplicates: DuplicateCheck;
  scrub: (s: string) => string;
  now: number;
}

export function draftData(input: DraftInput): Record<string, unknown> {
  const { attempts, primary, env, scrub, isReportable } = input;
  const c = cls(primary);
  const category = c?.category ?? 'other';
  const phase = c?.phase ?? 'unknown';
  const label = LABEL[category] ?? category;
  const headline = `${label.charAt(0).toUpperCase()}${label.slice(1)}${phase !== 'unknown' ? ` during ${phase}` : ''}`;
  const sigId = crashKeyOf(primary.classification)?.signatureId;
  const meaning = (sigId && input.catalog.byId.get(sigId)?.meaning) || '';
  const modelPath = scrub(modelPathOf(primary));
  const model = shortModel(modelPath);
  const hardware = (env && hardwareOf(env.facts)) ?? 'unknown GPUs';
  const hasEnv = env !== undefined && env.source !== 'unavailable' && env.text.trim() !== '';
  const sglang = env?.sglangVersion ?? primary.sglangVersion ?? 'unknown';
  const failing = attempts.filter(isReportable);
  const same = failing.filter((a) => cls(a)?.category === category).length;
  const others = [...new Set(failing.map((a) => cls(a)?.category ?? 'crashed').filter((k) => k !== category))];
  const tp = primary.flags['tp-size'] ?? '1';
  const milestone = primary.lastMilestone ? ` Startup progress before the crash: ${primary.lastMilestone}.` : '';
  const tally =
    attempts.length > 1
      ? ` ${same} of the ${attempts.length} configurations tried failed this way${others.length ? `; the others: ${others.join(', ')}` : ''}.`
      : '';
  const summary = scrub(
    `SGLang ${sglang} serving \`${modelPath}\` with tensor parallel size ${tp} on ${hardware} fails: ${c?.summary ?? primary.outcomeDetail ?? primary.outcome ?? 'crashed'}.${milestone}${tally}`,
  );
  // The body names what bears on the crash it reports; the chat message above the draft lists the rest too.
  const relevant = input.duplicates.known.filter((k) => k.category === undefined || k.category === category);
  const related = [...relevant, ...input.duplicates.found].map((r) => ({
    title: scrub(r.title),
    url: r.url,
    source: r.source,
  }));
  const rows = attemptRows(attempts, input.now);
  const keys = differing(attempts);
  const envNote = !env
    ? 'Not captured: the host could not be asked.'
    : env.source === 'check_env'
      ? `Output of \`python3 -m sglang.check_env\` on the GPU host (captured ${new Date(env.capturedAt).toISOString().slice(0, 10)}).`
      : env.source === 'fallback'
        ? `\`python3 -m sglang.check_env\` did not run (${scrub(env.problem ?? 'unknown reason')}); the same facts, collected separately:`
        : `Not captured: ${scrub(env.problem ?? 'unknown reason')}.`;
  const command = reproCommand(primary, scrub);
  const x = (b: boolean) => (b ? 'x' : ' ');
  return {
    model,
    model_path: modelPath,
    tp,
    hardware: scrub(hardware),
    sglang_version: scrub(sglang),
    summary,
    crash: { class: category, phase, headline, summary: scrub(c?.summary ?? ''), meaning: scrub(meaning) },
    root_lines: rootLines(c, scrub),
    checklist: {
      // Searched, and nothing matched: only then has the "found no solution" box been earned.
      searched: x(
        input.duplicates.searched && input.duplicates.known.length === 0 && input.duplicates.found.length === 0,
      ),
      // Needs a retest on the newest release, which the bot cannot vouch for.
      latest: x(false),
      env_and_repro: x(hasEnv && command !== ''),
      not_question: x(c !== undefined || primary.status === 'crashed'),
      english: x(true),
    },
    has_related: related.length > 0,
    related,
    command,
    attempt_count: String(attempts.length),
    attempts_table: attemptsTable(attempts, scrub, input.now),
    attempts: attempts.map((a, i) => ({
      n: String(i + 1),
      id: String(a.id),
      profile: a.profile,
      changes: keys.map((k) => `${k}=${scrub(a.flags[k] ?? '-')}`).join(', '),
      outcome: scrub(rows[i]!.outcome),
    })),
    has_environment: hasEnv,
    environment: hasEnv ? scrub(env.text.replace(/\s+$/, '')) : '',
    environment_note: envNote,
  };
}

export interface Draft {
  title: string;
  body: string;
}

export function renderDraft(templates: IssueTemplates, data: Record<string, unknown>): Draft {
  const title = renderTemplate(templates.title, data).replace(/\s+/g, ' ').trim();
  const body = `${renderTemplate(templates.body, data)
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
  return { title, body };
}

/** A prefilled new-issue link, or undefined when the draft is too long for one (then the file is the draft). */
export function newIssueUrl(
  webUrl: string,
  repo: string,
  draft: Draft,
  maxLength: number,
  labels = ['Bug'],
): string | undefined {
  const q = [
    `labels=${encodeURIComponent(labels.join(','))}`,
    `title=${encodeURIComponent(draft.title)}`,
    `body=${encodeURIComponent(draft.body)}`,
  ].join('&');
  const url = `${webUrl.replace(/\/+$/, '')}/${repo}/issues/new?${q}`;
  return url.length <= maxLength ? url : undefined;
}
