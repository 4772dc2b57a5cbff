// ServerArgs auto-resolution, as SGLang's __post_init__ does it for this hardware (SM120, 96 GB per GPU):
// memory-bucket defaults (server_args.py:911-1063 [F]), the DeepSeek-DSA adjustments for GLM-5 / DeepSeek-V3.2
// (server_args.py:1132-1262 [F]), and the per-GPU memory budget the log lines and nvidia-smi report.

import { torchTotalGb } from './gpu.mjs';
import { isDsaModel, profileFor } from './models.mjs';

const FLASHMLA = new Set(['flashmla_kv', 'flashmla_sparse', 'flashmla_auto', 'flashmla_sparse_q8']);
// Attention backends SGLang replaces with the NSA/DSA backend for a DSA model. Others (triton, flashmla, ...) are
// kept and write the KV pool through the generic set_kv_buffer path (the seeds' attempt 3).
const FORCED_TO_NSA = new Set([null, undefined, 'nsa', 'dsa', 'flashinfer', 'fa3', 'fa4']);

const r2 = (x) => Math.round(x * 100) / 100;

function captureList(maxBs) {
  const all = [1, 2, 4, 8, 12];
  for (let b = 16; b <= 256; b += 8) all.push(b);
  for (let b = 272; b <= 512; b += 16) all.push(b);
  const out = all.filter((b) => b <= maxBs);
  if (out.length === 0 || out[out.length - 1] < maxBs) out.push(maxBs);
  return out;
}

/**
 * @param {Record<string, any>} v parsed values by dest
 * @param {Record<string, string>} seen dest -> option string the user typed
 * @param {'f'|'j'} flavor
 * @param {Array<{field: string, dest: string, float: boolean}>} fields
 */
