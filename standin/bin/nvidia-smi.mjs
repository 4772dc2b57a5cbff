// nvidia-smi for the simulated host: memory used comes from the running stand-in servers' records in the state
// dir (../gpu.mjs). Supports:
//   nvidia-smi                                       the usual table
//   nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits] [-i IDS]
//   nvidia-smi --query-compute-apps=FIELDS --format=csv[,noheader][,nounits]
//   nvidia-smi topo -m | -L | --version

import { COMPUTE_CAP, CUDA_VERSION, DRIVER_VERSION, GPU_NAME, gpuCount, topoMatrix, totalMiB, usage } from '../gpu.mjs';

const out = (s) => process.stdout.write(s);

function uuid(i) {
  const h = (n) => ((0x9e3779b1 * (i + 1) * (n + 7)) >>> 0).toString(16).padStart(8, '0');
  return `GPU-${h(1)}-${h(2).slice(0, 4)}-${h(3).slice(0, 4)}-${h(4).slice(0, 4)}-${h(5)}${h(6).slice(0, 4)}`;
}

const BUS = ['18', '2A', '3A', '5D', '9A', 'AB', 'BA', 'DB'];
const busId = (i) => `00000000:${BUS[i % BUS.length]}:00.0`;

function gpuRow(i, used) {
  const total = totalMiB();
  const busy = used > 100;
  const util = busy ? 0 : 0;
  const temp = busy ? 41 : 33;
  const power = busy ? 88 : 34;
  return {
    index: String(i),
    name: GPU_NAME,
    uuid: uuid(i),
    'pci.bus_id': busId(i),
    driver_version: DRIVER_VERSION,
    'memory.total': { v: total, u: 'MiB' },
    'memory.used': { v: used, u: 'MiB' },
    'memory.free': { v: Math.max(0, total - used - 437), u: 'MiB' },
    'memory.reserved': { v: 437, u: 'MiB' },
    compute_cap: COMPUTE_CAP,
    'utilization.gpu': { v: util, u: '%' },
    'utilization.memory': { v: 0, u: '%' },
    'temperature.gpu': String(temp),
    'power.draw': { v: `${power}.12`, u: 'W' },
    'power.limit': { v: '600.00', u: 'W' },
    pstate: busy ? 'P1' : 'P8',
    persistence_mode: 'Enabled',
    count: String(gpuCount()),
    'clocks.sm': { v: busy ? 1980 : 180, u: 'MHz' },
  };
}

const UNIT_HEADER = { MiB: ' [MiB]', '%': ' [%]', W: ' [W]', MHz: ' [MHz]' };

function csvValue(v, nounits) {
  if (typeof v === 'object' && v !== null) return nounits ? String(v.v) : `${v.v} ${v.u}`;
  return v;
}

function parseFormat(args) {
  const f = args.find((a) => a.startsWith('--format='));
  const parts = f ? f.slice('--format='.length).split(',') : [];
  return {
    csv: parts.includes('csv'),
    noheader: parts.includes('noheader'),
    nounits: parts.includes('nounits'),
    given: !!f,
  };
}

function idsFilter(args) {
  const k = args.findIndex((a) => a === '-i' || a === '--id' || a.startsWith('--id=') || a.startsWith('-i='));
  if (k < 0) return null;
  const raw = args[k].includes('=') ? args[k].split('=')[1] : args[k + 1];
  return new Set((raw ?? '').split(',').map((s) => Number.parseInt(s, 10)));
}

function queryGpu(fieldsRaw, args) {
  const fmt = parseFormat(args);
  if (!fmt.csv) {
    out('"--format=" switch is missing. Please try again.\n');
    return 2;
  }
  const fields = fieldsRaw.split(',').map((s) => s.trim());
  const { used } = usage();
  const sample = gpuRow(0, 0);
  for (const f of fields) {
    if (!(f in sample)) {
      out(`Field "${f}" is not a valid field to query.\n\n`);
      return 2;
    }
  }
  const ids = idsFilter(args);
  if (!fmt.noheader) {
    out(
      `${fields.map((f) => (typeof sample[f] === 'object' && !fmt.nounits ? `${f}${UNIT_HEADER[sample[f].u] ?? ''}` : f)).join(', ')}\n`,
    );
  }
  for (let i = 0; i < gpuCount(); i++) {
    if (ids && !ids.has(i)) continue;
    const row = gpuRow(i, used[i]);
    out(`${fields.map((f) => csvValue(row[f], fmt.nounits)).join(', ')}\n`);
  }
  return 0;
}

