// A wrapper no rule in normalise.ts names: what a log shipper or a launcher puts in front of every line of a process
// it streams (`kserve-container `, a Rust launcher's tracing `<time> DEBUG dynamo_run::subprocess: `). It is learnt
// from the log itself, where what follows it is known: a Python traceback's header or frame. It is then taken off
// every line that has it at the same place (only a time stamp's digits may differ; a paste's indentation in front of
// it goes with it): behind the wrappers a rule names, which stay for the reader (a rank's label, a container's
// column). Without this a frame behind it reads as a joined line (a front, then a frame), and the exception line
// behind it as no exception. (Before a log record's own prefix, a front could be learnt too; but a record's level
// decides what it states, and a record inside another's changes with the wrapper outside it: the same log would be
// read two ways.)
// A front before a traceback is learnt and left on its line: a front that is a record's own words (`Scheduler hit an
// exception: ` before `Traceback ...`) repeats on no other line, and stays that record's.

import { readPrefix } from './lineinfo.ts';
import { stampless } from './tracebacks.ts';

const HEADER = 'Traceback (most recent call last)';
/** A frame as Python prints it, indented by two (what stands before the indentation is the front). */
const FRAME = / {2}File "[^"\n]{1,400}", line \d+, in \S/;
/** Longer than any wrapper seen: a front that long is a line's own text. */
const MAX_FRONT = 200;
/** Processes that interleave their lines each have their own front (one pod's, another's). */
const MAX_FRONTS = 4;
/** A front that says something (an error, a traceback) is a record's own words, not a wrapper. */
const WORDY = /error|exception|traceback|fail|warn|"/i;

/**
 * True when `text` opens with the front `f` (stampless), or is that front alone: a joined line's piece can end where
 * the next line's front does, its separating blank gone.
 */
function opens(text: string, f: string): boolean {
  return text.length >= f.length - 1 && stampless(`${text} `.slice(0, f.length)) === f;
}

export class UnknownFronts {
  /** The fronts learnt, time stamps' digits as zeros (stampless). */
  private readonly fronts: string[] = [];

  /** The line without a front learnt before (where it has one, behind the known wrappers), else the line itself. */
  strip(line: string): string {
    if (this.fronts.length === 0) return line;
    const body = readPrefix(line).body;
    const text = body.trimStart();
    // (a front that holds a known wrapper, a time stamp behind a paste's indentation, is matched before the wrapper
    // comes off too: a joined line's piece has lost that indentation)
    const whole = line.trimStart();
    for (const f of this.fronts) {
      if (opens(text, f)) return line.slice(0, line.length - body.length) + text.slice(f.length);
      if (opens(whole, f)) return whole.slice(f.length);
    }
    return line;
  }

  /** Learns the front of a line that has one before a traceback's header or frame (behind the known wrappers). */
  learn(line: string): void {
    if (this.fronts.length >= MAX_FRONTS) return;
    // (most lines hold neither a header nor a frame: they are not unwrapped to find that out)
    const header = line.indexOf(HEADER);
    if (header <= 0 && line.indexOf('File "') <= 0) return;
    this.beforeTraceback(readPrefix(line).body);
  }

  /** Learns the front before a traceback's header or frame in the line's text, when one stands there. */
  private beforeTraceback(body: string): void {
    const header = body.indexOf(HEADER);
    const at = header >= 0 ? header : (FRAME.exec(body.slice(0, MAX_FRONT + 420))?.index ?? -1);
    if (at <= 0 || at > MAX_FRONT) return;
    // the shortest front that leaves the known wrappers and then the structure (the wrappers a rule names behind
    // it stay for the reader, which takes what they say: a rank, a record's start)
    const payload = body.slice(at);
    for (let k = 0; k <= at; ) {
      if (readPrefix(body.slice(k)).body === payload) {
        const front = body.slice(0, k).trimStart();
        if (front === '' || WORDY.test(front)) return;
        const key = stampless(front);
        if (!this.fronts.includes(key)) this.fronts.push(key);
        return;
      }
      const space = body.indexOf(' ', k);
      if (space < 0) return;
      k = space + 1;
    }
  }
}
