// Issue 12's "done when": canary secrets in every place a secret can be given (profile env by secret name and by
// token shape, extra_args as `--api-key X`, `--api-key=X` and the list form, the host's config env), commands run
// through the Slack face and the terminal on the same bot, then every output, log line, ledger table, outbox row,
// draft, variant file, recorded Slack call and the launched servers' argv and environment is searched: no hit,
// while the servers did receive the values (their environment, and the API key they enforce).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { variantsDir } from '../../src/profiles/saved.ts';
import type { CommandContext } from '../../src/runtime/define.ts';
import { startScheduler } from '../../src/schedule/scheduler.ts';
import { freshDirs, terminalContext } from '../helpers/app.ts';
import { ledgerDb } from '../helpers/ledger.ts';
import { freePort } from '../helpers/sshd.ts';
import type { FakeSlack } from './fake-slack.ts';
import { blockText, clickBody, type Face, OPS, postSigned, slashBody, waitFor } from './helpers.ts';
import { sshdWithSlack } from './sshd-with-slack.ts';

const C = {
  openai: 'canaryopenai0001zz',
  hf: `hf_${'canaryHF0002'.padEnd(34, 'x')}`,
  apiKey: 'canaryapikey0003zz',
  apiKeyEq: 'canaryapikeyeq0004zz',
  slack: 'xoxb-123456789012-canaryslack0005',
  gh: `ghp_${'canaryGH0006'.padEnd(36, 'y')}`,
  mine: 'canarymysecret0007zz',
  host: `hf_${'canaryHOST0008'.padEnd(34, 'q')}`,
  crash: `hf_${'canaryCRASH0009'.padEnd(34, 'w')}`,
};
const BOT_ENV = {
  SLACK_BOT_TOKEN: C.slack,
  SLACK_SIGNING_SECRET: 'canarysigning0010zz',
  GITHUB_TOKEN: C.gh,
};
const ALL = [...Object.values(C), ...Object.values(BOT_ENV)];

const slack = sshdWithSlack();
let fake: FakeSlack;
let face: Face;
let workdir: string;
let dataDir: string;
let term: CommandContext;
const said: string[] = [];
const outputs: string[] = [];
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  for (const [k, v] of Object.entries(BOT_ENV)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  slack.later(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  fake = slack.fake;
  ({ workdir, dataDir } = freshDirs());
  const loaded = slack.config({
    dirs: { workdir, dataDir },
    env: { HF_HUB_TOKEN: C.host },
    extra: {
      // The scheduler face: the same commands as a job would run them, reports posted to the channel.
      schedule: {
        jobs: [
          { name: 'canary-status', cron: '0 3 * * *', run: 'status', channel: OPS },
          { name: 'canary-attempts', cron: '0 4 * * *', run: 'attempts', channel: OPS },
          { name: 'canary-draft', cron: '0 5 * * *', run: 'draft-issue', channel: OPS },
        ],
      },
    },
  });
  face = await slack.face(loaded);
  term = terminalContext(face.glm, { say: (t) => said.push(t) });
});

async function slash(text: string, user = 'UADMIN'): Promise<string> {
  const { body, rid } = slashBody(fake, text, user);
  expect((await postSigned(face.port, body)).status).toBe(200);
  const r = await waitFor(
    `answer to ${text}`,
    () => fake.responses.filter((x) => x.id === rid && !/hourglass/.test(String(x.body.text))).at(-1),
    30_000,
  );
  const out = `${r.body.text}\n${blockText(r.body.blocks)}`;
  outputs.push(out);
  return out;
}

async function terminal(text: string): Promise<string> {
  const out = await face.glm.dispatch.run(text, term);
  outputs.push(out.text);
  return out.text;
}

