// The issue-draft templates (templates/issue-title.txt, templates/issue-body.md, or the config's templates_dir) and
// the variables they may use. A template is checked against this list when it is loaded, so a typo fails the draft
// with the line and column instead of shipping a hole to a public tracker.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { LoadedConfig } from '../config/load.ts';
import { ConfigError } from '../errors.ts';
import { expandHome } from '../paths.ts';
import {
  checkTemplate,
  PACKAGE_TEMPLATES,
  parseTemplate,
  type Template,
  type VarSchema,
} from '../templates/template.ts';

export { PACKAGE_TEMPLATES };
export const TITLE_FILE = 'issue-title.txt';
export const BODY_FILE = 'issue-body.md';

/** Every variable an issue template may use (src/reports/draft.ts fills them all). */
export const ISSUE_VARIABLES: VarSchema = {
  model: 'text',
  model_path: 'text',
  tp: 'text',
  hardware: 'text',
  sglang_version: 'text',
  summary: 'text',
  crash: { fields: { class: 'text', phase: 'text', headline: 'text', summary: 'text', meaning: 'text' } },
  root_lines: 'text',
  // 'x' when the box is true, ' ' when the bot cannot vouch for it.
  checklist: {
    fields: { searched: 'text', latest: 'text', env_and_repro: 'text', not_question: 'text', english: 'text' },
  },
  has_related: 'flag',
  related: { list: { title: 'text', url: 'text', source: 'text' } },
  command: 'text',
  attempt_count: 'text',
  attempts_table: 'text',
  attempts: { list: { n: 'text', id: 'text', profile: 'text', changes: 'text', outcome: 'text' } },
  has_environment: 'flag',
  environment: 'text',
  environment_note: 'text',
};

export interface IssueTemplates {
  dir: string;
  title: Template;
  body: Template;
}

export function templatesDir(loaded: LoadedConfig): string {
  const configured = loaded.config.templates_dir;
  if (!configured) return PACKAGE_TEMPLATES;
  const p = expandHome(configured);
  if (isAbsolute(p)) return p;
  // Relative to the config file, like the other paths in it.
  const base = existsSync(loaded.source) ? dirname(loaded.source) : process.cwd();
  return resolve(base, p);
}

function read(dir: string, file: string): { path: string; text: string } {
  const path = join(dir, file);
  try {
    return { path, text: readFileSync(path, 'utf8') };
  } catch (e) {
    throw new ConfigError(dir, [
      {
        path,
        message: `cannot read the template: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        fix: `copy ${join(PACKAGE_TEMPLATES, file)} there, or unset templates_dir`,
      },
    ]);
  }
}

/** Reads, parses and checks both templates; a ConfigError (TemplateError) names every problem. */
export function loadIssueTemplates(dir: string): IssueTemplates {
  const t = read(dir, TITLE_FILE);
  const b = read(dir, BODY_FILE);
  const title = parseTemplate(t.text, t.path);
  const body = parseTemplate(b.text, b.path);
  checkTemplate(title, ISSUE_VARIABLES);
  checkTemplate(body, ISSUE_VARIABLES);
  return { dir, title, body };
}
