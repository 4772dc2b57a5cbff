// Part src/reports: owns upstream bug-report drafts: attempts table, environment, duplicates, redaction, issue
//   templates.
// May import: config, corpus, errors.ts, ledger, lifecycle, logs, paths.ts, profiles, redact.ts, templates.
//
// `draft-issue`: failing attempts from the ledger + the host environment + the classification + upstream duplicates
// -> a report in SGLang's bug-report shape, saved as a file, with a prefilled new-issue link when it fits in a URL.
// The bot drafts; a person reads it and files it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Attempt } from '../ledger/attempts.ts';
import { catalogFromConfig } from '../lifecycle/classifier.ts';
import type { Engine } from '../lifecycle/engine.ts';
import type { EnvContext } from '../lifecycle/env.ts';
import { captureEnvironment, type EnvReport } from '../lifecycle/env.ts';
import {
  choosePrimary,
  type Draft,
  draftData,
  newIssueUrl,
  type Reportable,
  renderDraft,
  reportableIn,
  selectAttempts,
} from './draft.ts';
import { GITHUB_DEFAULTS, type IssueSearch, searchFromConfig } from './github.ts';
import { createScrubber } from './scrub.ts';
import { loadIssueTemplates, templatesDir } from './templates.ts';
import { type CrashKey, crashKeyOf, type DuplicateCheck, findDuplicates } from './upstream.ts';

export interface IssueDraftRequest {
  /** Attempt ids; empty: the newest failing attempt and the other attempts of its model on its host. */
  ids: number[];
  primary?: number;
  /** The tracker search; default: from the config (none without a token). `null` turns searching off. */
  search?: IssueSearch | null;
}

export interface IssueDraft extends Draft {
  attempts: number[];
  primary: number;
  file: string;
  /** Prefilled new-issue link; absent when the draft is too long for one. */
  url?: string;
  newIssuePage: string;
  duplicates: DuplicateCheck;
  environment: EnvReport['source'] | 'none';
}

function configuredHostNames(engine: Pick<Engine, 'loaded'>): string[] {
  return Object.values(engine.loaded.config.hosts).flatMap((h) => (h.ssh ? [h.ssh.host] : []));
}

/**
 * The attempts selectAttempts chooses from, read by index: the named ones, or the newest failure and the attempts of
 * its model on its host up to it (what selectAttempts keeps), not the whole ledger.
 */
function candidates(engine: Pick<Engine, 'attempts'>, ids: number[], isReportable: Reportable): Attempt[] {
  if (ids.length > 0) return engine.attempts.byIds(ids);
  let latest: Attempt | undefined;
  for (const a of engine.attempts.failingNewestFirst()) {
    if (isReportable(a)) {
      latest = a;
      break;
    }
  }
  if (!latest) return [];
  return engine.attempts.ofModel(latest.flags['model-path'] ?? '', { host: latest.host, maxId: latest.id });
}

/** What drafting an upstream report touches: the ledger's attempts and environments, the host (for a fresh
 * environment), the config (templates, signatures, github) and the data dir. */
export type IssueContext = EnvContext & Pick<Engine, 'attempts'>;

export async function draftIssue(engine: IssueContext, req: IssueDraftRequest): Promise<IssueDraft> {
  // Templates first: a broken template should fail before the host is asked anything.
  const templates = loadIssueTemplates(templatesDir(engine.loaded));
  const isReportable = reportableIn((id) => engine.attempts.events(id));
  const attempts = selectAttempts(candidates(engine, req.ids, isReportable), req.ids, isReportable);
  const primary = choosePrimary(attempts, isReportable, req.primary);
  let env = engine.ledger.environments.forAttempt(primary);
  if (!env && engine.loaded.config.hosts[primary.host]) env = await captureEnvironment(engine, primary.host);
  const catalog = catalogFromConfig(engine.loaded.config.signatures);
  const crashes: CrashKey[] = [];
  for (const a of [primary, ...[...attempts].reverse().filter(isReportable)]) {
    const k = crashKeyOf(a.classification);
    if (k && !crashes.some((c) => c.category === k.category && c.signatureId === k.signatureId)) crashes.push(k);
  }
  const github = engine.loaded.config.github ?? GITHUB_DEFAULTS;
  const search = req.search === null ? undefined : (req.search ?? searchFromConfig(github));
  const duplicates = await findDuplicates({
    catalog,
    crashes,
    arch: env?.facts.arch,
    model: (primary.flags['model-path'] ?? '').split('/').pop(),
    search,
  });
  const scrub = createScrubber({ hostNames: configuredHostNames(engine) });
  const data = draftData({ attempts, isReportable, primary, env, catalog, duplicates, scrub, now: engine.clock.now() });
  const draft = renderDraft(templates, data);
  const dir = join(engine.loaded.dataDir, 'drafts');
  mkdirSync(dir, { recursive: true });
  const stamp = new Date(engine.clock.now()).toISOString().replace(/[:.]/g, '-');
  const file = join(dir, `issue-${primary.id}-${stamp}.md`);
  // The title rides along as an HTML comment: invisible when the whole file is pasted into GitHub.
  writeFileSync(file, `<!-- title: ${draft.title.replace(/--/g, '- -')} -->\n${draft.body}`);
  const url = newIssueUrl(github.web_url, github.repo, draft, github.max_url_length);
  return {
    ...draft,
    attempts: attempts.map((a) => a.id),
    primary: primary.id,
    file,
    ...(url ? { url } : {}),
    newIssuePage: `${github.web_url.replace(/\/+$/, '')}/${github.repo}/issues/new`,
    duplicates,
    environment: env?.source ?? 'none',
  };
}

/** Duplicates above the draft, then where the draft is and how to file it. */
/** What a person reads after `draft-issue`: duplicates, the file and a summary; the body and link only on request. */
export function draftText(d: IssueDraft, opts: { body?: boolean } = {}): string {
  const lines: string[] = [];
  if (d.duplicates.known.length || d.duplicates.found.length) {
    lines.push('Read these first: they may already report this crash.');
    for (const k of d.duplicates.known) lines.push(`  ${k.title}\n    ${k.url} (known: ${k.why})`);
    for (const f of d.duplicates.found) lines.push(`  ${f.title}\n    ${f.url} (${f.state ?? 'found'}; ${f.why})`);
  } else {
    lines.push('No known upstream report matches this crash.');
  }
  lines.push(
    d.duplicates.searched
      ? 'The upstream tracker was searched too.'
      : `The upstream tracker was not searched: ${d.duplicates.searchNote ?? 'no search configured'}.`,
  );
  lines.push('');
  lines.push(
    `Draft for attempt${d.attempts.length === 1 ? '' : 's'} #${d.attempts.join(', #')} (written around #${d.primary}):`,
  );
  lines.push(`  title: ${d.title}`);
  lines.push(`  file:  ${d.file}`);
  const size = `${d.body.split('\n').length} lines, ${d.body.length} characters`;
  if (!opts.body) {
    lines.push(`  body:  ${size}; read it in the file, or print it with --body`);
    lines.push(
      d.url
        ? `  to file it: open ${d.newIssuePage} with the file's text, or use the prefilled link (--body prints it)`
        : `  to file it: paste the file into ${d.newIssuePage}`,
    );
    return lines.join('\n');
  }
  lines.push(
    d.url
      ? `  open a prefilled issue: ${d.url}`
      : `  too long for a prefilled link: paste the file into ${d.newIssuePage}`,
  );
  lines.push('', '-----', d.body);
  return lines.join('\n');
}
