// Writes lines the way SGLang's processes do (docs/sglang.md §3):
//   SGLang loggers:   `[%Y-%m-%d %H:%M:%S{ rank prefix}] message` (no level name), `.mmm` after the seconds when
//                     SGLANG_LOG_MS=1; prefix ` TP{n}` (and ` EP{n}`) for scheduler ranks when tp > 1.
//   uvicorn:          `[%Y-%m-%d %H:%M:%S] INFO:     message` (levelname + ':' padded to 9, then a space).
//   tqdm:             `\r`-rewritten bars on stderr.
// Everything goes to stderr like Python logging, except what CUDA's device printf and check_env print (stdout).

function pad(n, w = 2) {
  return String(n).padStart(w, '0');
}

export function timestamp(d = new Date()) {
  const base = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return process.env.SGLANG_LOG_MS === '1' ? `${base}.${pad(d.getMilliseconds(), 3)}` : base;
}

export function writeErr(text) {
  try {
    process.stderr.write(text);
  } catch {
    // stderr closed: nothing to tell anyone
  }
}

export function writeOut(text) {
  try {
    process.stdout.write(text);
  } catch {
    // stdout closed
  }
}

export class Logger {
  /**
   * @param {{tp: number, ep: number, rankBase?: number, localRanks?: number}} opts tp/ep are the global sizes;
   *   rankBase/localRanks select the ranks this node runs (multi-node).
   */
  constructor({ tp, ep, rankBase = 0, localRanks = tp }) {
    this.tp = tp;
    this.ep = ep;
    this.rankBase = rankBase;
    this.localRanks = localRanks;
  }

  prefix(rank) {
    if (rank === null || rank === undefined) return '';
    let p = '';
    if (this.tp > 1) p += ` TP${rank}`;
    if (this.ep > 1) p += ` EP${Math.floor(rank / Math.max(1, this.tp / this.ep))}`;
    return p;
  }

  /** One SGLang log record; `rank` null for the main/tokenizer/detokenizer processes. */
  line(msg, rank = null) {
    writeErr(`[${timestamp()}${this.prefix(rank)}] ${msg}\n`);
  }

  main(msg) {
    this.line(msg, null);
  }

  /** The same record from every scheduler rank this node runs. */
  ranks(msg) {
    for (let i = 0; i < this.localRanks; i++) {
      const r = this.rankBase + i;
      this.line(typeof msg === 'function' ? msg(r) : msg, r);
    }
  }

  /** The first scheduler rank of this node (TP0 on the head). */
  first(msg) {
    this.line(msg, this.rankBase);
  }

  uvicorn(level, msg) {
    const prefix = `${level}:`.padEnd(9, ' ');
    writeErr(`[${timestamp()}] ${prefix} ${msg}\n`);
  }

  raw(text) {
    writeErr(text);
  }
}

/** tqdm.format_interval */
export function fmtInterval(t) {
  const s = Math.floor(t);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h ? `${h}:${pad(m)}:${pad(sec)}` : `${pad(m)}:${pad(sec)}`;
}

/** tqdm's `[elapsed<remaining, rate]` block for unit 'it'. */
export function tqdmStats(n, total, elapsed) {
  const rate = elapsed > 0 && n > 0 ? n / elapsed : null;
  const inv = rate ? 1 / rate : null;
  const rateFmt =
    inv && inv > 1 ? `${inv.toFixed(2).padStart(5)}s/it` : rate ? `${rate.toFixed(2).padStart(5)}it/s` : '?it/s';
  const remaining = rate ? fmtInterval((total - n) / rate) : '?';
  return `[${fmtInterval(elapsed)}<${remaining}, ${rateFmt}]`;
}

/** SGLang's shard bar: bar_format "{desc}: {percentage:3.0f}% Completed | {n_fmt}/{total_fmt} [...]\n". */
export function shardBar(desc, n, total, elapsed) {
  const pct = String(Math.round((100 * n) / total)).padStart(3, ' ');
  return `\r${desc}: ${pct}% Completed | ${n}/${total} ${tqdmStats(n, total, elapsed)}\n`;
}

const PARTIAL = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/** tqdm's default `{l_bar}{bar}{r_bar}` with a 10-cell unicode bar (no tty, so ncols is unset). */
export function defaultBar(desc, n, total, elapsed) {
  const frac = total ? n / total : 0;
  const cells = frac * 10;
  const full = Math.floor(cells);
  let bar = '█'.repeat(full);
  if (full < 10) bar += PARTIAL[Math.floor((cells - full) * 8)];
  bar = bar.padEnd(10, ' ');
  const pct = String(Math.round(frac * 100)).padStart(3, ' ');
  return `\r${desc}: ${pct}%|${bar}| ${n}/${total} ${tqdmStats(n, total, elapsed)}`;
}
