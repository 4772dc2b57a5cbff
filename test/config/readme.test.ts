// Every YAML example in the README loads with the real config loader, as a reader would paste it: the full example
// as a config file, the Slack fragment as the same config with its sections replaced.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createApp } from '../../src/app.ts';
import { loadConfig, PACKAGE_ROOT, parseConfigText } from '../../src/config/load.ts';
import { ConfigError } from '../../src/errors.ts';

const README = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
const blocks = [...README.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
const FILE_PATHS = /\.ssh\.(key_file|known_hosts|ssh_config)$/;

function problems(text: string, files: boolean): string[] {
  try {
    parseConfigText(text, 'README', { files });
    return [];
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return e.issues.map((i) => `${i.path}: ${i.message}`);
  }
}

describe('README config examples', () => {
  it('has the full example and the Slack fragment', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    expect(blocks[0]).toMatch(/^default_host:/);
  });

  it('every block validates; only the files a reader has on their own machine may be missing', () => {
    const full = blocks[0]!;
    const base = parse(full) as Record<string, unknown>;
    const texts = blocks.map((b, i) =>
      i === 0 ? b : JSON.stringify({ ...base, ...(parse(b) as Record<string, unknown>) }),
    );
    for (const [i, text] of texts.entries()) {
      expect(problems(text, false), `README yaml block ${i + 1}`).toEqual([]);
      // With file checks on, what is reported is only about files the example names (here: ~/.ssh/glmbot_ed25519).
      const withFiles = problems(text, true);
      expect(
        withFiles.filter((p) => !FILE_PATHS.test(p.split(':')[0]!)),
        `README yaml block ${i + 1}`,
      ).toEqual([]);
    }
  });

  it('reports missing files in the same pass as schema and reference problems', () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-readme-'));
    const known = join(dir, 'known_hosts');
    writeFileSync(known, '');
    const text = [
      'hosts:',
      '  a:',
      `    ssh: { host: a.example, key_file: ${join(dir, 'missing_key')}, known_hosts: ${known} }`,
      '    pyhton: /usr/bin/python3',
      '  b: { ssh: { host: b.example, known_hosts: /nonexistent/known_hosts, key_file: /dev/null } }',
      'host_groups: { pair: { hosts: [a, c] } }',
      'findings:',
      `  - { name: gone, path: ${join(dir, 'NOPE.md')} }`,
      '  - { name: remote, host: a, path: ~/not/here/FINDINGS.md }',
      '',
    ].join('\n');
    const all = problems(text, true);
    // The schema problem and the missing files in one report.
    expect(all).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^hosts\.a\.pyhton: /),
        expect.stringMatching(/^hosts\.a\.ssh\.key_file: .*missing_key does not exist on the bot machine/),
        expect.stringMatching(/^hosts\.b\.ssh\.known_hosts: \/nonexistent\/known_hosts does not exist/),
        expect.stringMatching(/^findings\.0\.path: .*NOPE\.md does not exist on the bot machine/),
      ]),
    );
    // A source read on a host over SSH is that host's file: not looked for here.
    expect(all.filter((p) => p.startsWith('findings.1'))).toEqual([]);
    // Without it, the reference problem and the files together.
    const rest = problems(text.replace('    pyhton: /usr/bin/python3\n', ''), true);
    expect(rest).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^host_groups\.pair\.hosts\.1: names unknown host 'c'/),
        expect.stringMatching(/^hosts\.a\.ssh\.key_file: .*missing_key does not exist on the bot machine/),
        expect.stringMatching(/^hosts\.b\.ssh\.known_hosts: \/nonexistent\/known_hosts does not exist/),
        expect.stringMatching(/^findings\.0\.path: .*NOPE\.md does not exist on the bot machine/),
      ]),
    );
  });

  it("a local findings path is looked for where the findings index reads it: relative to the config file's directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'glm-findings-'));
    mkdirSync(join(dir, 'kb'));
    writeFileSync(join(dir, 'kb', 'FINDINGS.md'), '# Findings\n\n## NaN in decode\n\nFlashMLA decode NaNs on SM120.\n');
    const config = join(dir, 'config.yaml');
    const write = (path: string) =>
      writeFileSync(config, `hosts:\n  a: { local: true }\nfindings:\n  - { name: team, path: ${path} }\n`);
    write('kb/MISSING.md');
    let issues: string[] = [];
    try {
      loadConfig({ GLM_CONFIG: config, HOME: dir });
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      issues = e.issues.map((i) => `${i.path}: ${i.message}`);
    }
    expect(issues).toEqual([
      `findings.0.path: kb/MISSING.md (${join(dir, 'kb', 'MISSING.md')}) does not exist on the bot machine`,
    ]);
    // The file that is there loads, and the bot's findings index reads it from the same place (not the cwd).
    write('kb/FINDINGS.md');
    const app = createApp({
      loaded: { ...loadConfig({ GLM_CONFIG: config, HOME: dir }), dataDir: dir },
      log: pino({ level: 'silent' }),
    });
    try {
      const hits = await app.engine.findings!.search('flashmla decode nan');
      expect(hits.length).toBeGreaterThan(0);
      expect(app.engine.findings!.status()[0]?.error).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});
