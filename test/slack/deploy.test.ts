// The deployable pieces, checked by reading them (Docker cannot run here): the Slack app manifests and the Dockerfile.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PACKAGE_ROOT } from '../../src/config/load.ts';

const read = (p: string) => readFileSync(join(PACKAGE_ROOT, p), 'utf8');

interface Manifest {
  features: { slash_commands: Array<{ command: string; url?: string; should_escape: boolean; description: string }> };
  oauth_config: { scopes: { bot: string[] } };
  settings: { socket_mode_enabled: boolean; interactivity: { is_enabled: boolean; request_url?: string } };
}

describe('Slack app manifests', () => {
  for (const [file, socket] of [
    ['slack/manifest.yaml', true],
    ['slack/manifest.http.yaml', false],
  ] as const) {
    it(`${file}: /glm, least-privilege scopes, interactivity, ${socket ? 'Socket Mode' : 'HTTP request URLs'}`, () => {
      const m = parse(read(file)) as Manifest;
      const [cmd] = m.features.slash_commands;
      expect(cmd!.command).toBe('/glm');
      expect(cmd!.command.length).toBeLessThanOrEqual(32);
      expect(cmd!.description.length).toBeLessThanOrEqual(2000);
      expect(cmd!.should_escape).toBe(true);
      expect(m.oauth_config.scopes.bot.sort()).toEqual([
        'channels:history',
        'chat:write',
        'commands',
        'files:read',
        'files:write',
        'groups:history',
        'usergroups:read',
      ]);
      expect(m.settings.interactivity.is_enabled).toBe(true);
      expect(m.settings.socket_mode_enabled).toBe(socket);
      if (!socket) {
        expect(cmd!.url).toMatch(/^https:\/\/.+\/slack\/events$/);
        expect(m.settings.interactivity.request_url).toBe(cmd!.url);
      }
    });
  }
});

describe('Dockerfile', () => {
  const df = read('Dockerfile');
  const lines = df.split('\n').filter((l) => !l.trim().startsWith('#'));

  it('is multi-stage, runs as a non-root user, keeps the ledger on a volume, checks health', () => {
    expect(lines.filter((l) => /^FROM /.test(l)).length).toBeGreaterThanOrEqual(2);
    const user = lines.findIndex((l) => /^USER node\b/.test(l));
    const cmd = lines.findIndex((l) => /^CMD /.test(l));
    expect(user).toBeGreaterThan(-1);
    expect(user).toBeLessThan(cmd);
    expect(df).toMatch(/^VOLUME \["\/data"\]/m);
    expect(df).toMatch(/XDG_DATA_HOME=\/data/);
    expect(df).toMatch(/^HEALTHCHECK [\s\S]*\/healthz/m);
    expect(df).toMatch(/^CMD \["node", "bin\/glm.js", "slack"\]/m);
    // The compiled code is built in the image by npm ci's prepare script, and only production dependencies remain.
    expect(df).toMatch(/npm ci --no-audit/);
    expect(df).toMatch(/npm prune --omit=dev/);
    expect(df).toMatch(/^COPY --from=deps \/app\/dist \.\/dist$/m);
  });

  it('copies only what exists and what the bot reads at run time', () => {
    const copies = lines
      .filter((l) => /^COPY (?!--from)/.test(l))
      .flatMap((l) =>
        l
          .replace(/^COPY /, '')
          .split(/\s+/)
          .slice(0, -1),
      );
    for (const src of copies) expect(existsSync(join(PACKAGE_ROOT, src)), src).toBe(true);
    for (const needed of ['bin', 'src', 'commands', 'profiles', 'catalog', 'templates', 'knowledge', 'package.json']) {
      expect(copies).toContain(needed);
    }
    const ignore = read('.dockerignore').split('\n');
    for (const x of ['.git', 'node_modules', 'dist', 'data', 'test', '.env']) expect(ignore).toContain(x);
  });
});