export function resolveServerArgs(v, _seen, flavor, fields) {
  const j = flavor === 'j';
  const modelPath = v.model_path;
  const profile = profileFor(modelPath);
  const dsa = isDsaModel(modelPath);
  const tp = v.tp_size ?? v.tensor_parallel_size ?? 1;
  const ep = v.ep_size ?? v.expert_parallel_size ?? 1;
  const dp = v.dp_size ?? v.data_parallel_size ?? 1;
  const pp = v.pp_size ?? v.pipeline_parallel_size ?? 1;
  const nnodes = v.nnodes ?? 1;
  /** lines the main process logs before `server_args=...` */
  const preLogs = [];
  let fatal = null;

  const totalGb = torchTotalGb();
  const gpuMemMb = totalGb * 1024;
  // _handle_gpu_memory_settings: the <160 GB bucket (RTX PRO 6000 96 GB and H200).
  let chunked = v.chunked_prefill_size;
  let graphMaxBs = j ? v.cuda_graph_max_bs_decode : v.cuda_graph_max_bs;
  if (chunked === null || chunked === undefined) {
    chunked = gpuMemMb < 20 * 1024 ? 2048 : gpuMemMb < 60 * 1024 ? 4096 : gpuMemMb < 160 * 1024 ? 8192 : 16384;
  }
  const userMaxBs = graphMaxBs;
  if (graphMaxBs === null || graphMaxBs === undefined) {
    if (gpuMemMb < 20 * 1024) graphMaxBs = 8;
    else if (gpuMemMb < 35 * 1024) graphMaxBs = tp < 4 ? 24 : 80;
    else if (gpuMemMb < 60 * 1024) graphMaxBs = tp < 4 ? 32 : 160;
    else if (gpuMemMb < 160 * 1024) graphMaxBs = tp < 4 ? 256 : 512;
    else graphMaxBs = 512;
  }
  let mfs = v.mem_fraction_static;
  if (mfs === null || mfs === undefined) {
    // UNVERIFIED: the exact reserve formula; the 10 GB floor for >60 GB cards gives 0.895 here, which reproduces
    // the seeds' available_gpu_mem=6.60 GB for GLM-5 at tp 8.
    const reserved = gpuMemMb > 60 * 1024 ? 10 : 0.5 + (chunked * 1.5) / 1024 / 8 + (graphMaxBs * 2) / 1024;
    mfs = Math.round(((totalGb - reserved) / totalGb) * 1000) / 1000;
  }

  let attentionBackend = v.attention_backend ?? null;
  let kv = v.kv_cache_dtype ?? 'auto';
  let pageSize = v.page_size ?? 1;
  let prefillBackend = (j ? v.dsa_prefill_backend : v.nsa_prefill_backend) ?? null;
  let decodeBackend = (j ? v.dsa_decode_backend : v.nsa_decode_backend) ?? null;
  let genericPath = false;
  const word = j ? 'dsa' : 'nsa';
  const WORD = word.toUpperCase();

  if (dsa) {
    if (FORCED_TO_NSA.has(attentionBackend)) {
      attentionBackend = word;
      preLogs.push(`Use ${word} attention backend for DeepSeek with DSA.`);
    } else {
      genericPath = true;
    }
    pageSize = 64;
    preLogs.push('Setting page size to 64 for DeepSeek DSA.');
    const userKv = kv;
    if (kv === 'auto') {
      kv = 'fp8_e4m3';
      preLogs.push('Setting KV cache dtype to fp8_e4m3 for DeepSeek DSA on SM12 device.');
    }
    if (!['bf16', 'bfloat16', 'fp8_e4m3'].includes(kv)) {
      fatal = 'dsa_kv_dtype';
    } else {
      const fp8 = kv === 'fp8_e4m3';
      const userSet = prefillBackend !== null || decodeBackend !== null;
      if (userSet && userKv === 'auto') {
        // UNVERIFIED: the tail of this warning (the reference page quotes it up to "--kv-cache-dtype ...").
        preLogs.push(
          `When specifying --${word}-prefill-backend or --${word}-decode-backend, you should also explicitly set --kv-cache-dtype (fp8_e4m3 or bfloat16).`,
        );
      }
      const defPrefill = fp8 ? (j ? 'trtllm' : 'flashmla_auto') : 'flashmla_sparse';
      const defDecode = fp8 ? (j ? 'trtllm' : 'flashmla_kv') : 'trtllm';
      prefillBackend = prefillBackend ?? defPrefill;
      decodeBackend = decodeBackend ?? defDecode;
      preLogs.push(
        `Set ${WORD} backends for ${fp8 ? 'fp8_e4m3' : 'bfloat16'} KV Cache: prefill=${prefillBackend}, decode=${decodeBackend}.`,
      );
    }
    if (profile.arch === 'GlmMoeDsaForCausalLM') {
      preLogs.push(
        `Force ${WORD} prefill to use MLA (i.e. disable MHA_ONE_SHOT) for GlmMoeDsaForCausalLM on Blackwell.`,
      );
    }
  }

  const kvIsFp8 = kv === 'fp8_e4m3' || kv === 'fp8_e5m2';
  const kvTorch =
    kv === 'fp8_e4m3'
      ? 'torch.float8_e4m3fn'
      : kv === 'fp8_e5m2'
        ? 'torch.float8_e5m2'
        : kv === 'fp4_e2m1'
          ? 'torch.float4_e2m1fn_x2'
          : 'torch.bfloat16';

  const disableGraph = !!v.disable_cuda_graph || (j && v.cuda_graph_backend_decode === 'disabled');
  let captureBs = v.cuda_graph_bs ? [...new Set(v.cuda_graph_bs)].sort((a, b) => a - b) : captureList(graphMaxBs);
  const maxRunning = v.max_running_requests ?? 2048;
  if (v.max_running_requests !== null && v.max_running_requests !== undefined) {
    captureBs = captureBs.filter((b) => b <= maxRunning);
    if (captureBs.length === 0) captureBs = [maxRunning];
  }
  const maxCaptureBs = captureBs[captureBs.length - 1];

  // Per-GPU memory budget (GB).
  const ctxGb = tp > 1 ? 0.77 : 0.52;
  const weightsGb = r2(profile.weightsGb / Math.max(1, tp));
  const bytesPerToken = kvIsFp8 ? profile.kvBytesPerToken.fp8 : profile.kvBytesPerToken.bf16;
  let kvGb;
  let tokens;
  if (v.max_total_tokens) {
    tokens = v.max_total_tokens;
    kvGb = r2((tokens * bytesPerToken) / 2 ** 30);
  } else {
    kvGb = r2(mfs * totalGb - weightsGb);
    tokens = kvGb > 0 ? Math.floor((kvGb * 2 ** 30) / bytesPerToken / pageSize) * pageSize : 0;
  }
  const graphGb = disableGraph
    ? 0
    : r2(profile.moe ? 0.61 + (2.0 * maxCaptureBs) / 512 : 0.21 + (0.3 * maxCaptureBs) / 256);
  const contextLen = v.context_length ?? profile.contextLen;

  const servedModelName = v.served_model_name ?? modelPath;
  // The effective ServerArgs, in field order, for the `server_args=ServerArgs(...)` line and /server_info.
  /** @type {Array<[string, any, boolean]>} */
  const serverArgs = [];
  const set = new Map();
  for (const f of fields) {
    if (set.has(f.field)) continue;
    set.set(f.field, serverArgs.length);
    serverArgs.push([f.field, v[f.dest], f.float]);
  }
  const put = (field, value, float = false) => {
    if (set.has(field)) serverArgs[set.get(field)] = [field, value, float];
    else {
      set.set(field, serverArgs.length);
      serverArgs.push([field, value, float]);
    }
  };
  put('tokenizer_path', v.tokenizer_path ?? modelPath);
  put('served_model_name', servedModelName);
  put('kv_cache_dtype', kv);
  put('mem_fraction_static', mfs, true);
  put('chunked_prefill_size', chunked);
  put('max_running_requests', v.max_running_requests ?? null);
  put('page_size', pageSize);
  put('attention_backend', attentionBackend);
  put(j ? 'cuda_graph_max_bs_decode' : 'cuda_graph_max_bs', graphMaxBs);
  put('cuda_graph_bs', captureBs);
  put(j ? 'dsa_prefill_backend' : 'nsa_prefill_backend', dsa ? prefillBackend : (prefillBackend ?? null));
  put(j ? 'dsa_decode_backend' : 'nsa_decode_backend', dsa ? decodeBackend : (decodeBackend ?? null));
  put('context_length', v.context_length ?? null);
  put('device', v.device ?? 'cuda');
  put('log_level_http', v.log_level_http ?? null);
  put('random_seed', v.random_seed ?? 0);
  put('watchdog_timeout', v.watchdog_timeout ?? 300, true);

  return {
    flavor,
    modelPath,
    profile,
    dsa,
    tp,
    ep,
    dp,
    pp,
    nnodes,
    nodeRank: v.node_rank ?? 0,
    distInitAddr: v.dist_init_addr ?? null,
    distTimeout: v.dist_timeout ?? null,
    host: v.host ?? '127.0.0.1',
    port: v.port ?? 30000,
    apiKey: v.api_key ?? null,
    adminApiKey: v.admin_api_key ?? null,
    servedModelName,
    tokenizerPath: v.tokenizer_path ?? modelPath,
    kv,
    kvIsFp8,
    kvTorch,
    attentionBackend,
    userAttentionBackend: v.attention_backend ?? null,
    genericPath,
    prefillBackend,
    decodeBackend,
    decodeIsFlashmla: FLASHMLA.has(decodeBackend),
    graphEnabled: !disableGraph,
    graphMaxBs,
    userMaxBs,
    captureBs,
    maxCaptureBs,
    chunked,
    maxPrefillTokens: v.max_prefill_tokens ?? 16384,
    mfs,
    maxRunning,
    schedulePolicy: v.schedule_policy ?? 'fcfs',
    conservativeness: v.schedule_conservativeness ?? 1.0,
    contextLen,
    pageSize,
    watchdogTimeout: v.watchdog_timeout ?? 300,
    skipWarmup: !!v.skip_server_warmup,
    enableMetrics: !!v.enable_metrics,
    disableRadixCache: !!v.disable_radix_cache,
    enableCacheReport: !!v.enable_cache_report,
    reasoningParser: v.reasoning_parser ?? null,
    quantization: v.quantization ?? null,
    moeRunnerBackend: v.moe_runner_backend ?? 'auto',
    weightVersion: v.weight_version ?? 'default',
    decodeLogInterval: v.decode_log_interval ?? 40,
    mem: { totalGb, ctxGb, weightsGb, kvGb, tokens, graphGb, bytesPerToken },
    preLogs,
    fatal,
    serverArgs,
  };
}
