// What the server wrote to its log while the smoke ran, read by byte offset through the host's exec (the log can be
// gigabytes; only the new bytes travel), and classified: a NaN or a kernel fault during a smoke request shows up
// here even when the HTTP side only saw a reset connection.
import type { RemoteHost } from '../hosts/types.ts';
import { crashedBeforeExit, type Diagnoser, type DiagnoserFactory, type Diagnosis } from '../logs/diagnosis.ts';
import { cleanLine } from '../logs/lines.ts';

export interface LogMark {
  bytes: number;
  lines: number;
}

/** Size of the log now, in bytes and lines (line numbers in the evidence are the log's own). */
export async function markLog(host: RemoteHost, logPath: string): Promise<LogMark> {
  const r = await host.exec(['wc', '-l', '-c', '--', logPath], { timeoutMs: 15_000 });
  const m = /^\s*(\d+)\s+(\d+)/.exec(r.stdout);
  if (r.code !== 0 || !m) return { bytes: 0, lines: 0 };
  return { lines: Number(m[1]), bytes: Number(m[2]) };
}

/** The bytes written after `mark` (at most the last `maxBytes`). */
export async function readSince(host: RemoteHost, logPath: string, mark: LogMark, maxBytes = 4 << 20): Promise<string> {
  const r = await host.exec(['tail', '-c', `+${mark.bytes + 1}`, '--', logPath], {
    timeoutMs: 30_000,
    maxOutputBytes: maxBytes,
  });
  return r.code === 0 ? r.stdout : '';
}

export interface LogVerdict {
  bytes: number;
  /**
   * The log shows the server crashing (crashedBeforeExit): a failure record alone is not that, the server smoked is
   * still running and may serve on; it is kept as `diagnosis` (a record it served on) and weighed at the exit.
   */
  crashed: boolean;
  diagnosis: Diagnosis | null;
}

/**
 * The smoke runs against a server that serves: the bytes since the mark come after its ready line, and are read as a
 * serving server's (another client's bad request during the smoke is no crash, as it is not in the whole log).
 */
export function classifyDelta(diagnoser: DiagnoserFactory, text: string, mark: LogMark): LogVerdict {
  const d: Diagnoser = diagnoser({ serving: true });
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  lines.forEach((l, i) => {
    d.push(cleanLine(l), mark.lines + i + 1);
  });
  const crashed = crashedBeforeExit(d);
  const res = d.result();
  return {
    bytes: Buffer.byteLength(text),
    crashed,
    diagnosis: crashed || res.category !== 'none' ? res : null,
  };
}
