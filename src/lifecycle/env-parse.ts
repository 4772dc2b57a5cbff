// Reading `python3 -m sglang.check_env` output (docs/sglang.md §5: `key: value` lines, then the
// multi-line `NVIDIA Topology:` block) into the few facts a report's title and the advice rules need. The text itself
// is what goes into the report; these facts only summarise it (their shape is the ledger's: src/ledger/environments.ts).
import type { EnvFacts } from '../ledger/environments.ts';

export type { EnvFacts, GpuGroup } from '../ledger/environments.ts';

export function archOf(computeCapability: string | undefined): string | undefined {
  const m = computeCapability?.trim().match(/^(\d+)\.(\d+)$/);
  return m ? `sm${m[1]}${m[2]}` : undefined;
}

function ids(list: string): number[] {
  return list
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n));
}

export function parseCheckEnv(text: string): EnvFacts {
  const facts: EnvFacts = { gpus: [], packages: {} };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (/^NVIDIA Topology:/.test(line)) {
      // The matrix runs to the first blank line.
      const block: string[] = [];
      const rest = line.slice('NVIDIA Topology:'.length).trim();
      if (rest) block.push(rest);
      while (i + 1 < lines.length && lines[i + 1]!.trim() !== '') block.push(lines[++i]!.replace(/\r$/, ''));
      facts.topology = block.join('\n');
      continue;
    }
    const cc = line.match(/^GPU ([\d,]+) Compute Capability: (.+)$/);
    if (cc) {
      facts.computeCapability ??= cc[2]!.trim();
      continue;
    }
    const gpu = line.match(/^GPU ([\d,]+): (.+)$/);
    if (gpu) {
      facts.gpus.push({ ids: ids(gpu[1]!), name: gpu[2]!.trim() });
      continue;
    }
    const kv = line.match(/^([A-Za-z0-9_ .-]+?):{1,2} (.*)$/);
    if (!kv) continue;
    const key = kv[1]!.trim();
    const value = kv[2]!.trim();
    if (key === 'Python') facts.python = value.split(/\s/)[0];
    else if (key === 'NVCC') facts.cuda = value.match(/release ([\d.]+)/)?.[1] ?? facts.cuda;
    else if (key === 'CUDA Driver Version' || key === 'CUDA Driver Versions') facts.driver = value;
    else if (key === 'PyTorch') {
      facts.torch = value;
      facts.cuda ??= formatCuTag(value.match(/\+cu(\d+)/)?.[1]);
    } else if (/^[a-z][a-z0-9_.-]*$/.test(key)) facts.packages[key] = value;
  }
  facts.arch = archOf(facts.computeCapability);
  return facts;
}

/** `128` -> `12.8`. */
function formatCuTag(tag: string | undefined): string | undefined {
  if (!tag || tag.length < 3) return undefined;
  return `${tag.slice(0, -1)}.${tag.slice(-1)}`;
}

/** `8x NVIDIA RTX PRO 6000 Blackwell Server Edition (SM120)`; undefined when no GPU was reported. */
export function hardwareOf(facts: EnvFacts): string | undefined {
  if (facts.gpus.length === 0) return undefined;
  const parts = facts.gpus.map((g) => `${g.ids.length}x ${g.name}`);
  const arch = facts.arch ? ` (${facts.arch.toUpperCase()})` : '';
  return `${parts.join(' + ')}${arch}`;
}
