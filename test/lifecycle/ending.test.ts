// judgeEnd (src/lifecycle/launch/ending.ts), the one rule that closes a followed attempt (outcome.ts recordExit) and
// one that ended unwatched (reconcile-direct.ts closeUnwatched): each of its branches on plain inputs, a backend's
// ending, an exit code and node 0's diagnosis, as Slurm's endings and the classifier give them.
import { describe, expect, it } from 'vitest';
import type { Ending } from '../../src/lifecycle/backend.ts';
import { judgeEnd } from '../../src/lifecycle/launch/ending.ts';
import type { Diagnosis } from '../../src/logs/diagnosis.ts';

const diag = (category: string, extra: Partial<Diagnosis> = {}): Diagnosis => ({
  category,
  phase: 'cuda_graph',
  summary: `${category} at line 40`,
  evidence: [{ line: 40, text: `the ${category} line` }],
  rank: 0,
  dedupKey: `${category}:sig`,
  confidence: 0.9,
  ...extra,
});
const oom = diag('cuda_oom');
const nccl = diag('nccl_error', { phase: 'runtime' });
/** A failure record alone (an ERROR line a serving process may answer and serve on). */
const record = diag('backend_assertion', { survivable: true, phase: 'runtime' });
const clean = diag('none', { phase: 'serving', evidence: [], summary: 'no crash', dedupKey: 'none' });

const timeLimit: Ending = {
  status: 'crashed',
  outcome: 'time_limit',
  detail: 'Slurm job 7 on gpu01: time limit reached',
  exitCode: 0,
};
const nodeFail: Ending = {
  status: 'crashed',
  outcome: 'node_fail',
  detail: 'node failure: gpu02 was taken out of service by Slurm',
  exitCode: null,
  outranksLog: true,
};
/** A worker srun says was killed, told after node 0's end: first only over node 0's lost-peer NCCL error. */
const workerLost: Ending = {
  status: 'crashed',
  outcome: 'node_lost',
  detail: 'node 1 (gpu02) failed first, with no line in its own log',
  exitCode: null,
  onlyOverLog: 'nccl_error',
};

describe('judgeEnd: a backend ending against the log', () => {
  it('the ending stands when no log was read, or the log names no crash, or only a failure record', () => {
    for (const log of [null, clean, record])
      expect(judgeEnd(log, 0, timeLimit, 'exited'), String(log?.category)).toEqual({ by: 'ending', ending: timeLimit });
  });

  it("a crash the log names wins over a plain ending (the server died before Slurm's limit mattered)", () => {
    expect(judgeEnd(oom, 0, timeLimit, 'exited')).toEqual({
      by: 'exit',
      status: 'crashed',
      outcome: 'cuda_oom',
      diagnosis: oom,
    });
  });

  it("an ending that outranks the log (a node taken out of service) stands over the log's crash, its consequence", () => {
    expect(judgeEnd(nccl, null, nodeFail, 'lost')).toEqual({ by: 'ending', ending: nodeFail });
  });

  it('an ending bound to one log crash (onlyOverLog) stands over that crash only, and then outranks it', () => {
    const { onlyOverLog: _, ...bare } = workerLost;
    expect(judgeEnd(nccl, 1, workerLost, 'exited')).toEqual({ by: 'ending', ending: { ...bare, outranksLog: true } });
    // Any other crash in node 0's log is node 0's own.
    expect(judgeEnd(oom, 1, workerLost, 'exited')).toEqual({
      by: 'exit',
      status: 'crashed',
      outcome: 'cuda_oom',
      diagnosis: oom,
    });
  });

  it('an ending bound to a log crash is no ending at all when the log names none: the exit decides', () => {
    const j = judgeEnd(null, 1, workerLost, 'exited');
    expect(j).toMatchObject({ by: 'exit', status: 'crashed', outcome: 'other' });
    expect(judgeEnd(clean, 0, workerLost, 'exited')).toEqual({
      by: 'exit',
      status: 'exited',
      outcome: 'exited',
      diagnosis: clean,
    });
  });
});

