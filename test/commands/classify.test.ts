// `glm classify` as a person runs it: the class, why it was decided, and the known upstream reports that look like
// it; --json carries the same; a file that cannot be read is bad input (exit 2).
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE = join(ROOT, 'test/fixtures/logs/shared_memory_glm45_air_decode.log');

function glm(args: string[]) {
  const home = mkdtempSync(join(tmpdir(), 'glm-classify-'));
  const env = { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
  return spawnSync(process.execPath, [join(ROOT, 'bin/glm.js'), ...args], { cwd: ROOT, env, encoding: 'utf8' });
}

describe('glm classify', () => {
  it('names the crash, says why, and shows similar known upstream reports', () => {
    const r = glm(['classify', FIXTURE]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('category: shared_memory_exceeded');
    expect(r.stdout).toMatch(/^why: signature triton-out-of-shared-memory matched line 26 \(confidence [0-9.]+\)$/m);
    const known = r.stdout.split('\n').filter((l) => l.startsWith('looks like '));
    expect(known.length).toBeGreaterThan(0);
    expect(known.length).toBeLessThanOrEqual(3);
    for (const l of known)
      expect(l).toMatch(/^looks like [\w.-]+\/[\w.-]+#\d+: .+ \((open|closed|merged)\) https:\/\/github\.com\//);
  });

  it('--json carries the classification, the reason and the known reports', () => {
    const r = glm(['classify', FIXTURE, '--json']);
    expect(r.status).toBe(0);
    const data = JSON.parse(r.stdout) as { category: string; reason: string; known: Array<{ url: string }> };
    expect(data.category).toBe('shared_memory_exceeded');
    expect(data.reason).toContain('triton-out-of-shared-memory');
    expect(data.known.length).toBeGreaterThan(0);
  });

  it('a file that cannot be read is bad input: exit 2 with the fix', () => {
    const r = glm(['classify', '/nonexistent/server.log']);
    expect(r.status).toBe(2);
    expect(`${r.stdout}${r.stderr}`).toContain('cannot read /nonexistent/server.log');
  });
});
