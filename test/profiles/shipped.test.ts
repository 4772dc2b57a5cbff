import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  commandLine,
  dialectForVersion,
  diffProfiles,
  flagView,
  loadProfiles,
  renderLaunch,
} from '../../src/profiles/index.ts';

const DIR = fileURLToPath(new URL('../../profiles', import.meta.url));
const set = loadProfiles(DIR);

const GLM5_ARGV = [
  'python3',
  '-m',
  'sglang.launch_server',
  '--model-path',
  'lukealonso/GLM-5-NVFP4',
  '--tp-size',
  '8',
  '--host',
  '127.0.0.1',
  '--port',
  '30000',
  '--trust-remote-code',
  '--quantization',
  'modelopt_fp4',
  '--kv-cache-dtype',
  'fp8_e4m3',
  '--attention-backend',
  'flashinfer',
  '--cuda-graph-max-bs',
  '256',
  '--tool-call-parser',
  'glm47',
  '--reasoning-parser',
  'glm45',
];

describe('shipped profiles', () => {
  it('has every profile the team needs', () => {
    expect(set.names()).toEqual([
      'glm5-attempt1',
      'glm5-attempt2',
      'glm5-attempt3',
      'glm5-attempt4',
      'glm5-attempt5',
      'glm5-attempt6',
      'glm5-attempt7',
      'glm5-nvfp4',
      'glm5-tilelang-bf16',
      'kimi-k2-thinking-nvfp4',
      'small',
    ]);
  });

  it.each(set.names())('%s loads and renders in both dialects', (name) => {
    const p = set.get(name);
    expect(p.name).toBe(name);
    expect(p.description).toBeTruthy();
    expect(p.file).toBe(`${DIR}/${name}.yaml`);
    for (const dialect of ['nsa', 'dsa'] as const) {
      const r = renderLaunch(p, { python: '/opt/venv/bin/python', dialect });
      expect(r.argv.slice(0, 5)).toEqual([
        '/opt/venv/bin/python',
        '-m',
        'sglang.launch_server',
        '--model-path',
        p.model_path,
      ]);
      expect(commandLine(r)).toContain('sglang.launch_server');
    }
  });

  it('renders glm5-nvfp4 exactly', () => {
    const r = renderLaunch(set.get('glm5-nvfp4'), { python: 'python3' });
    expect(r.argv).toEqual(GLM5_ARGV);
    expect(r.env).toEqual({ NCCL_IB_DISABLE: '1', NCCL_P2P_LEVEL: 'PHB' });
    expect(commandLine(r)).toBe(`NCCL_IB_DISABLE=1 NCCL_P2P_LEVEL=PHB ${GLM5_ARGV.join(' ')}`);
  });

  it('renders attempt 3 exactly: the parent with triton attention', () => {
    const p = set.get('glm5-attempt3');
    expect(p.chain).toEqual(['glm5-attempt3', 'glm5-nvfp4']);
    const argv = [...GLM5_ARGV];
    argv[argv.indexOf('flashinfer')] = 'triton';
    expect(renderLaunch(p, { python: 'python3' }).argv).toEqual(argv);
  });

  it('renders the seven attempts as the Configurations Tried table', () => {
    const row = (n: number) => flagView(set.get(`glm5-attempt${n}`));
    const cols = (n: number) => {
      const v = row(n);
      return [
        v['attention-backend'],
        v['nsa-decode-backend'],
        v['fp8-gemm-backend'],
        v['kv-cache-dtype'],
        v['cuda-graph'],
      ];
    };
    expect(cols(1)).toEqual(['flashinfer', 'auto', 'auto', 'fp8_e4m3', 'on']);
    expect(row(1)['cuda-graph-max-bs']).toBe('512');
    expect(cols(2)).toEqual(['flashinfer', 'auto', 'auto', 'fp8_e4m3', 'on']);
    expect(cols(3)).toEqual(['triton', 'auto', 'auto', 'fp8_e4m3', 'on']);
    expect(cols(4)).toEqual(['flashinfer', 'flashmla_sparse', 'auto', 'fp8_e4m3', 'on']);
    expect(cols(5)).toEqual(['flashinfer', 'flashmla_sparse', 'cutlass', 'fp8_e4m3', 'on']);
    expect(cols(6)).toEqual(['flashinfer', 'flashmla_sparse', 'cutlass', 'auto', 'off']);
    expect(cols(7)).toEqual(['flashinfer', 'trtllm', 'cutlass', 'auto', 'off']);
    expect(row(7)['nsa-prefill-backend']).toBe('trtllm');
  });

  it('diffs attempt 4 against 5 as exactly the FP8 GEMM backend', () => {
    expect(diffProfiles(set.get('glm5-attempt4'), set.get('glm5-attempt5'))).toEqual([
      { field: 'fp8_gemm_backend', flag: '--fp8-gemm-backend', a: 'auto', b: 'cutlass' },
    ]);
  });

  it('glm5-nvfp4 is the attempt 2 configuration', () => {
    expect(diffProfiles(set.get('glm5-nvfp4'), set.get('glm5-attempt2'))).toEqual([]);
  });

  it('diffs env and cuda graph with their own names', () => {
    const d = diffProfiles(set.get('glm5-attempt5'), set.get('glm5-tilelang-bf16'));
    expect(d.map((x) => x.field)).toEqual([
      'kv_cache_dtype',
      'attention_backend',
      'nsa_prefill_backend',
      'nsa_decode_backend',
      'fp8_gemm_backend',
      'env.SGLANG_OPT_DEEPGEMM_HC_PRENORM',
    ]);
    expect(d.at(-1)).toEqual({
      field: 'env.SGLANG_OPT_DEEPGEMM_HC_PRENORM',
      flag: 'SGLANG_OPT_DEEPGEMM_HC_PRENORM',
      a: undefined,
      b: '0',
    });
    expect(diffProfiles(set.get('glm5-attempt5'), set.get('glm5-attempt6'))).toEqual([
      { field: 'kv_cache_dtype', flag: '--kv-cache-dtype', a: 'fp8_e4m3', b: 'auto' },
      { field: 'cuda_graph', flag: '--disable-cuda-graph', a: 'on', b: 'off' },
    ]);
  });

  it('shows SGLang defaults in flagView', () => {
    const v = flagView(set.get('small'));
    expect(v).toMatchObject({
      'model-path': 'Qwen/Qwen2.5-0.5B-Instruct',
      'tp-size': '1',
      port: '30000',
      host: '127.0.0.1',
      'kv-cache-dtype': 'auto',
      'attention-backend': 'auto',
      'cuda-graph': 'on',
      'trust-remote-code': 'off',
    });
    expect(v).not.toHaveProperty('tool-call-parser');
    expect(v).not.toHaveProperty('extra-args');
  });

  it('renders the Kimi configuration that worked: no CUDA graph, modelopt_fp4, no FP8 GEMM override', () => {
    const { argv } = renderLaunch(set.get('kimi-k2-thinking-nvfp4'), { python: 'python' });
    expect(argv).toContain('--disable-cuda-graph');
    expect(argv.join(' ')).toContain('--quantization modelopt_fp4');
    expect(argv).not.toContain('--fp8-gemm-backend');
    expect(argv.join(' ')).toContain('--tool-call-parser kimi_k2 --reasoning-parser kimi_k2');
  });
});

