// Part src/logs: owns log lines, milestones, the crash classifier (src/logs/classify) and the Diagnosis it yields.
// May import: errors.ts, package-root.ts.
//
// Bytes from a log become lines: ANSI escapes stripped, a `\r` progress bar reduced to its last state, lines longer
// than `maxLineBytes` cut (memory stays bounded whatever the writer does). Each line carries the byte offset just
// past its newline, so a follower can resume exactly after the last line it handled.

export interface LogLine {
  text: string;
  /** Byte offset of the first byte after this line's `\n` in the log file. */
  endOffset: number;
  /** 1-based line number counted from where splitting started (the resume point). */
  lineNo: number;
}

// CSI, OSC and two-byte escape sequences.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal escapes is the point
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/**
 * The longest line read whole, in bytes: a longer one is cut to its first MAX_LINE_BYTES bytes and marked, by every
 * reader (the follower's splitter, the file scan, whole text), so they all see the same line and no pattern runs over
 * megabytes of one line.
 */
export const MAX_LINE_BYTES = 64 * 1024;
export const TRUNCATED_MARK = ' [line truncated]';

/** A whole line (no `\n`) as the readers above see it: cleaned, and cut when longer than MAX_LINE_BYTES. */
export function readableLine(raw: string): string {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: only a line that long can be over the limit.
  if (raw.length * 3 <= MAX_LINE_BYTES || Buffer.byteLength(raw, 'utf8') <= MAX_LINE_BYTES) return cleanLine(raw);
  return cleanLine(Buffer.from(raw, 'utf8').subarray(0, MAX_LINE_BYTES).toString('utf8')) + TRUNCATED_MARK;
}

export function cleanLine(raw: string): string {
  // Most lines have neither a carriage return nor an escape: nothing to take off.
  if (raw.indexOf('\r') < 0 && raw.indexOf('\x1b') < 0) return raw;
  let s = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  const cr = s.lastIndexOf('\r');
  if (cr >= 0) {
    // tqdm rewrites its bar with \r; keep the last non-empty state.
    const parts = s.split('\r').filter((p) => p.length > 0);
    s = parts[parts.length - 1] ?? '';
  }
  return s.replace(ANSI, '');
}

export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private truncated = false;
  private offset: number;
  private lineNo = 0;

  constructor(
    startOffset = 0,
    private readonly maxLineBytes = MAX_LINE_BYTES,
    /** Lines already numbered before this splitter's first one (a reconnect keeps counting). */
    linesBefore = 0,
  ) {
    this.offset = startOffset;
    this.lineNo = linesBefore;
  }

  /** Feed a chunk; returns the complete lines it finished. */
  push(chunk: Buffer): LogLine[] {
    const out: LogLine[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      this.append(chunk.subarray(start, nl));
      this.offset += nl - start + 1;
      out.push(this.take());
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.append(chunk.subarray(start));
      this.offset += chunk.length - start;
    }
    return out;
  }

  /** Offset just past the last complete line (where a resumed follower must start). */
  get resumeOffset(): number {
    return this.offset - this.pendingBytesTotal;
  }

  private pendingBytesTotal = 0;

  /** Bytes held for the line not yet finished: at most `maxLineBytes`, however long the line grows. */
  get bufferedBytes(): number {
    return this.pendingBytes;
  }

  private append(part: Buffer): void {
    this.pendingBytesTotal += part.length;
    if (this.truncated) return;
    const room = this.maxLineBytes - this.pendingBytes;
    if (part.length > room) {
      // Keep the head of an over-long line; the tail of a progress bar would be kept by cleanLine anyway.
      this.pending.push(Buffer.from(part.subarray(0, room)));
      this.pendingBytes += room;
      this.truncated = true;
    } else {
      this.pending.push(Buffer.from(part));
      this.pendingBytes += part.length;
    }
  }

  private take(): LogLine {
    const text = cleanLine(Buffer.concat(this.pending).toString('utf8')) + (this.truncated ? TRUNCATED_MARK : '');
    this.pending = [];
    this.pendingBytes = 0;
    this.pendingBytesTotal = 0;
    this.truncated = false;
    this.lineNo += 1;
    return { text, endOffset: this.offset, lineNo: this.lineNo };
  }
}