function groupProcs(pgid: number): string[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,pgid=,stat='], { encoding: 'utf8' }).split('\n');
  return rows
    .map((r) => r.trim().split(/\s+/))
    .filter((f) => Number(f[1]) === pgid && !f[2]?.startsWith('Z'))
    .map((f) => f[0]!);
}
const procFile = (pid: string, f: string) => {
  try {
    return readFileSync(`/proc/${pid}/${f}`, 'latin1').replace(/\0/g, '\n');
  } catch {
    return '';
  }
};

function allTables(): string {
  const db = ledgerDb(face.glm.engine);
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  return tables.map((t) => `${t.name}: ${JSON.stringify(db.prepare(`SELECT * FROM "${t.name}"`).all())}`).join('\n');
}

function filesUnder(dir: string, skip: (p: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (skip(p)) continue;
    if (e.isDirectory()) out.push(...filesUnder(p, skip));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

describe('canaries', () => {
  let serverEnv = '';
  let serverArgv = '';

  it('a launch with secrets in env, extra_args and the host env: the server gets them, nobody else', async () => {
    const port = await freePort();
    const set = `env.OPENAI_API_KEY=${C.openai},env.MY_SECRET_THING=${C.mine},extra_args=[--api-key,${C.apiKey}]`;
    const out = await slash(`launch small --yes --no-check --port ${port} --set '${set}'`);
    expect(out).toMatch(/ready: attempt #1/);
    const a = face.glm.engine.attempts.get(1)!;
    for (const pid of groupProcs(a.pgid!)) {
      serverEnv += procFile(pid, 'environ');
      serverArgv += procFile(pid, 'cmdline');
    }
    expect(serverArgv).toMatch(/sglang\.launch_server/);
    expect(serverEnv).toContain(`OPENAI_API_KEY=${C.openai}`);
    expect(serverEnv).toContain(`MY_SECRET_THING=${C.mine}`);
    expect(serverEnv).toContain(`HF_HUB_TOKEN=${C.host}`);
    // The server enforces the API key it was given: its value arrived.
    const http = (auth?: string) =>
      face.glm.engine.pool
        .get('gpu')
        .http(port, { method: 'GET', path: '/v1/models', headers: auth ? { authorization: `Bearer ${auth}` } : {} });
    expect((await http()).status).toBe(401);
    expect((await http(C.apiKey)).status).toBe(200);
    // The host keeps the values, readable by its owner only.
    const sec = join(workdir, 'secrets.env');
    expect(statSync(sec).mode & 0o777).toBe(0o600);
    expect(readFileSync(sec, 'utf8')).toContain(C.openai);
  });

  it('the same variant again, by name from the ledger: the values come from the host', async () => {
    const a = face.glm.engine.attempts.get(1)!;
    await terminal('stop --attempt 1');
    const port = await freePort();
    const out = await terminal(`launch ${a.profile} --yes --no-check --port ${port}`);
    expect(out, said.join('\n')).toMatch(/ready: attempt #2/);
    const b = face.glm.engine.attempts.get(2)!;
    let env = '';
    for (const pid of groupProcs(b.pgid!)) {
      env += procFile(pid, 'environ');
      serverArgv += procFile(pid, 'cmdline');
    }
    expect(env).toContain(`OPENAI_API_KEY=${C.openai}`);
    const r = await face.glm.engine.pool
      .get('gpu')
      .http(port, { method: 'GET', path: '/v1/models', headers: { authorization: `Bearer ${C.apiKey}` } });
    expect(r.status).toBe(200);
    await terminal('stop --attempt 2');
  });

  it('--api-key=X form and a crashing launch with a token: alerts, attempts, draft', async () => {
    const port = await freePort();
    const out = await terminal(
      `launch small --yes --no-check --port ${port} --set 'extra_args=[--api-key=${C.apiKeyEq}]'`,
    );
    expect(out, said.join('\n')).toMatch(/ready: attempt #3/);
    for (const pid of groupProcs(face.glm.engine.attempts.get(3)!.pgid!)) serverArgv += procFile(pid, 'cmdline');
    await terminal('stop --attempt 3');
    const crash = await slash(`launch glm5-attempt3 --yes --port ${await freePort()} --set env.HF_TOKEN=${C.crash}`);
    expect(crash).toMatch(/crashed/);
    const id = face.glm.engine.attempts.list().at(-1)!.id;
    await waitFor('crash alert', () => fake.messages.find((m) => blockText(m.blocks).includes('crash:')), 20_000);
    await slash('attempts');
    await slash('attempts --json');
    await terminal('attempts --json');
    await slash(`draft-issue ${id}`);
    await terminal(`draft-issue ${id}`);
    await postSigned(face.port, clickBody(fake, 'glm_draft', String(id), 'UADMIN').body);
    await waitFor('draft file', () => fake.files.find((f) => f.filename === `attempt-${id}-issue-draft.md`), 20_000);
    await slash('audit --limit 100');
    await slash('profile small');
    await slash(`logs --attempt 1 --lines 200`);
    await terminal('status');
  });

  it('the scheduler face runs status, attempts and draft-issue as jobs, reports posted to the channel', async () => {
    const sched = startScheduler(face.glm);
    await sched.ready;
    const before = fake.calls.length;
    for (const job of ['canary-status', 'canary-attempts', 'canary-draft']) await sched.fire(job, Date.now());
    await sched.stop();
    await face.glm.delivery!.flush(10_000);
    expect(fake.calls.length).toBeGreaterThan(before);
    const audit = ledgerDb(face.glm.engine).prepare("SELECT command FROM audit WHERE actor = 'scheduler'").all() as {
      command: string;
    }[];
    expect(audit.map((r) => r.command)).toEqual(expect.arrayContaining(['status', 'attempts', 'draft-issue']));
  });

  it('no canary anywhere: outputs, logs, ledger, variant files, Slack calls, the servers argv', async () => {
    // Let the outbox drain first, so what was sent is in the recorded calls.
    await waitFor('outbox drained', () => (face.glm.outbox.counts().pending ?? 0) === 0, 20_000);
    const places: Record<string, string> = {
      outputs: outputs.join('\n'),
      said: said.join('\n'),
      logs: face.logLines.join(''),
      ledger: allTables(),
      variants: filesUnder(variantsDir(face.glm.engine), () => false)
        .map((f) => readFileSync(f, 'utf8'))
        .join('\n'),
      slack: JSON.stringify(fake.calls) + JSON.stringify(fake.responses) + JSON.stringify(fake.files),
      serverArgv,
      // Everything the bot left on the host but the secrets file (the one place meant to hold them) and the server's
      // own log: SGLang prints its ServerArgs, api_key included, as it starts (what the bot shows of that log is
      // redacted: `logs` is among the outputs above).
      host: filesUnder(
        workdir,
        (p) => p.endsWith('/secrets.env') || p.endsWith('/out.log') || p.includes('standin-state'),
      )
        .map((f) => readFileSync(f, 'latin1'))
        .join('\n'),
      dataDir: filesUnder(dataDir, (p) => /\.(db|sqlite)(-wal|-shm)?$/.test(p) || p.endsWith('.png'))
        .map((f) => readFileSync(f, 'latin1'))
        .join('\n'),
    };
    expect(places.outputs).toMatch(/\[secret\]|\[REDACTED\]/);
    expect(places.variants).toContain('[secret]');
    for (const [where, text] of Object.entries(places)) {
      for (const c of ALL) expect(text.includes(c), `${c} found in ${where}`).toBe(false);
    }
    // The bot's own tokens never reached a server's environment.
    for (const c of Object.values(BOT_ENV)) expect(serverEnv).not.toContain(c);
    // Every log line and every audit row is whole JSON.
    for (const l of face.logLines) expect(() => JSON.parse(l), l).not.toThrow();
    const rows = ledgerDb(face.glm.engine).prepare('SELECT args_json FROM audit').all() as { args_json: string }[];
    for (const r of rows) expect(() => JSON.parse(r.args_json)).not.toThrow();
  });
});
