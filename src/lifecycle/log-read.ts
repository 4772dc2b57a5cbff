// Reading an attempt's whole log after the fact (no follower saw it: the bot was down, or the launching process died)
// and the times its lines carry. SGLang stamps each line with the host's local time (`[2026-12-01 09:46:49]`, with
// milliseconds under SGLANG_LOG_MS): only differences between two lines of one log are used, so the host's time zone
// and clock never matter.

import type { DiagnoserFactory, Diagnosis } from '../logs/diagnosis.ts';
import { LineSplitter } from '../logs/lines.ts';
import { parseMilestone } from '../logs/milestones.ts';
import { type HostContext, hostOf } from './engine.ts';
import { READ_FROM, script } from './scripts.ts';

const STAMP = /^\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,3}))?\]/;

/** A line's time stamp as milliseconds on a naive clock (for differences only), or undefined. */
export function stampOf(line: string): number | undefined {
  const m = line.match(STAMP);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, ms] = m.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, Number.isFinite(ms) ? ms : 0);
}

/**
 * What a log says on its own: its diagnosis (whether that is a crash depends on how the server exited: showsCrash),
 * whether and when it got ready, its last line's number.
 */
export interface LogVerdict {
  diagnosis: Diagnosis | null;
  /** Milliseconds from the log's first stamped line to its ready line; null when it never got ready. */
  readyAfterMs: number | null;
  lines: number;
}

export function judgeLog(text: string, diagnoser: DiagnoserFactory | undefined): LogVerdict {
  const diag = diagnoser?.();
  let first: number | undefined;
  let readyAfterMs: number | null = null;
  let lines = 0;
  const splitter = new LineSplitter(0);
  const body = text && !text.endsWith('\n') ? `${text}\n` : text;
  for (const line of splitter.push(Buffer.from(body))) {
    lines = line.lineNo;
    diag?.push(line.text, line.lineNo);
    const t = stampOf(line.text);
    first ??= t;
    if (readyAfterMs === null && parseMilestone(line.text)?.kind === 'ready' && first !== undefined && t !== undefined)
      readyAfterMs = Math.max(0, t - first);
  }
  return { diagnosis: diag ? diag.result() : null, readyAfterMs, lines };
}

/**
 * The attempt's log as it is now on its host (its last 32 MiB: a crash is at the end), judged; from byte `from`, where
 * its current run begins in a log a requeued job appends to (requeue.ts runStartOf).
 */
export async function readAndJudge(
  engine: HostContext,
  hostName: string,
  logPath: string,
  diagnoser: DiagnoserFactory | undefined,
  from = 0,
): Promise<LogVerdict> {
  const { host } = hostOf(engine, hostName);
  const r = await host.exec(script(READ_FROM, 'glm-read', [logPath, String(from)]), { maxOutputBytes: 32 << 20 });
  return judgeLog(r.stdout, diagnoser);
}

/** The first stamped line's time (the server's start as its own log tells it), read from the head of the log. */
export async function logStart(engine: HostContext, hostName: string, logPath: string): Promise<number | undefined> {
  const { host } = hostOf(engine, hostName);
  const r = await host.exec(['sh', '-c', 'head -n 20 -- "$1"', 'glm-head', logPath]).catch(() => null);
  for (const l of r?.stdout.split('\n') ?? []) {
    const t = stampOf(l);
    if (t !== undefined) return t;
  }
  return undefined;
}