describe('judgeEnd: no ending, the exit code and the log', () => {
  it('exited non-zero with no log, or a log that names nothing: a crash of unknown cause (other), never none', () => {
    const j = judgeEnd(null, 137, undefined, 'exited');
    expect(j).toMatchObject({ by: 'exit', status: 'crashed', outcome: 'other' });
    if (j.by !== 'exit') throw new Error('by exit');
    expect(j.diagnosis).toMatchObject({
      category: 'other',
      phase: 'unknown',
      summary: 'Crash of unknown cause: exited with status 137',
    });
    // The phase the log reached is kept.
    const k = judgeEnd(clean, 1, undefined, 'exited');
    expect(k).toMatchObject({ status: 'crashed', outcome: 'other', diagnosis: { phase: 'serving' } });
  });

  it('exited 0 with no log: exited, no diagnosis; with a clean log: exited, that log', () => {
    expect(judgeEnd(null, 0, undefined, 'lost')).toEqual({
      by: 'exit',
      status: 'exited',
      outcome: 'exited',
      diagnosis: null,
    });
    expect(judgeEnd(clean, 0, undefined, 'lost')).toEqual({
      by: 'exit',
      status: 'exited',
      outcome: 'exited',
      diagnosis: clean,
    });
  });

  it('a stop signal the log shows, no crash before it: exited, stopped from outside, at 0 or a signal status; a plain failure at 1', () => {
    const stopped = {
      ...clean,
      phase: 'shutdown',
      stopped: { line: 28, text: '[2026-12-01 10:00:00] SIGTERM received. signum=None frame=None. Draining requests' },
    };
    const j = judgeEnd(stopped, 137, undefined, 'exited');
    expect(j).toMatchObject({ by: 'exit', status: 'exited', outcome: 'exited' });
    if (j.by !== 'exit') throw new Error('by exit');
    expect(j.diagnosis?.summary).toBe(
      'stopped from outside the bot: the server logged a stop signal at line 28 ([2026-12-01 10:00:00] SIGTERM received. signum=None frame=None. Draining requests), then ended with status 137',
    );
    expect(judgeEnd(stopped, 0, undefined, 'exited')).toMatchObject({ status: 'exited', outcome: 'exited' });
    expect(judgeEnd(stopped, 143, undefined, 'exited')).toMatchObject({ status: 'exited', outcome: 'exited' });
    expect(judgeEnd(stopped, 1, undefined, 'exited')).toMatchObject({ status: 'crashed', outcome: 'other' });
    // An abort (134) or a segfault (139) while it drained is a crash.
    expect(judgeEnd(stopped, 134, undefined, 'exited')).toMatchObject({ status: 'crashed', outcome: 'other' });
    expect(judgeEnd(stopped, 139, undefined, 'exited')).toMatchObject({ status: 'crashed', outcome: 'other' });
    // A backend's ending still stands first (Slurm's time limit signals the job before it kills it).
    expect(judgeEnd(stopped, 0, timeLimit, 'exited')).toEqual({ by: 'ending', ending: timeLimit });
  });

  it('no exit code and no crash: the caller says what that is (a follower saw it end: exited; reconcile: lost)', () => {
    expect(judgeEnd(null, null, undefined, 'exited')).toMatchObject({ status: 'exited', outcome: 'exited' });
    expect(judgeEnd(null, null, undefined, 'lost')).toMatchObject({ status: 'lost', outcome: 'lost' });
    expect(judgeEnd(clean, null, undefined, 'lost')).toMatchObject({ status: 'lost', diagnosis: clean });
  });

  it("a crash the log names is the attempt's crash whatever the exit code", () => {
    for (const code of [0, 1, null])
      expect(judgeEnd(oom, code, undefined, 'lost'), String(code)).toEqual({
        by: 'exit',
        status: 'crashed',
        outcome: 'cuda_oom',
        diagnosis: oom,
      });
  });

  it('a failure record alone: survived when the server exited 0 by itself, the crash when it exited non-zero or unknown', () => {
    const ok = judgeEnd(record, 0, undefined, 'exited');
    expect(ok).toMatchObject({ by: 'exit', status: 'exited', outcome: 'exited' });
    if (ok.by !== 'exit') throw new Error('by exit');
    expect(ok.diagnosis).toMatchObject({ category: 'none', evidence: record.evidence });
    expect(ok.diagnosis?.summary).toMatch(/^exited 0; a failure record it survived: /);
    expect(ok.diagnosis).not.toHaveProperty('survivable');
    for (const code of [1, null])
      expect(judgeEnd(record, code, undefined, 'lost'), String(code)).toEqual({
        by: 'exit',
        status: 'crashed',
        outcome: 'backend_assertion',
        diagnosis: record,
      });
  });
});