function queryApps(fieldsRaw, args) {
  const fmt = parseFormat(args);
  if (!fmt.csv) {
    out('"--format=" switch is missing. Please try again.\n');
    return 2;
  }
  const fields = fieldsRaw.split(',').map((s) => s.trim());
  const known = ['pid', 'used_memory', 'process_name', 'name', 'gpu_uuid', 'gpu_bus_id', 'gpu_name'];
  for (const f of fields) {
    if (!known.includes(f)) {
      out(`Field "${f}" is not a valid field to query.\n\n`);
      return 2;
    }
  }
  if (!fmt.noheader)
    out(
      `${fields.map((f) => (f === 'used_memory' && !fmt.nounits ? 'used_gpu_memory [MiB]' : f === 'used_memory' ? 'used_gpu_memory' : f)).join(', ')}\n`,
    );
  for (const a of usage().apps) {
    const vals = fields.map((f) => {
      if (f === 'pid') return String(a.pid);
      if (f === 'used_memory') return fmt.nounits ? String(a.usedMiB) : `${a.usedMiB} MiB`;
      if (f === 'process_name' || f === 'name') return 'python3';
      if (f === 'gpu_uuid') return uuid(a.gpu);
      if (f === 'gpu_bus_id') return busId(a.gpu);
      return GPU_NAME;
    });
    out(`${vals.join(', ')}\n`);
  }
  return 0;
}

function table() {
  const { used, apps } = usage();
  const d = new Date();
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p2 = (n) => String(n).padStart(2, '0');
  const lines = [];
  lines.push(
    `${days[d.getDay()]} ${months[d.getMonth()]} ${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${d.getFullYear()}       `,
  );
  const W = 89;
  const bar = `+${'-'.repeat(W)}+`;
  const row = (s) => `|${s.padEnd(W)}|`;
  lines.push(bar);
  lines.push(
    row(
      ` NVIDIA-SMI ${DRIVER_VERSION}             Driver Version: ${DRIVER_VERSION}     CUDA Version: ${CUDA_VERSION}     `,
    ),
  );
  const sep = `|${'-'.repeat(41)}+${'-'.repeat(24)}+${'-'.repeat(22)}+`;
  lines.push(sep);
  const cell3 = (a, b, c) => `|${a.padEnd(41)}|${b.padStart(24)}|${c.padStart(22)}|`;
  lines.push(cell3(' GPU  Name                 Persistence-M', 'Bus-Id          Disp.A ', 'Volatile Uncorr. ECC '));
  lines.push(cell3(' Fan  Temp   Perf          Pwr:Usage/Cap', 'Memory-Usage ', 'GPU-Util  Compute M. '));
  lines.push(cell3('', '', 'MIG M. '));
  lines.push(`|${'='.repeat(41)}+${'='.repeat(24)}+${'='.repeat(22)}|`);
  const total = totalMiB();
  for (let i = 0; i < gpuCount(); i++) {
    const u = used[i];
    const busy = u > 100;
    const name = 'NVIDIA RTX PRO 6000 Blac...';
    lines.push(cell3(`${String(i).padStart(4)}  ${name.padEnd(27)} On  `, `${busId(i)} Off `, 'Off '));
    lines.push(
      cell3(
        ` N/A   ${busy ? 41 : 33}C    ${busy ? 'P1' : 'P8'}   ${`${busy ? 88 : 34}W`.padStart(16)} /  600W `,
        `${`${u}MiB`.padStart(9)} / ${`${total}MiB`.padStart(9)} `,
        `${'0%'.padStart(8)}      Default `,
      ),
    );
    lines.push(cell3('', '', 'N/A '));
    lines.push(i === gpuCount() - 1 ? `+${'-'.repeat(41)}+${'-'.repeat(24)}+${'-'.repeat(22)}+` : sep);
  }
  lines.push('');
  lines.push(bar);
  lines.push(row(' Processes:'));
  lines.push(row('  GPU   GI   CI              PID   Type   Process name                        GPU Memory '));
  lines.push(row('        ID   ID                                                               Usage      '));
  lines.push(`|${'='.repeat(W)}|`);
  if (apps.length === 0) lines.push(row('  No running processes found'));
  for (const a of apps) {
    lines.push(
      row(
        `  ${String(a.gpu).padStart(3)}   N/A  N/A  ${String(a.pid).padStart(15)}      C   ${'python3'.padEnd(36)}${`${a.usedMiB}MiB`.padStart(11)} `,
      ),
    );
  }
  lines.push(bar);
  out(`${lines.join('\n')}\n`);
  return 0;
}

function main(args) {
  if (args[0] === 'topo') {
    if (args.includes('-m') || args.includes('--matrix')) {
      out(topoMatrix());
      return 0;
    }
    out("Invalid combination of input arguments. Please run 'nvidia-smi topo -h' for help.\n");
    return 2;
  }
  if (args.includes('-L') || args.includes('--list-gpus')) {
    for (let i = 0; i < gpuCount(); i++) out(`GPU ${i}: ${GPU_NAME} (UUID: ${uuid(i)})\n`);
    return 0;
  }
  if (args.includes('--version')) {
    out(
      `NVIDIA-SMI version  : ${DRIVER_VERSION}\nNVML version        : 570.172\nDRIVER version      : ${DRIVER_VERSION}\nCUDA Version        : ${CUDA_VERSION}\n`,
    );
    return 0;
  }
  const qg = args.find((a) => a.startsWith('--query-gpu='));
  if (qg) return queryGpu(qg.slice('--query-gpu='.length), args);
  const qa = args.find((a) => a.startsWith('--query-compute-apps='));
  if (qa) return queryApps(qa.slice('--query-compute-apps='.length), args);
  if (args.length === 0) return table();
  out(`Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n`);
  return 2;
}

process.exitCode = main(process.argv.slice(2));
