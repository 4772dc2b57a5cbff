// The simulated GPU host (8 x RTX PRO 6000 Blackwell Server Edition, SM120, 96 GB) and the state directory through
// which running stand-in servers tell the nvidia-smi stand-in how much memory they hold.

import fs from 'node:fs';
import path from 'node:path';

export const GPU_NAME = 'NVIDIA RTX PRO 6000 Blackwell Server Edition';
export const DRIVER_VERSION = '570.172.08';
export const CUDA_VERSION = '12.8';
export const COMPUTE_CAP = '12.0';

export function gpuCount() {
  const n = Number.parseInt(process.env.STANDIN_NUM_GPUS ?? '8', 10);
  return Number.isFinite(n) && n > 0 ? n : 8;
}

/** Card memory in GB (as sold): STANDIN_GPU_MEM_GB, default 96. */
export function cardGb() {
  const g = Number.parseFloat(process.env.STANDIN_GPU_MEM_GB ?? '96');
  return Number.isFinite(g) && g > 0 ? g : 96;
}

/** memory.total as nvidia-smi shows it, MiB (97887 for the 96 GB card). */
export function totalMiB() {
  return Math.round((cardGb() * 97887) / 96);
}

/** torch.cuda total capacity in GiB (94.97 for the 96 GB card). */
export function torchTotalGb() {
  return Math.round(((cardGb() * 94.97) / 96) * 100) / 100;
}

/** nvidia-smi memory.used of an idle card, MiB. */
export const IDLE_MIB = 3;

export function stateDir() {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  return process.env.STANDIN_STATE_DIR || `/tmp/sglang-standin-${uid}`;
}

/** Is this pid alive and not a zombie? Reads /proc/PID/stat. */
export function pidAlive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X' && state !== 'x';
  } catch {
    return false;
  }
}

/**
 * Physical GPU index for a logical device id, honouring CUDA_VISIBLE_DEVICES.
 * @param {number} logical
 */
export function physicalGpu(logical) {
  const vis = process.env.CUDA_VISIBLE_DEVICES;
  if (vis === undefined || vis.trim() === '') return logical;
  const ids = vis
    .split(',')
    .map((s) => Number.parseInt(s.trim(), 10))
    .filter((n) => Number.isFinite(n));
  return ids[logical] ?? logical;
}

/**
 * The record a running server keeps in the state dir.
 * @typedef {{pid: number, startedAt: string, model: string, port: number,
 *   gpus: Array<{index: number, usedMiB: number, pid: number}>}} ServerState
 */

export class StateFile {
  constructor(pid) {
    this.pid = pid;
    this.file = path.join(stateDir(), `${pid}.json`);
  }

  /** @param {ServerState} state */
  write(state) {
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(state));
      fs.renameSync(tmp, this.file);
    } catch {
      // The state dir is a convenience for nvidia-smi; a server must not die over it.
    }
  }

  remove() {
    try {
      fs.unlinkSync(this.file);
    } catch {
      // already gone
    }
  }
}

/** All live servers' records. @returns {ServerState[]} */
export function readStates() {
  const dir = stateDir();
  let names = [];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const out = [];
  for (const n of names) {
    try {
      const s = JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8'));
      if (typeof s.pid === 'number' && pidAlive(s.pid)) out.push(s);
    } catch {
      // a half-written or foreign file
    }
  }
  return out;
}

/** Per-GPU memory used (MiB) and compute apps, summed over live servers. */
export function usage() {
  const n = gpuCount();
  const used = Array.from({ length: n }, () => IDLE_MIB);
  /** @type {Array<{gpu: number, pid: number, usedMiB: number}>} */
  const apps = [];
  for (const s of readStates()) {
    for (const g of s.gpus ?? []) {
      if (g.index < 0 || g.index >= n) continue;
      used[g.index] = Math.min(totalMiB(), used[g.index] + g.usedMiB);
      if (g.usedMiB > 0) apps.push({ gpu: g.index, pid: g.pid, usedMiB: g.usedMiB });
    }
  }
  return { used, apps };
}

/** PCIe topology of the host: pairs behind one switch (PIX), NODE within a NUMA node, SYS across. */
export function topoRelation(a, b) {
  if (a === b) return ' X ';
  if (Math.floor(a / 2) === Math.floor(b / 2)) return 'PIX';
  const half = Math.max(1, Math.floor(gpuCount() / 2));
  if (Math.floor(a / half) === Math.floor(b / half)) return 'NODE';
  return 'SYS';
}

/** `nvidia-smi topo -m` text. */
export function topoMatrix() {
  const n = gpuCount();
  const half = Math.max(1, Math.floor(n / 2));
  const head = ['', ...Array.from({ length: n }, (_, i) => `GPU${i}`), 'CPU Affinity', 'NUMA Affinity', 'GPU NUMA ID'];
  const lines = [`\t${head.slice(1).join('\t')}`];
  for (let i = 0; i < n; i++) {
    const numa = Math.floor(i / half);
    const cpus = numa === 0 ? '0-47,96-143' : '48-95,144-191';
    const cells = Array.from({ length: n }, (_, j) => topoRelation(i, j));
    lines.push(`GPU${i}\t${cells.join('\t')}\t${cpus}\t${numa}\t\tN/A`);
  }
  lines.push(
    '',
    'Legend:',
    '',
    '  X    = Self',
    '  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)',
    '  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node',
    '  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)',
    '  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)',
    '  PIX  = Connection traversing at most a single PCIe bridge',
    '  NV#  = Connection traversing a bonded set of # NVLinks',
  );
  return `${lines.join('\n')}\n`;
}
