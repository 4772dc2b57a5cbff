// A server started with --api-key (SGLang answers everything but /health and /metrics with 401 without it): the bot
// authenticates its own requests with the profile's key, and a refused first request is reported at once.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeBot, STANDIN, type TestBot } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

function bot(python?: (workdir: string) => string): TestBot {
  return shared.bot({
    edit: (loaded, dirs) => {
      loaded.config.timeouts.ready_s = 20;
      if (python) loaded.config.hosts.gpu!.python = python(dirs.workdir);
    },
  });
}

describe('a server with --api-key', () => {
  it("the bot's first request, probe, smoke and bench carry the profile's key", async () => {
    const b = bot();
    const r = await b.run(`launch small --set 'extra_args=[--api-key,team-key-1]' --port ${await freePort()}`);
    expect(r.text, b.said.join('\n')).toMatch(/^ready: attempt #1/);
    const p = await b.run('probe --json');
    const report = p.data as { models: unknown; serverInfo: { error?: string } };
    expect(report.models).toEqual(['Qwen/Qwen2.5-0.5B-Instruct']);
    expect(report.serverInfo.error).toBeUndefined();
    const s = await b.run('smoke');
    expect(s.exitCode, s.text).toBe(0);
    expect(s.text).not.toMatch(/401/);
    const load = await b.run('bench --concurrency 1 --requests 2 --input-len 8 --output-len 4');
    expect(load.exitCode ?? 0, load.text).toBe(0);
    // Another bot on the same ledger (the variant keeps only the secret marker): the key comes from the host.
    const other = shared.keep(makeBot(b.app.engine.loaded, { dataDir: b.dataDir, workdir: b.workdir }));
    const again = await other.run('probe --attempt 1 --json');
    expect((again.data as { models: unknown }).models).toEqual(['Qwen/Qwen2.5-0.5B-Instruct']);
  });

  it('a key the bot does not have: the 401 and its body are reported at once, the server left running', async () => {
    // The host's python starts every server with a key no profile names (as a site-wide wrapper might).
    const b = bot((workdir) => {
      const wrapper = join(workdir, 'python-with-key');
      writeFileSync(
        wrapper,
        `#!/bin/sh\nif [ "$1" = -m ]; then exec ${join(STANDIN, 'python')} "$@" --api-key site-key; fi\nexec ${join(STANDIN, 'python')} "$@"\n`,
      );
      chmodSync(wrapper, 0o755);
      return wrapper;
    });
    const r = await b.run(`launch small --port ${await freePort()}`);
    expect(r.exitCode).toBe(1);
    expect(r.text).toMatch(
      /not ready: attempt #1 \(small\) on gpu: the server is up, but its first request \(POST \/generate\) was answered 401: \{"error":"Unauthorized"\}; it is left running/,
    );
    expect(b.app.engine.attempts.get(1)).toMatchObject({ active: true });
    const p = await b.run('probe');
    expect(p.text).toMatch(/models: +\/v1\/models answered 401: \{"error":"Unauthorized"\}/);
  });
});