describe('NSA/DSA dialect', () => {
  const tilelang = set.get('glm5-tilelang-bf16');

  it('renders --nsa-* names by default and --dsa-* for the dsa dialect', () => {
    const nsa = renderLaunch(tilelang, { python: 'python' }).argv.join(' ');
    expect(nsa).toContain('--attention-backend nsa --nsa-prefill-backend tilelang --nsa-decode-backend tilelang');
    expect(nsa).not.toContain('--dsa-');
    const dsa = renderLaunch(tilelang, { python: 'python', dialect: 'dsa' }).argv.join(' ');
    expect(dsa).toContain('--attention-backend dsa --dsa-prefill-backend tilelang --dsa-decode-backend tilelang');
    expect(dsa).not.toContain('--nsa-');
  });

  it('keeps flags without a rename the same in both dialects', () => {
    const p = set.get('glm5-attempt6');
    const nsa = renderLaunch(p, { python: 'python' }).argv;
    const dsa = renderLaunch(p, { python: 'python', dialect: 'dsa' }).argv;
    expect(dsa).toEqual(nsa.map((a) => a.replace(/^--nsa-/, '--dsa-')));
  });

  it('picks the dialect from the SGLang version', () => {
    expect(dialectForVersion(undefined)).toBe('nsa');
    expect(dialectForVersion('garbage')).toBe('nsa');
    expect(dialectForVersion('0.5.8')).toBe('nsa');
    expect(dialectForVersion('0.5.12')).toBe('nsa');
    expect(dialectForVersion('0.5.12.post1')).toBe('nsa');
    expect(dialectForVersion('0.5.13rc0')).toBe('nsa');
    expect(dialectForVersion('0.5.13')).toBe('dsa');
    expect(dialectForVersion('v0.5.13.post2')).toBe('dsa');
    expect(dialectForVersion('0.5.23')).toBe('dsa');
    expect(dialectForVersion('0.6')).toBe('dsa');
    expect(dialectForVersion('1.0.0')).toBe('dsa');
  });

  it('overrides the port and refuses a bad one', () => {
    const r = renderLaunch(set.get('small'), { python: 'python', portOverride: 30123 });
    expect(r.argv.slice(r.argv.indexOf('--port'), r.argv.indexOf('--port') + 2)).toEqual(['--port', '30123']);
    expect(() => renderLaunch(set.get('small'), { python: 'python', portOverride: 70000 })).toThrow(/invalid port/);
  });

  it('puts CUDA_VISIBLE_DEVICES from gpus first in env', () => {
    const p = { ...set.get('glm5-nvfp4'), gpus: [0, 1, 2, 3, 4, 5, 6, 7] };
    const r = renderLaunch(p, { python: 'python' });
    expect(Object.keys(r.env)).toEqual(['CUDA_VISIBLE_DEVICES', 'NCCL_IB_DISABLE', 'NCCL_P2P_LEVEL']);
    expect(r.env.CUDA_VISIBLE_DEVICES).toBe('0,1,2,3,4,5,6,7');
    expect(commandLine(r).startsWith('CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 NCCL_IB_DISABLE=1 ')).toBe(true);
  });
});
