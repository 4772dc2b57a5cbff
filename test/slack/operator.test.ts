// Issue 12 item 6: the operator role is not code execution on the GPU hosts. Through the Slack face (signed requests,
// the Web API on the local Slack stand-in), the GPU host a real sshd, the ledger a real SQLite file: an operator may
// set the allow-listed environment and SGLang flags; LD_PRELOAD, a code-path flag, another model, or an admin's
// saved variant with such a change are refused naming what and who may, audited as denied, with nothing written
// and nothing run. Profile files are trusted as written; the terminal and admins may set anything.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, validate } from '../../src/config/load.ts';
import { ConfigError } from '../../src/errors.ts';
import { variantsDir } from '../../src/profiles/saved.ts';
import { freshDirs } from '../helpers/app.ts';
import { ledgerDb } from '../helpers/ledger.ts';
import { freePort } from '../helpers/sshd.ts';
import type { FakeSlack } from './fake-slack.ts';
import { blockText, type Face, OPS, postSigned, recordExecs, slashBody, waitFor } from './helpers.ts';
import { sshdWithSlack } from './sshd-with-slack.ts';

const slack = sshdWithSlack();
let fake: FakeSlack;
let face: Face;
let execs: string[][];
let profilesDir: string;
let dirs: ReturnType<typeof freshDirs>;

beforeAll(async () => {
  fake = slack.fake;
  // The package's profiles plus one a team wrote into its repo with a preload of its own: trusted as written.
  profilesDir = mkdtempSync(join(tmpdir(), 'glm-profiles-'));
  cpSync(join(PACKAGE_ROOT, 'profiles'), profilesDir, { recursive: true });
  writeFileSync(
    join(profilesDir, 'small-preload.yaml'),
    'description: small with the team preload\nextends: small\nenv: { LD_PRELOAD: /opt/team/libhook.so }\n',
  );
  dirs = freshDirs();
  const loaded = slack.config({ dirs });
  face = await slack.face({ ...loaded, profilesDir });
  execs = recordExecs(face.glm.engine.pool.get('gpu'));
});

async function slash(text: string, user: string): Promise<string> {
  const { body, rid } = slashBody(fake, text, user);
  expect((await postSigned(face.port, body)).status).toBe(200);
  const r = await waitFor(`answer to ${text}`, () =>
    fake.responses.filter((x) => x.id === rid && !/hourglass/.test(String(x.body.text))).at(-1),
  );
  return `${r.body.text}\n${blockText(r.body.blocks)}`;
}

const variantFiles = () => {
  const dir = variantsDir(face.glm.engine);
  return existsSync(dir) ? readdirSync(dir) : [];
};
const lastAudit = () =>
  ledgerDb(face.glm.engine)
    .prepare('SELECT actor, command, decision, result FROM audit ORDER BY id DESC LIMIT 1')
    .get() as {
    actor: string;
    command: string;
    decision: string;
    result: string;
  };
const ranWith = (needle: string) => execs.filter((a) => a.join(' ').includes(needle));

