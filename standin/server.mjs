// `python -m sglang.launch_server ...`: the whole life of a simulated SGLang server. Phases, log lines and their
// order follow docs/sglang.md §3; crashes follow messages.mjs; HTTP lives in http.mjs.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { ParseError } from './argparse.mjs';
import { buildParser } from './flags.mjs';
import { gpuCount, physicalGpu, StateFile } from './gpu.mjs';
import { startHttp } from './http.mjs';
import { defaultBar, Logger, shardBar, writeErr, writeOut } from './log.mjs';
import * as M from './messages.mjs';
import { headRendezvous, workerRendezvous } from './multinode.mjs';
import { BASE, perfModel } from './perf.mjs';
import { pyFloat, pyRepr } from './pyrepr.mjs';
import { resolveServerArgs } from './resolve.mjs';
import { currentEvents, eventAt, readControl, validScenario } from './scenario.mjs';
import { flavor } from './version.mjs';

function timeScale() {
  const s = Number.parseFloat(process.env.STANDIN_TIME_SCALE ?? '1');
  return Number.isFinite(s) && s >= 0 ? s : 1;
}

function envMs(name, def) {
  const v = Number.parseFloat(process.env[name] ?? '');
  return Number.isFinite(v) && v >= 0 ? v : def;
}

const r2 = (x) => (Math.round(x * 100) / 100).toFixed(2);

/** Python-style `{x:.2f}` of a number in GB. */
const gb = (x) => r2(Math.max(0, x));

export class Server {
  constructor(cfg, envScenario) {
    this.cfg = cfg;
    this.envScenario = envScenario;
    this.scale = timeScale();
    // Set, these pace every request exactly; unset, the performance model (perf.mjs) decides per request.
    const fixed = {
      ttftMs: process.env.STANDIN_TTFT_MS ? envMs('STANDIN_TTFT_MS', BASE.ttftMs) : undefined,
      tpotMs: process.env.STANDIN_TPOT_MS ? envMs('STANDIN_TPOT_MS', BASE.tpotMs) : undefined,
    };
    this.perf = perfModel(cfg, fixed);
    // What the log lines quote (decode log interval, prefill throughput): one request alone.
    this.ttftMs = this.perf.ttftMs(0);
    this.tpotMs = this.perf.itlMs(1);
    const tpPerNode = Math.max(1, Math.floor(cfg.tp / Math.max(1, cfg.nnodes)));
    this.tpPerNode = tpPerNode;
    this.rankBase = cfg.nodeRank * tpPerNode;
    this.log = new Logger({ tp: cfg.tp, ep: cfg.ep, rankBase: this.rankBase, localRanks: tpPerNode });
    this.isWorker = cfg.nnodes > 1 && cfg.nodeRank > 0;
    this.phase = 'startup';
    this.status = 'starting'; // starting | up | draining | unhealthy
    this.handlerInstalled = false;
    this.dead = false;
    this.hung = false;
    this.children = [];
    this.childPids = [];
    this.schedulerPids = [];
    this.state = new StateFile(process.pid);
    this.usedGb = 0;
    this.http = null;
    this.startedAt = Date.now();
    this.timers = new Set();
  }

  // --- time ---------------------------------------------------------------------------------------------------

