// Checks zod cannot express: the extra_args grammar, one name per setting, and SGLang's own cross-field asserts
// (docs/sglang.md §1 and §8). Only server_args-time asserts are enforced here: a combination that fails
// later, inside a kernel (triton attention with an fp8 DSA KV cache, attempt 3), must stay launchable so the team
// can reproduce it.
import type { Issue } from '../errors.ts';
import { FLAGS, type FlagField, type LaunchFields, typedFlagNames } from './fields.ts';
import { at } from './issues.ts';
import type { RawProfile } from './schema.ts';

/** GLM-5 (GlmMoeDsaForCausalLM) and DeepSeek-V3.2 use DeepSeek Sparse Attention; SGLang treats them specially. */
export function isDsaModel(modelPath: string | undefined): boolean {
  return modelPath !== undefined && /GLM-5|glm-5|DeepSeek-V3\.2/i.test(modelPath);
}

// server_args.py (DSA block) [F]: "DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype"; `auto` is
// turned into one of those two by SGLang itself.
const DSA_KV = ['auto', 'bf16', 'bfloat16', 'fp8_e4m3'];
// server_args.py:2126-2160 [F]: FlashInfer Cutlass MoE takes only these (or no quantization, i.e. bf16).
const CUTLASS_MOE_QUANT = ['modelopt_fp4', 'modelopt_fp8'];

const TYPED = typedFlagNames();
const NUMBER = /^-?\d+(\.\d+)?$/;

function fieldHint(field: FlagField): string {
  if (field === 'cuda_graph') return "set 'cuda_graph: false' instead";
  const spec = FLAGS.find((f) => f.field === field);
  return spec?.kind === 'switch' ? `set '${field}: true' instead` : `set the '${field}' field instead`;
}

/** The typed field a flag would set, counting argparse's prefix abbreviations (`--tp` means `--tp-size`). */
function typedFieldOf(name: string): { field: FlagField; via?: string } | undefined {
  const exact = TYPED.get(name);
  if (exact) return { field: exact };
  for (const [full, field] of TYPED) if (full.startsWith(name)) return { field, via: full };
  return undefined;
}

/** The multi-node flags: the bot renders them per node (the head's address, a free port, each node's rank). */
const NODE_FLAGS = ['--nnodes', '--node-rank', '--dist-init-addr', '--nccl-init-addr'];

export function checkExtraArgs(label: string, args: readonly string[]): Issue[] {
  const issues: Issue[] = [];
  let valueMayFollow = false;
  args.forEach((arg, i) => {
    const path = at(label, ['extra_args', i]);
    if (arg === '--') {
      issues.push({ path, message: "a bare '--' would end SGLang's option parsing", fix: 'remove it' });
      valueMayFollow = false;
      return;
    }
    if (arg.startsWith('--')) {
      const name = arg.split('=', 1)[0]!;
      valueMayFollow = !arg.includes('=');
      if (!/^--[A-Za-z0-9][A-Za-z0-9_-]*$/.test(name)) {
        issues.push({
          path,
          message: `'${arg}' is not a --flag`,
          fix: 'write --flag, --flag=value, or a value after a flag',
        });
        return;
      }
      if (NODE_FLAGS.includes(name)) {
        issues.push({
          path,
          message: `${name} is set by the bot for each node of a multi-node launch`,
          fix: 'remove it and launch on a host group (launch PROFILE --host GROUP, or --host head,worker)',
        });
        return;
      }
      const typed = typedFieldOf(name);
      if (typed) {
        const via = typed.via ? ` (argparse reads it as ${typed.via})` : '';
        issues.push({
          path,
          message: `${name}${via} duplicates the typed field '${typed.field}'`,
          fix: fieldHint(typed.field),
        });
      }
      return;
    }
    if (arg.startsWith('-') && !NUMBER.test(arg)) {
      issues.push({
        path,
        message: `'${arg}' starts with '-' but is not a --flag`,
        fix: 'SGLang flags are long (--flag); a value starting with - would be read as a flag, so attach it: --flag=value',
      });
      valueMayFollow = false;
      return;
    }
    if (!valueMayFollow) {
      issues.push({
        path,
        message: `'${arg}' is a value with no --flag before it`,
        fix: i === 0 ? 'start extra_args with a --flag' : 'put its --flag before it, or write --flag=value',
      });
    }
  });
  return issues;
}

/** Problems visible in one file on its own. */
export function checkFile(label: string, p: RawProfile): Issue[] {
  const issues: Issue[] = [];
  for (const phase of ['prefill', 'decode'] as const) {
    if (p[`nsa_${phase}_backend`] !== undefined && p[`dsa_${phase}_backend`] !== undefined) {
      issues.push({
        path: at(label, `dsa_${phase}_backend`),
        message: `nsa_${phase}_backend and dsa_${phase}_backend are the same setting under two names; both are set`,
        fix: 'keep one of them',
      });
    }
  }
  if (p.env && 'CUDA_VISIBLE_DEVICES' in p.env) {
    issues.push({
      path: at(label, ['env', 'CUDA_VISIBLE_DEVICES']),
      message: 'GPU selection has its own field',
      fix: 'use gpus: [0, 1, ...]',
    });
  }
  if (p.gpus) {
    const seen = new Set<number>();
    p.gpus.forEach((g, i) => {
      if (seen.has(g)) issues.push({ path: at(label, ['gpus', i]), message: `GPU ${g} is listed twice` });
      seen.add(g);
    });
  }
  if (p.extra_args) issues.push(...checkExtraArgs(label, p.extra_args));
  return issues;
}

/** Problems of the merged settings: what SGLang itself would refuse at startup. */
export function checkMerged(label: string, f: Partial<LaunchFields>): Issue[] {
  const issues: Issue[] = [];
  if (f.model_path === undefined) {
    issues.push({
      path: at(label, 'model_path'),
      message: 'required',
      fix: 'set model_path here or in a profile this one extends',
    });
  }
  if (f.gpus !== undefined && f.tp !== undefined && f.gpus.length !== f.tp) {
    issues.push({
      path: at(label, 'gpus'),
      message: `lists ${f.gpus.length} GPU${f.gpus.length === 1 ? '' : 's'} but tp is ${f.tp}`,
      fix: 'list exactly tp GPU indices, or change tp',
    });
  }
  if (f.moe_runner_backend === 'flashinfer_cutlass' && f.quantization && !CUTLASS_MOE_QUANT.includes(f.quantization)) {
    issues.push({
      path: at(label, 'moe_runner_backend'),
      message: `SGLang refuses quantization '${f.quantization}' here: FlashInfer Cutlass MoE supports only modelopt_fp4, modelopt_fp8 or bfloat16 (no quantization)`,
      fix: 'set quantization to modelopt_fp4 or modelopt_fp8, or choose another moe_runner_backend',
    });
  }
  if (isDsaModel(f.model_path) && f.kv_cache_dtype && !DSA_KV.includes(f.kv_cache_dtype)) {
    issues.push({
      path: at(label, 'kv_cache_dtype'),
      message: `'${f.kv_cache_dtype}' fails SGLang's assert "DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype" (model_path names a DSA model)`,
      fix: `use one of: ${DSA_KV.join(', ')}`,
    });
  }
  return issues;
}