describe('what an operator may set', () => {
  it('an operator setting LD_PRELOAD is refused naming it and who may; nothing written, nothing run; audited', async () => {
    const before = variantFiles();
    const out = await slash('launch small --yes --set env.LD_PRELOAD=/tmp/evil.so', 'UOPER');
    expect(out).toMatch(/not allowed: env\.LD_PRELOAD: only an admin may set this \(you are an operator\)/);
    expect(out).toMatch(/access\.operator_may_set/);
    expect(out).not.toMatch(/internal error/);
    expect(variantFiles()).toEqual(before);
    expect(ranWith('evil')).toEqual([]);
    expect(face.glm.engine.attempts.list()).toEqual([]);
    expect(lastAudit()).toMatchObject({ actor: 'UOPER', command: 'launch', decision: 'deny' });
    expect(lastAudit().result).toMatch(/^denied: env\.LD_PRELOAD/);
  });

  it('a code-path flag, PYTHONPATH and another model are refused too, all named at once', async () => {
    const out = await slash(
      "launch small --set 'env.PYTHONPATH=/tmp/x,extra_args=[--custom-weight-loader,evil.load],model_path=attacker/model'",
      'UOPER',
    );
    expect(out).toMatch(/not allowed: env\.PYTHONPATH, extra_args --custom-weight-loader, model_path: only an admin/);
    expect(ranWith('evil')).toEqual([]);
    expect(lastAudit().decision).toBe('deny');
    // A flag that only abbreviates an allowed one is not the allowed one (argparse could read it as another).
    expect(await slash("launch small --dry-run --set 'extra_args=[--enable-custom-logit-processor]'", 'UOPER')).toMatch(
      /not allowed: extra_args --enable-custom-logit-processor/,
    );
  });

  it("SGLang's and NCCL's own settings are an operator's: launched, and the server gets them", async () => {
    const port = await freePort();
    const out = await slash(
      `launch small --yes --no-check --port ${port} --set 'env.NCCL_DEBUG=INFO,env.SGLANG_LOG_LEVEL=debug,extra_args=[--max-total-tokens=8192]'`,
      'UOPER',
    );
    expect(out).toMatch(/ready: attempt #\d+/);
    const a = face.glm.engine.attempts.list().at(-1)!;
    expect(a.actor).toBe('UOPER');
    expect(JSON.parse(a.profileJson)).toMatchObject({
      env: { NCCL_DEBUG: 'INFO', SGLANG_LOG_LEVEL: 'debug' },
      extra_args: ['--max-total-tokens=8192'],
    });
    expect(await slash(`stop --attempt ${a.id}`, 'UOPER')).toMatch(/stopped/);
  });

  it('an admin may set anything; the variant it saved is still refused to an operator by name', async () => {
    const admin = await slash('launch small --dry-run --set env.LD_PRELOAD=/opt/x/libprof.so', 'UADMIN');
    expect(admin).toMatch(/dry run: would run on gpu/);
    const name = variantFiles().find((f) => f.includes('ld-preload'));
    expect(name).toBeDefined();
    const out = await slash(`launch ${name!.replace(/\.yaml$/, '')} --dry-run`, 'UOPER');
    expect(out).toMatch(/not allowed: env\.LD_PRELOAD: only an admin may set this/);
    expect(out).toMatch(/beyond what the profile file small sets/);
  });

  it("a profile file is trusted as written: an operator launches the team's preload profile", async () => {
    const out = await slash('launch small-preload --dry-run', 'UOPER');
    expect(out).toMatch(/dry run: would run on gpu/);
    expect(out).toMatch(/LD_PRELOAD/);
    // ...but may not change its preload.
    expect(await slash('launch small-preload --dry-run --set env.LD_PRELOAD=/tmp/evil.so', 'UOPER')).toMatch(
      /not allowed: env\.LD_PRELOAD/,
    );
  });

  it('the terminal is the local user, trusted: --set env.LD_PRELOAD is accepted there', async () => {
    const b = slack.bot();
    const r = await b.run('launch small --dry-run --set env.LD_PRELOAD=/opt/x/libprof.so');
    expect(r.exitCode).toBe(0);
    expect(r.text).toMatch(/LD_PRELOAD=\/opt\/x\/libprof\.so/);
  });
});

describe('the allow-list is configuration', () => {
  const base = { hosts: { gpu: { local: true } }, access: { channels: [OPS] } };

  it('the default lets no loader variable or code-path flag through, and a list that would is refused', () => {
    const cfg = validate(base, 'test');
    expect(cfg.access!.operator_may_set.env).toContain('NCCL_*');
    let err: unknown;
    try {
      validate({ ...base, access: { channels: [OPS], operator_may_set: { env: ['*'], extra_args: ['--*'] } } }, 't');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues;
    expect(issues.map((i) => i.path)).toEqual(['access.operator_may_set.env', 'access.operator_may_set.extra_args']);
    expect(issues[0]!.message).toMatch(/lets an operator set LD_PRELOAD, LD_LIBRARY_PATH/);
    expect(issues[1]!.message).toMatch(/--trust-remote-code/);
  });

  it("a team's own list decides: a variable added is an operator's", () => {
    const cfg = validate(
      { ...base, access: { channels: [OPS], operator_may_set: { env: ['MY_TUNING_*'], extra_args: [] } } },
      'test',
    );
    expect(cfg.access!.operator_may_set).toEqual({ env: ['MY_TUNING_*'], extra_args: [] });
    // The README's words and the schema file agree with the code's default.
    const schema = readFileSync(join(PACKAGE_ROOT, 'schema', 'config.schema.json'), 'utf8');
    expect(schema).toMatch(/operator_may_set/);
  });
});
