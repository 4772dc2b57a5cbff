// Errors carry a kind and data; one renderer words them for the face they are read on. The same refusal from the
// ledger (a real SQLite file) reads `npx glm ...` in a shell, `/glm ...` in Slack and bare words in a session.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../src/errors.ts';
import { describeError, type Face } from '../src/errors-render.ts';
import { createAttemptStore } from '../src/ledger/attempts.ts';
import { openDb } from '../src/ledger/db.ts';
import { attemptRow } from './helpers/app.ts';
import { userDir } from './helpers/sshd.ts';

const ONE_SHOT: Face = { origin: 'terminal', longLived: false };
const SESSION: Face = { origin: 'terminal', longLived: true };
const SLACK: Face = { origin: 'slack', longLived: true };

function refusal(fn: () => unknown): UserError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return e as UserError;
  }
  throw new Error('expected a UserError');
}

describe('error rendering', () => {
  it("the ledger's refusals carry kind and data, and each face words the same one its own way", () => {
    const attempts = createAttemptStore(openDb(join(userDir('glm-errors-db-'), 'ledger.db')));
    const first = attempts.open(attemptRow('0,1', 30000));
    const gpus = refusal(() => attempts.open(attemptRow('1', 30001)));
    expect(gpus.kind).toBe('gpus-held');
    expect(gpus.data).toEqual({ kind: 'gpus-held', holder: first.id });
    // The ledger says what is wrong, never how a face types a command.
    expect(gpus.message).not.toMatch(/stop|npx|\/glm/);
    const fix = (face: Face) => describeError(gpus, undefined, face).split('\n')[1];
    expect(fix(ONE_SHOT)).toBe(
      `  wait for it to end, stop it with: npx glm stop --attempt ${first.id}, or launch on other GPUs (--gpus, or gpus: [...] in the profile)`,
    );
    expect(fix(SLACK)).toBe(
      `  wait for it to end, stop it with: /glm stop --attempt ${first.id}, or launch on other GPUs (--gpus, or gpus: [...] in the profile)`,
    );
    expect(fix(SESSION)).toContain(`stop it with: stop --attempt ${first.id},`);
    const port = refusal(() => attempts.open(attemptRow('5', 30000)));
    expect(port.data).toEqual({ kind: 'port-taken', holder: first.id });
    expect(describeError(port, undefined, SLACK)).toContain(`or stop it first with: /glm stop --attempt ${first.id}`);
    expect(describeError(port, undefined, ONE_SHOT)).toContain(
      `or stop it first with: npx glm stop --attempt ${first.id}`,
    );
    // The first line, what went wrong, is the same everywhere.
    const heads = [ONE_SHOT, SESSION, SLACK].map((f) => describeError(port, undefined, f).split('\n')[0]);
    expect(new Set(heads).size).toBe(1);
    expect(heads[0]).toMatch(/^error: port 30000 on h is served by attempt #1 /);
  });

  it('a plain hint is kept as written on every face', () => {
    const e = new UserError('bad --port', 'give a number from 1 to 65535');
    expect(e.kind).toBe('bad-input');
    for (const f of [ONE_SHOT, SESSION, SLACK])
      expect(describeError(e, undefined, f)).toBe('error: bad --port\n  give a number from 1 to 65535');
  });
});
