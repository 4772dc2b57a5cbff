// Fast path for whole files (the benchmark reads 500 MB): bytes are decoded as latin1 (one char per byte, so
// string positions are byte offsets) and the byte pre-filter (bytegate.ts) runs over whole blocks. Only lines it hits,
// and lines inside a crash's attention window, are cut out, decoded as UTF-8 and handed to the engine; between
// them, the prefill/decode/runtime phase is taken from the last frequent milestone in the skipped text. A line longer
// than MAX_LINE_BYTES is never skipped: it is cut and handed over as the follower's splitter would. Memory is one
// block plus one partial line (capped).

import { cleanLine, MAX_LINE_BYTES, TRUNCATED_MARK } from '../lines.ts';
import type { ClassifierEngine } from './engine.ts';
import { type FrequentKind, lastFrequent } from './phase.ts';

const BATCHES: ReadonlySet<FrequentKind> = new Set(['prefill', 'decode', 'generated']);
/** The kinds that move the phase (a refused request does not: applyFrequent). */
const MOVERS: ReadonlySet<FrequentKind> = new Set(['prefill', 'decode', 'generated', 'access']);

/**
 * The frequent lines of a skipped stretch: its last one sets the phase, as line by line; a batch line before a last
 * line of another kind (an access log line) still says the server served past what came before it (servedPast); a
 * refused request last leaves the phase where the last line that moves it put it (a 200 before a 400).
 */
function frequentSkipped(engine: ClassifierEngine, text: string, from: number, to: number): void {
  const kind = lastFrequent(text, from, to);
  if (!kind) return;
  if (!BATCHES.has(kind)) {
    const batch = lastFrequent(text, from, to, BATCHES);
    if (batch) engine.frequent(batch);
  }
  if (kind === 'refused') {
    const moved = lastFrequent(text, from, to, MOVERS);
    if (moved && !BATCHES.has(moved)) engine.frequent(moved);
  }
  engine.frequent(kind);
}

const EMPTY = Buffer.alloc(0);
const NEWLINE = Buffer.from('\n');

export class FastScanner {
  private carry: Buffer | null = null;
  /** Bytes of an over-long line are dropped until its newline. */
  private dropping = false;
  private lineNo = 0;
  /** The last line handed to the engine, and the last line of the last block read (engine.feed's `before`). */
  private fedLine = 0;
  private tail: string | null = null;

  constructor(private readonly engine: ClassifierEngine) {}

  /** Bytes held for the partial line at the end of the last chunk: at most MAX_LINE_BYTES + 1, whatever its length. */
  get bufferedBytes(): number {
    return this.carry?.length ?? 0;
  }

  write(chunk: Buffer): void {
    let buf = chunk;
    // Finish the partial line from the previous chunk on its own, so the big rest is scanned without a copy.
    if (this.carry || this.dropping) {
      const nl = buf.indexOf(10);
      if (nl < 0) {
        if (!this.dropping) this.keep(Buffer.concat([this.carry ?? EMPTY, buf]));
        return;
      }
      const head = this.dropping ? (this.carry ?? EMPTY) : Buffer.concat([this.carry ?? EMPTY, buf.subarray(0, nl)]);
      this.carry = null;
      this.dropping = false;
      this.scanBlock(Buffer.concat([head, NEWLINE]));
      buf = buf.subarray(nl + 1);
    }
    const lastNl = buf.lastIndexOf(10);
    if (lastNl < 0) {
      if (buf.length > 0) this.keep(buf);
      return;
    }
    if (lastNl + 1 < buf.length) this.keep(buf.subarray(lastNl + 1));
    this.scanBlock(buf.subarray(0, lastNl + 1));
  }

  end(): void {
    const rest = this.carry;
    this.carry = null;
    this.dropping = false;
    if (rest && rest.length > 0) this.scanBlock(Buffer.concat([rest, NEWLINE]));
    this.engine.setLinesRead(this.lineNo);
  }

  private keep(partial: Buffer): void {
    if (partial.length > MAX_LINE_BYTES) {
      // One byte more than is read of it, so the line is still known to be over the limit when its newline comes.
      this.carry = Buffer.from(partial.subarray(0, MAX_LINE_BYTES + 1));
      this.dropping = true;
    } else {
      this.carry = Buffer.from(partial);
    }
  }

  /** `block` ends with a newline. */
  private scanBlock(block: Buffer): void {
    const text = block.toString('latin1');
    const gate = this.engine.catalog.byteGate;
    const engine = this.engine;
    let pos = 0;
    let segStart = 0;
    let lineNo = this.lineNo;
    let fed = this.fedLine;
    while (pos < text.length) {
      let start = pos;
      if (!engine.inAttention(lineNo + 1)) {
        const at = gate.find(block, text, pos);
        // The line the pre-filter hit, or the end of the block.
        let hit = text.length;
        if (at >= 0) {
          hit = text.lastIndexOf('\n', at) + 1;
          if (hit < pos) hit = pos;
        }
        const skipped = skipLines(text, pos, hit);
        lineNo += skipped.lines;
        start = skipped.stop;
        if (start === text.length) break;
      }
      frequentSkipped(engine, text, segStart, start);
      const end = text.indexOf('\n', start);
      lineNo++;
      const line = readLine(block, start, end);
      // the line before it, when it was skipped (a record's message can wrap onto this one: engine.ts, wrapsMild)
      engine.feed(line, lineNo, fed === lineNo - 1 ? undefined : this.lineBefore(block, text, start));
      fed = lineNo;
      pos = end + 1;
      segStart = pos;
    }
    frequentSkipped(engine, text, segStart, text.length);
    this.lineNo = lineNo;
    this.fedLine = fed;
    // the block's last line, for a first line of the next block that the engine reads
    const last = text.lastIndexOf('\n', text.length - 2) + 1;
    this.tail = readLine(block, last, text.length - 1);
  }

  /**
   * The line before the one at `start` (null when none was read), read as every reader reads it (readLine): the
   * engine judges its length itself, so a long line is judged alike by every path (records.ts, WRAP_MAX_LINE).
   */
  private lineBefore(block: Buffer, text: string, start: number): string | null {
    if (start === 0) return this.tail;
    const from = text.lastIndexOf('\n', start - 2) + 1;
    return readLine(block, from, start - 1);
  }
}

/** The line `block[start, end)` as the follower's splitter hands it over: cut after MAX_LINE_BYTES, cleaned. */
function readLine(block: Buffer, start: number, end: number): string {
  return end - start > MAX_LINE_BYTES
    ? cleanLine(block.toString('utf8', start, start + MAX_LINE_BYTES)) + TRUNCATED_MARK
    : cleanLine(block.toString('utf8', start, end));
}

/**
 * The lines of `text[from, to)` that can be skipped (`to` is a line start): it stops early, at `stop`, before a line
 * longer than MAX_LINE_BYTES, which must be read (cut) as every other reader reads it.
 */
function skipLines(text: string, from: number, to: number): { lines: number; stop: number } {
  let lines = 0;
  let lineStart = from;
  for (let p = text.indexOf('\n', from); p >= 0 && p < to; p = text.indexOf('\n', p + 1)) {
    if (p - lineStart > MAX_LINE_BYTES) return { lines, stop: lineStart };
    lines++;
    lineStart = p + 1;
  }
  return { lines, stop: to };
}
