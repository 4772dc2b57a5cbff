// The draft templates are user-editable, so they must fail loudly: a variable the renderer does not offer, or one it
// has no value for, is an error naming the file, line and column, never an empty string in a public report.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import {
  BODY_FILE,
  ISSUE_VARIABLES,
  loadIssueTemplates,
  PACKAGE_TEMPLATES,
  TITLE_FILE,
} from '../../src/reports/templates.ts';
import {
  checkTemplate,
  parseTemplate,
  renderTemplate,
  TemplateError,
  type VarSchema,
} from '../../src/templates/template.ts';

const schema: VarSchema = {
  title: 'text',
  ok: 'flag',
  items: { list: { name: 'text', value: 'text' } },
  tags: { list: 'text' },
  crash: { fields: { class: 'text' } },
};

function compile(text: string, s: VarSchema = schema) {
  const t = parseTemplate(text, 'test.md');
  checkTemplate(t, s);
  return t;
}

function errorOf(f: () => unknown): TemplateError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TemplateError);
    expect(e).toBeInstanceOf(ConfigError);
    return e as TemplateError;
  }
  throw new Error('expected a TemplateError');
}

describe('strict templates', () => {
  it('renders values, records, lists and flags, and drops standalone section lines', () => {
    const t = compile(
      '# {{title}} ({{crash.class}})\n{{#ok}}\nok\n{{/ok}}\n{{^ok}}\nnot ok\n{{/ok}}\n{{#items}}\n- {{name}}: {{value}} [{{title}}]\n{{/items}}\ntags:{{#tags}} {{.}}{{/tags}}\n',
    );
    const out = renderTemplate(t, {
      title: 'T',
      ok: true,
      crash: { class: 'cuda_oom' },
      items: [
        { name: 'a', value: '1' },
        { name: 'b', value: '2' },
      ],
      tags: ['x', 'y'],
    });
    expect(out).toBe('# T (cuda_oom)\nok\n- a: 1 [T]\n- b: 2 [T]\ntags: x y\n');
    expect(renderTemplate(t, { title: 'T', ok: false, crash: { class: 'c' }, items: [], tags: [] })).toBe(
      '# T (c)\nnot ok\ntags:\n',
    );
  });

  it('refuses an unknown variable before rendering, with where it is and what was meant', () => {
    const e = errorOf(() => compile('line one\n  {{titel}} and {{nope.deep}}\n'));
    expect(e.problems.map((p) => p.at)).toEqual(['2:3', '2:17']);
    expect(e.problems[0]).toMatchObject({ message: "unknown variable 'titel'", fix: "did you mean 'title'?" });
    expect(e.problems[1]!.message).toBe("unknown variable 'nope.deep'");
    expect(e.message).toContain('test.md:2:3: unknown variable');
    // A list item's fields exist only inside the list.
    expect(errorOf(() => compile('{{name}}')).problems[0]!.message).toBe("unknown variable 'name'");
    expect(errorOf(() => compile('{{crash.klass}}')).problems[0]!.fix).toBe("did you mean 'crash.class'?");
  });

  it('refuses a missing value at render time instead of printing nothing, naming every one', () => {
    const t = compile('{{title}}\n{{#items}}{{name}}={{value}}\n{{/items}}');
    const e = errorOf(() => renderTemplate(t, { items: [{ name: 'a' }] }));
    expect(e.problems.map((p) => p.message)).toEqual([
      "variable 'title' has no value",
      "variable 'value' has no value",
    ]);
    expect(() => renderTemplate(t, { title: null, items: [] })).toThrow(/variable 'title' has no value/);
    // An empty string is a value.
    expect(renderTemplate(t, { title: '', items: [] })).toBe('\n');
  });

  it('reports broken tags and sections', () => {
    expect(errorOf(() => parseTemplate('{{#items}}x', 't')).problems[0]!.message).toBe('{{#items}} is never closed');
    expect(errorOf(() => parseTemplate('{{#a}}{{/b}}', 't')).problems[0]!.message).toMatch(/closes \{\{#a\}\}/);
    expect(errorOf(() => parseTemplate('{{/a}}', 't')).problems[0]!.message).toBe('{{/a}} closes no section');
    expect(errorOf(() => parseTemplate('{{ a b }}', 't')).problems[0]!.message).toMatch(/not a variable tag/);
    expect(errorOf(() => compile('{{items}}')).problems[0]!.message).toBe("'items' is a list, not a value");
  });
});

describe('the shipped issue templates', () => {
  it('use only variables the draft offers, in the shape of the upstream form', () => {
    const t = loadIssueTemplates(PACKAGE_TEMPLATES);
    expect(t.title.nodes.length).toBeGreaterThan(0);
    const body = readFileSync(join(PACKAGE_TEMPLATES, BODY_FILE), 'utf8');
    const heads = body.split('\n').filter((l) => l.startsWith('### '));
    expect(heads).toEqual(['### Checklist', '### Describe the bug', '### Reproduction', '### Environment']);
    expect(readFileSync(join(PACKAGE_TEMPLATES, TITLE_FILE), 'utf8')).toMatch(/^\[Bug\] /);
  });

  it('fail to load when a user edit misspells a variable', () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-templates-'));
    writeFileSync(join(dir, TITLE_FILE), '[Bug] {{model}}\n');
    writeFileSync(
      join(dir, BODY_FILE),
      readFileSync(join(PACKAGE_TEMPLATES, BODY_FILE), 'utf8').replace('{{environment}}', '{{enviroment}}'),
    );
    const e = errorOf(() => loadIssueTemplates(dir));
    expect(e.problems).toHaveLength(1);
    expect(e.problems[0]).toMatchObject({
      message: "unknown variable 'enviroment'",
      fix: "did you mean 'environment'?",
    });
    expect(e.issues[0]!.path).toMatch(new RegExp(`${BODY_FILE}:\\d+:\\d+$`));
  });

  it('fail to render when a variable has no value', () => {
    const t = loadIssueTemplates(PACKAGE_TEMPLATES);
    const data: Record<string, unknown> = {};
    for (const k of Object.keys(ISSUE_VARIABLES)) data[k] = 'x';
    data.crash = { class: 'c', phase: 'p', headline: 'h', summary: 's', meaning: 'm' };
    data.checklist = { searched: ' ', latest: ' ', env_and_repro: 'x', not_question: 'x', english: 'x' };
    data.related = [];
    data.has_related = false;
    data.attempts = [];
    data.has_environment = true;
    expect(() => renderTemplate(t.body, data)).not.toThrow();
    delete data.environment;
    expect(() => renderTemplate(t.body, data)).toThrow(/issue-body\.md:\d+:\d+: variable 'environment' has no value/);
  });

  it('say where the folder is wrong when a template file is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-templates-'));
    expect(() => loadIssueTemplates(dir)).toThrow(ConfigError);
    expect(() => loadIssueTemplates(dir)).toThrow(/issue-title\.txt: cannot read the template: ENOENT/);
  });
});