  /** Wait `sec` simulated seconds (scaled by STANDIN_TIME_SCALE). */
  sleep(sec) {
    const ms = sec * 1000 * this.scale;
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  /**
   * A stalled phase (or a dead server waiting for its SIGKILL): never returns, except for a stall that came from
   * the STANDIN_CONTROL file, which resumes once the file stops saying `stall:<phase>`.
   */
  hang(ev = null) {
    this.hung = true;
    if (ev?.kind === 'stall' && ev.origin === 'control') {
      const word = `stall:${ev.phase}`;
      return new Promise((resolve) => {
        const t = setInterval(() => {
          if (this.dead) return;
          if (readControl() !== word) {
            clearInterval(t);
            this.hung = false;
            resolve();
          }
        }, 20);
      });
    }
    setInterval(() => {}, 1 << 30);
    return new Promise(() => {});
  }

  events(phase) {
    return currentEvents(this.cfg, this.envScenario, phase);
  }

  // --- processes and GPU state --------------------------------------------------------------------------------

  /**
   * Scheduler ranks and the detokenizer, as cheap `sleep` processes in the server's process group, titled like
   * SGLang's (setproctitle `sglang::scheduler_TP0`, `sglang::detokenizer`). One shell starts them all (forking
   * node once per child is slow); it prints their pids and becomes the last one itself.
   */
  spawnChildren() {
    const titles = [];
    for (let i = 0; i < this.tpPerNode; i++) {
      const r = this.rankBase + i;
      titles.push(this.cfg.tp > 1 ? `sglang::scheduler_TP${r}` : 'sglang::scheduler');
    }
    if (!this.isWorker) titles.push('sglang::detokenizer');
    const last = titles.pop();
    const bash = ['/bin/bash', '/usr/bin/bash'].some((b) => fs.existsSync(b));
    // SGLang's scheduler and detokenizer processes die with the process that started them: each calls
    // kill_itself_when_parent_died() (sglang/srt/utils.py: prctl(PR_SET_PDEATHSIG, SIGKILL)). util-linux's setpriv
    // sets the same for what it execs (exec keeps it; only fork clears it). The first children's parent is the shell
    // that becomes the last child, whose parent is this server: a SIGKILL of the server alone ends them all, as it
    // ends SGLang's, instead of leaving orphans in its process group. A parent that died before the setting was made
    // never signals (prctl(2)), so each child first checks that its parent is still the one it was started by.
    const pdeath = ['/usr/bin/setpriv', '/bin/setpriv'].find((b) => fs.existsSync(b));
    const one = (t, parent) =>
      bash && pdeath
        ? `exec ${pdeath} --pdeathsig KILL -- bash -c '[ "$PPID" = "$2" ] && exec -a "$1" sleep 2147483647' _ '${t}' ${parent}`
        : bash
          ? `exec -a '${t}' sleep 2147483647`
          : 'exec sleep 2147483647';
    const script = `${titles.map((t) => `( ${one(t, '$$')} ) & echo $!`).join('; ')}${titles.length ? '; ' : ''}echo $$; ${one(last, process.pid)}`;
    try {
      const c = spawn(bash ? 'bash' : 'sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] });
      c.on('error', () => {});
      this.children.push(c);
      let out = '';
      c.stdout.on('data', (d) => {
        out += d;
        const pids = out
          .split('\n')
          .filter((x) => /^\d+$/.test(x))
          .map(Number);
        this.childPids = pids;
        this.schedulerPids = pids.slice(0, this.tpPerNode);
        if (this.usedGb > 0) this.setGpuUsage(this.usedGb);
      });
    } catch {
      // no shell: run without children
    }
  }

  killChildren() {
    for (const pid of this.childPids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const c of this.children) {
      try {
        c.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }

  /** Record `usedGb` per local GPU for the nvidia-smi stand-in. */
  setGpuUsage(usedGb) {
    this.usedGb = usedGb;
    this.state.write({
      pid: process.pid,
      startedAt: new Date(this.startedAt).toISOString(),
      model: this.cfg.modelPath,
      port: this.cfg.port,
      gpus: Array.from({ length: this.tpPerNode }, (_, i) => ({
        index: physicalGpu(i),
        usedMiB: Math.round(usedGb * 1024),
        pid: this.schedulerPids[i] ?? process.pid,
      })),
    });
  }

  visibleGpus() {
    const vis = process.env.CUDA_VISIBLE_DEVICES;
    return vis !== undefined && vis.trim() !== '' ? vis.split(',').length : gpuCount();
  }

  cleanup() {
    for (const t of this.timers) clearTimeout(t);
    this.killChildren();
    this.state.remove();
    if (this.http) this.http.destroyAll();
  }

  // --- endings ------------------------------------------------------------------------------------------------

  /**
   * A scheduler crashed: every local rank logs its traceback, the main process logs the sigquit and kills the
   * process tree including itself (kill_process_tree -> SIGKILL), so the exit status is "killed by SIGKILL" (137).
   * @param {import('./messages.mjs').Crash} c
   */
  crash(c) {
    if (this.dead) return;
    this.dead = true;
    const ranks = Array.from({ length: this.tpPerNode }, (_, i) => this.rankBase + i);
    if (c.stdout) for (const r of ranks) writeOut(c.stdout(r));
    for (const r of ranks) {
      const text = c.rankText(r);
      if (text) this.log.line(`Scheduler hit an exception: ${text}`, r);
    }
    this.die();
  }

  /** The main process reacts to a child's SIGQUIT: log it, kill the tree, SIGKILL itself. */
  die() {
    this.dead = true;
    if (this.handlerInstalled)
      this.log.main('SIGQUIT received. signum=None, frame=None. It usually means one child failed.');
    else this.log.main('Received sigquit from a child process. It usually means the child failed.');
    this.cleanup();
    process.kill(process.pid, 'SIGKILL');
  }

  /** A failure in the main process itself: Python prints the traceback and exits 1. */
  fatal(text) {
    writeErr(text);
    this.cleanup();
    process.exit(1);
  }

  crashFor(ev) {
    const f = this.cfg.flavor;
    switch (ev.kind) {
      case 'nsa_fp8_assert':
        return M.nsaFp8Assert(ev.where === 'capture' ? 'capture' : 'extend', this.cfg.attentionBackend ?? 'triton');
      case 'oom':
        return M.oomCapture({ flavor: f, totalGb: this.cfg.mem.totalGb, inCapture: ev.where === 'capture' });
      case 'tllm_arch':
        return M.tllmUnsupportedArch(ev.where ?? 'capture', f);
      case 'fa3_arch':
        return M.fa3Unsupported(ev.where ?? 'capture', f);
      case 'tilelang_fp8':
        return M.tilelangFp8(ev.where ?? 'capture', f);
      case 'aiter_import':
        return M.aiterImport();
      case 'nsa_non_dsa':
        return M.nsaOnNonDsa();
      case 'nan_decode':
        return M.nanInSampling();
      case 'illegal_memory_access':
        return M.illegalMemoryAccess();
      case 'model_load_error':
        return M.modelLoadError();
      case 'nccl_error':
        return M.ncclError();
      case 'invalid_device':
        return M.invalidDeviceOrdinal(this.rankBase + this.visibleGpus());
      case 'weights_oom':
        return M.weightsOom(this.cfg.mem.totalGb);
      case 'not_enough_memory':
        return M.notEnoughMemory(this.cfg.mfs);
      default:
        return M.genericCrash(ev.sub ?? ev.phase);
    }
  }

  /** Handle an event that fires "here": crash or stall. Returns only if there is nothing to do. */
  async fire(ev) {
    if (!ev) return;
    if (ev.kind === 'stall') return this.hang(ev);
    if (ev.phase === 'startup') {
      if (ev.kind === 'import_error') return this.fatal(M.importErrorFatal());
      return this.fatal(M.startupFatal());
    }
    this.crash(this.crashFor(ev));
    return this.hang();
  }

  // --- signals --------------------------------------------------------------------------------------------------

  installSignals() {
    const early = (sig) => {
      // Before the first request SGLang has no SIGTERM handler: the default action ends the process (its
      // schedulers follow through PR_SET_PDEATHSIG).
      this.cleanup();
      process.removeAllListeners(sig);
      process.kill(process.pid, sig);
    };
    if (process.env.STANDIN_IGNORE_SIGTERM === '1') {
      process.on('SIGTERM', () => {});
    } else {
      process.on('SIGTERM', () => {
        if (this.handlerInstalled && !this.dead) this.sigterm();
        else early('SIGTERM');
      });
    }
    process.on('SIGINT', () => early('SIGINT'));
  }

  /** tokenizer_manager.py SignalHandler.sigterm_handler + sigterm_watchdog ([F]). */
  async sigterm() {
    if (this.status === 'draining') return;
    this.status = 'draining';
    this.log.main('SIGTERM received. signum=None frame=None. Draining requests and shutting down...');
    await this.sleep(5);
    for (;;) {
      const rids = this.http ? this.http.activeRids() : [];
      this.log.main(
        `Gracefully exiting... Remaining number of requests ${rids.length}. Remaining requests remaining_rids=${pyRepr(rids)}.`,
      );
      if (rids.length === 0) break;
      await this.sleep(5);
    }
    this.dead = true;
    this.cleanup();
    if (process.env.STANDIN_EXIT_STYLE === 'real') process.kill(process.pid, 'SIGKILL');
    process.exit(0);
  }

  // --- the launch ---------------------------------------------------------------------------------------------

  serverArgsLine() {
    const parts = this.cfg.serverArgs.map(([k, v, isFloat]) => {
      const val = isFloat && typeof v === 'number' ? pyFloat(v) : pyRepr(v);
      return `${k}=${val}`;
    });
    return `server_args=ServerArgs(${parts.join(', ')})`;
  }

  async run() {
    const cfg = this.cfg;
    const p = cfg.profile;
    const mem = cfg.mem;
    this.installSignals();

    // Python imports sglang, torch, flashinfer... before anything is printed.
    await this.fire(eventAt(this.events('startup'), 'startup'));
    await this.sleep(p.importSec * 0.6);
    if (cfg.fatal === 'dsa_kv_dtype') this.fatal(M.dsaKvDtypeFatal());
    for (const l of cfg.preLogs) this.log.main(l);
    if (p.ropeWarning) writeErr(`${p.ropeWarning}\n`);
    this.log.main(this.serverArgsLine());
    const deepgemm =
      (p.fp8Checkpoint || cfg.quantization === 'fp8') &&
      !/^(0|false)$/i.test(process.env.SGLANG_ENABLE_JIT_DEEPGEMM ?? '');
    if (deepgemm) this.log.main(M.DEEPGEMM_UE8M0);
    await this.sleep(p.importSec * 0.4);
    this.spawnChildren();

    // torch.distributed
    this.phase = 'dist_init';
    if (p.ropeWarning) writeErr(`${p.ropeWarning}\n`);
    if (deepgemm) this.log.ranks(M.DEEPGEMM_UE8M0);
    this.log.ranks('Init torch distributed begin.');
    if (cfg.nnodes > 1) await this.rendezvous();
    const distSec = cfg.tp > 1 ? 1.2 + 0.1 * cfg.tp : 0.3;
    await this.sleep(distSec);
    await this.fire(eventAt(this.events('dist_init'), 'dist_init'));
    if (cfg.tp > 1 && !this.isWorker) this.log.first('sglang is using nccl==2.27.5');
    this.log.ranks(`Init torch distributed ends. elapsed=${r2(distSec)} s, mem usage=${gb(mem.ctxGb)} GB`);
    this.setGpuUsage(mem.ctxGb);

    // Weights
    this.phase = 'weight_load';
    const availLoad = mem.totalGb - mem.ctxGb;
    this.log.ranks(`Load weight begin. avail mem=${gb(availLoad)} GB`);
    const wEvents = this.events('weight_load');
    const wEv = eventAt(wEvents, 'weight_load');
    const shards = p.shards;
    const perShard = p.secPerShard;
    const rank0 = this.rankBase === 0;
    const desc = 'Loading safetensors checkpoint shards';
    if (rank0) writeErr(shardBar(desc, 0, shards, 0));
    let stopFrac = wEv?.kind === 'stall' ? 0.45 : 0.4;
    if (wEv?.kind === 'weights_oom') stopFrac = (availLoad - 0.5) / mem.weightsGb;
    const stopAt = wEv ? Math.max(1, Math.floor(shards * stopFrac)) : shards + 1;
    for (let i = 1; i <= shards; i++) {
      await this.sleep(perShard);
      if (rank0) writeErr(shardBar(desc, i, shards, i * perShard));
      if (i % 10 === 0) this.setGpuUsage(mem.ctxGb + (mem.weightsGb * i) / shards);
      if (i === stopAt) {
        await this.fire(wEv);
      }
    }
    if (rank0) writeErr('\n');
    await this.fire(eventAt(this.events('weight_load'), 'weight_load'));
    const loadSec = shards * perShard + 0.4;
    await this.sleep(0.4);
    this.log.ranks(
      `Load weight end. elapsed=${r2(loadSec)} s, type=${p.arch}, dtype=${p.dtype}, avail mem=${gb(availLoad - mem.weightsGb)} GB, mem usage=${gb(mem.weightsGb)} GB.`,
    );
    this.setGpuUsage(mem.ctxGb + mem.weightsGb);

    // KV cache
    this.phase = 'kv_alloc';
    await this.sleep(0.5);
    const kvEv = eventAt(this.events('kv_alloc'), 'kv_alloc');
    if (kvEv && (kvEv.kind === 'not_enough_memory' || kvEv.kind === 'stall')) await this.fire(kvEv);
    const dtypeShown = cfg.kvTorch;
    this.log.ranks(`Using KV cache dtype: ${dtypeShown}`);
    const j = cfg.flavor === 'j';
    const dt = j ? `dtype: ${dtypeShown}, ` : '';
    if (p.mla) this.log.ranks(`KV Cache is allocated. ${dt}#tokens: ${mem.tokens}, KV size: ${gb(mem.kvGb)} GB`);
    else
      this.log.ranks(
        `KV Cache is allocated. ${dt}#tokens: ${mem.tokens}, K size: ${gb(mem.kvGb / 2)} GB, V size: ${gb(mem.kvGb / 2)} GB`,
      );
    const availPool = availLoad - mem.weightsGb - mem.kvGb;
    this.log.ranks(`Memory pool end. avail mem=${gb(availPool)} GB`);
    this.setGpuUsage(mem.ctxGb + mem.weightsGb + mem.kvGb);
    await this.sleep(0.5);
    await this.fire(eventAt(this.events('kv_alloc'), 'kv_alloc'));

    // CUDA graphs
    this.phase = 'cuda_graph_capture';
    let availFinal = availPool;
    const moeTriton =
      p.moe &&
      (cfg.moeRunnerBackend === 'triton' ||
        (cfg.moeRunnerBackend === 'auto' && !/fp4/.test(cfg.quantization ?? '') && !/NVFP4|FP4/i.test(cfg.modelPath)));
    if (cfg.graphEnabled) {
      const availCap = availPool - 0.17;
      const bsList = cfg.captureBs;
      if (j) {
        this.log.ranks(
          `Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, bs=${pyRepr(bsList)}, avail mem=${gb(availCap)} GB`,
        );
      } else {
        this.log.ranks(`Capture cuda graph begin. This can take up to several minutes. avail mem=${gb(availCap)} GB`);
        if (rank0) this.log.first(`Capture cuda graph bs ${pyRepr(bsList)}`);
      }
      if (moeTriton && rank0 && p.moeShape)
        this.log.first(M.moeDefaultConfig(p.moeShape, p.fp8Checkpoint ? 'fp8_w8a8' : null));
      const capEv = eventAt(this.events('cuda_graph_capture'), 'cuda_graph_capture');
      const perBs = p.moe ? 0.29 : 0.1;
      const rev = [...bsList].reverse();
      const n = rev.length;
      for (let i = 0; i < n; i++) {
        const usedSoFar = (mem.graphGb * i) / n;
        const d = `Capturing batches (bs=${rev[i]} avail_mem=${gb(availCap - usedSoFar)} GB)`;
        if (rank0) writeErr(defaultBar(d, i, n, i * perBs));
        if (capEv && i === 0) {
          if (rank0) writeErr('\n');
          await this.fire(capEv);
        }
        await this.sleep(perBs);
      }
      if (rank0)
        writeErr(
          `${defaultBar(`Capturing batches (bs=${rev[n - 1]} avail_mem=${gb(availCap - mem.graphGb)} GB)`, n, n, n * perBs)}\n`,
        );
      availFinal = availPool - mem.graphGb;
      const capSec = n * perBs + 0.3;
      if (j) {
        this.log.ranks(
          `Capture target decode CUDA graph end. Time elapsed: ${r2(capSec)} s. mem usage=${gb(mem.graphGb)} GB. avail mem=${gb(availFinal)} GB.`,
        );
      } else {
        this.log.ranks(
          `Capture cuda graph end. Time elapsed: ${r2(capSec)} s. mem usage=${gb(mem.graphGb)} GB. avail mem=${gb(availFinal)} GB.`,
        );
      }
      this.setGpuUsage(mem.ctxGb + mem.weightsGb + mem.kvGb + mem.graphGb);
    } else {
      if (moeTriton && rank0 && p.moeShape)
        this.log.first(M.moeDefaultConfig(p.moeShape, p.fp8Checkpoint ? 'fp8_w8a8' : null));
      const capEv = eventAt(this.events('cuda_graph_capture'), 'cuda_graph_capture');
      if (capEv && (capEv.kind === 'generic' || capEv.kind === 'stall')) await this.fire(capEv);
    }
    this.availFinal = availFinal;
    await this.sleep(0.3);
    if (rank0) {
      this.log.first(
        `max_total_num_tokens=${mem.tokens}, chunked_prefill_size=${cfg.chunked}, max_prefill_tokens=${cfg.maxPrefillTokens}, max_running_requests=${cfg.maxRunning}, context_len=${cfg.contextLen}, available_gpu_mem=${gb(availFinal)} GB`,
      );
    }
    await this.sleep(0.7);

    // HTTP
    if (this.isWorker) {
      await this.startWorkerHealth();
      this.quitOnControl();
      return;
    }
    await this.startUvicorn();

    // Warmup (http_server.py _wait_and_warmup)
    this.phase = 'warmup';
    if (!cfg.skipWarmup) await this.warmup();
    this.phase = 'request';
    this.status = 'up';
    this.log.main('The server is fired up and ready to roll!');
    this.quitOnControl();
  }

  /**
   * `exit_quietly`: once up (node 0 ready, a worker's health server started), the main process ends with status 1
   * and prints nothing, its children with it, as a `sys.exit(1)` after an error it logged itself does. Polled, since
   * an idle server (and a worker, which gets no requests) reaches no phase boundary or request to read the file at.
   */
  quitOnControl() {
    const t = setInterval(() => {
      if (this.dead || (readControl() ?? this.envScenario) !== 'exit_quietly') return;
      this.dead = true;
      this.cleanup();
      process.exit(1);
    }, 20);
    this.timers.add(t);
  }

  async rendezvous() {
    const cfg = this.cfg;
    // --dist-timeout is scaled like every simulated duration; the default (600 s here; torch's own default when
    // SGLang passes None is UNVERIFIED) never drops below 10 s of wall time, because the other nodes start in
    // real time.
    const timeoutMs =
      cfg.distTimeout !== null ? cfg.distTimeout * 1000 * this.scale : Math.max(600 * 1000 * this.scale, 10_000);
    const fail = (text) => this.crash({ rankText: () => text });
    const meet = cfg.nodeRank === 0 ? headRendezvous : workerRendezvous;
    this.rdv = await meet(cfg, timeoutMs, fail, () => this.peerLost());
    if (this.dead) await this.hang();
  }

  /** Another node of the job went away after joining. */
  peerLost() {
    if (this.dead || this.status === 'draining') return;
    const [host, port] = (this.cfg.distInitAddr ?? ':').split(':');
    this.crash({
      rankText: () =>
        `Traceback (most recent call last):\n  File "${process.env.STANDIN_SGLANG_ROOT || '/sgl-workspace/sglang/python/sglang'}/srt/managers/scheduler.py", line 3148, in run_scheduler_process\n    scheduler.event_loop_overlap()\n` +
        `RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [${host}]:${port}\n`,
    });
  }

  async startUvicorn() {
    const cfg = this.cfg;
    this.log.uvicorn('INFO', `Started server process [${process.pid}]`);
    this.log.uvicorn('INFO', 'Waiting for application startup.');
    if (cfg.profile.key === 'glm5') {
      this.log.main(
        "Using default chat sampling params from model generation config: {'temperature': 1.0, 'top_p': 0.95}",
      );
    }
    this.log.uvicorn('INFO', 'Application startup complete.');
    try {
      this.http = await startHttp(this, { dummy: false });
    } catch (e) {
      const host = cfg.host;
      if (e && e.code === 'EADDRINUSE') {
        this.log.uvicorn(
          'ERROR',
          `[Errno 98] error while attempting to bind on address (${pyRepr(host)}, ${cfg.port}): address already in use`,
        );
      } else if (e && e.code === 'EADDRNOTAVAIL') {
        this.log.uvicorn(
          'ERROR',
          `[Errno 99] error while attempting to bind on address (${pyRepr(host)}, ${cfg.port}): cannot assign requested address`,
        );
      } else {
        this.log.uvicorn('ERROR', String(e?.message ?? e));
      }
      this.log.uvicorn('INFO', 'Waiting for application shutdown.');
      this.log.uvicorn('INFO', 'Application shutdown complete.');
      this.dead = true;
      this.cleanup();
      process.exit(1);
    }
    this.log.uvicorn('INFO', `Uvicorn running on http://${cfg.host}:${cfg.port} (Press CTRL+C to quit)`);
  }

  async startWorkerHealth() {
    // Non-zero node ranks serve a dummy health server on their own --host:--port (utils/common.py:2656 [F]).
    this.log.uvicorn('INFO', `Started server process [${process.pid}]`);
    this.log.uvicorn('INFO', 'Waiting for application startup.');
    this.log.uvicorn('INFO', 'Application startup complete.');
    try {
      this.http = await startHttp(this, { dummy: true });
    } catch (_e) {
      this.log.uvicorn(
        'ERROR',
        `[Errno 98] error while attempting to bind on address (${pyRepr(this.cfg.host)}, ${this.cfg.port}): address already in use`,
      );
      this.dead = true;
      this.cleanup();
      process.exit(1);
      return;
    }
    this.log.uvicorn('INFO', `Uvicorn running on http://${this.cfg.host}:${this.cfg.port} (Press CTRL+C to quit)`);
    this.status = 'up';
    this.handlerInstalled = false;
  }

  async warmup() {
    const client = 40000 + (process.pid % 20000);
    this.log.uvicorn('INFO', `127.0.0.1:${client} - "GET /model_info HTTP/1.1" 200 OK`);
    // The warmup /generate is the first request: the tokenizer manager installs its SIGTERM/SIGQUIT handlers.
    this.handlerInstalled = true;
    let ev = eventAt(this.events('warmup'), 'warmup');
    const promptTokens = 7;
    this.http.logPrefill(promptTokens, 0, 0);
    if (
      ev &&
      (ev.kind === 'stall' ||
        ev.where === 'prefill' ||
        ev.where === 'extend' ||
        ev.kind === 'generic' ||
        ev.kind === 'oom')
    ) {
      await this.sleep(0.2);
      await this.fire(ev);
      ev = null; // a released stall
    }
    await this.sleep(0.3);
    if (ev) {
      // decode-time failures of the warmup (kernels without a captured graph)
      await this.fire(ev);
    }
    await this.sleep(0.5);
    this.log.uvicorn('INFO', `127.0.0.1:${client + 2} - "POST /generate HTTP/1.1" 200 OK`);
  }
}

/** Entry point for `-m sglang.launch_server`. */
export async function launchServer(argv) {
  const f = flavor();
  const envScenario = process.env.STANDIN_SCENARIO?.trim() || null;
  if (envScenario && !validScenario(envScenario)) {
    writeErr(`sglang stand-in: unknown STANDIN_SCENARIO ${JSON.stringify(envScenario)} (see standin/README.md)\n`);
    process.exit(2);
  }
  if (envScenario === 'import_error') {
    // The import fails before argparse runs.
    await new Promise((r) => setTimeout(r, 2500 * timeScale()));
    writeErr(M.importErrorFatal());
    process.exit(1);
  }
  const { parser, fields } = buildParser(f, (m) => writeErr(`${m}\n`));
  let parsed;
  try {
    parsed = parser.parse(argv);
  } catch (e) {
    if (e instanceof ParseError) {
      writeErr(parser.formatError(e.message));
      process.exit(2);
    }
    throw e;
  }
  if (parsed.helpRequested) {
    writeOut(parser.formatHelp());
    process.exit(0);
  }
  const cfg = resolveServerArgs(parsed.values, parsed.seen, f, fields);
  const server = new Server(cfg, envScenario);
  await server.run();
}
