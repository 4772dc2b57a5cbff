import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/config/load.ts';
import type { Attempt } from '../../src/ledger/attempts.ts';
import { archOf, hardwareWarnings, loadHardwareCatalog } from '../../src/lifecycle/hardware.ts';
import { flagView, loadProfiles } from '../../src/profiles/index.ts';

const profiles = loadProfiles(join(PACKAGE_ROOT, 'profiles'));
const catalog = loadHardwareCatalog();

describe('hardware-aware launches', () => {
  it('reads the architecture from the compute capability', () => {
    expect(archOf('12.0')).toBe('sm120');
    expect(archOf('9.0')).toBe('sm90');
    expect(archOf(undefined)).toBeUndefined();
  });

  it('warns for GLM-5 with FlashMLA decode on SM120, with the upstream evidence, and not elsewhere', () => {
    const w = hardwareWarnings(profiles.get('glm5-attempt4'), 'sm120', catalog, []);
    expect(w).toHaveLength(1);
    expect(w[0]!.text).toMatch(/nsa-decode-backend flashmla_sparse is known to crash on sm120 \(nan_in_sampling\)/);
    expect(w[0]!.evidence).toContain('https://github.com/sgl-project/sglang/issues/26087');
    expect(hardwareWarnings(profiles.get('glm5-attempt4'), 'sm100', catalog, [])).toEqual([]);
    expect(hardwareWarnings(profiles.get('glm5-tilelang-bf16'), 'sm120', catalog, [])).toEqual([]);
    expect(hardwareWarnings(profiles.get('kimi-k2-thinking-nvfp4'), 'sm120', catalog, [])).toEqual([]);
  });

  it('knows the triton + fp8 KV assertion on any architecture', () => {
    const w = hardwareWarnings(profiles.get('glm5-attempt3'), 'sm90', catalog, []);
    expect(w.map((x) => x.text).join()).toMatch(
      /attention-backend triton with kv-cache-dtype fp8_e4m3 is known to crash \(backend_assertion\)/,
    );
  });

  it('knows from the ledger that this exact configuration crashed on this host', () => {
    const p = profiles.get('small');
    const past = {
      id: 7,
      status: 'crashed',
      outcome: 'cuda_oom',
      flags: { ...flagView(p), port: '31000' },
    } as unknown as Attempt;
    const w = hardwareWarnings(p, 'sm120', catalog, [past]);
    expect(w.map((x) => x.text)).toEqual([
      'this exact configuration already crashed on this host: attempt #7 cuda_oom',
    ]);
  });
});
