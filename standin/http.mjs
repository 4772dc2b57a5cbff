// The HTTP face of the stand-in (entrypoints/http_server.py [F], docs/sglang.md §2), on node:http.
// uvicorn-style access lines are logged when a response starts, as uvicorn does.

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { chatPromptTokens, countTokens, plan } from './generate.mjs';
import { timestamp, writeErr } from './log.mjs';
import * as M from './messages.mjs';
import { pyFloat } from './pyrepr.mjs';
import { eventAt } from './scenario.mjs';
import { VERSION_F, VERSION_J } from './version.mjs';

const json = (v) => JSON.stringify(v);

function clientAddr(req) {
  const a = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return `${a}:${req.socket.remotePort ?? 0}`;
}

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

const hhmmss = (d) => timestamp(d).slice(11, 19);

/**
 * @param {import('./server.mjs').Server} srv
 * @param {{dummy: boolean}} opts dummy = the always-200 health server of a non-zero node rank
 */
export function startHttp(srv, { dummy }) {
  const cfg = srv.cfg;
  const sockets = new Set();
  /** rid -> {cancel()} */
  const active = new Map();
  const seenPrompts = new Set();
  // Requests decoding now, and those waiting for a slot (--max-running-requests).
  let running = 0;
  const waiting = [];
  const stats = { genTokens: 0, promptTokens: 0, requests: 0, aborted: 0, cachedTokens: 0, lastThroughput: 0 };
  // SGLang's latency histograms (python/sglang/srt/metrics/collector.py: time to first token, inter-token latency).
  const histogram = (buckets) => ({ buckets, counts: buckets.map(() => 0), sum: 0, count: 0 });
  const observe = (h, v) => {
    h.sum += v;
    h.count++;
    h.buckets.forEach((b, i) => {
      if (v <= b) h.counts[i]++;
    });
  };
  const ttftHist = histogram([0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10, 30]);
  const itlHist = histogram([0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1]);
  let decodeTimer = null;
  let sinceLog = 0;
  let lastLogAt = Date.now();
  const created = Math.floor(Date.now() / 1000);

  const tokensInUse = () => {
    let n = 0;
    for (const r of active.values()) n += r.tokens();
    return n;
  };

  function logPrefill(newTokens, cached, running) {
    const usage = (tokensInUse() / Math.max(1, cfg.mem.tokens)).toFixed(2);
    const thr = ((newTokens + cached) / Math.max(0.001, srv.ttftMs / 1000)).toFixed(2);
    srv.log.first(
      `Prefill batch, #new-seq: 1, #new-token: ${newTokens}, #cached-token: ${cached}, token usage: ${usage}, #running-req: ${running}, #queue-req: 0, input throughput (token/s): ${thr}, `,
    );
  }

  function ensureDecodeLog() {
    if (decodeTimer) return;
    const every = Math.max(1, cfg.decodeLogInterval * srv.tpotMs);
    lastLogAt = Date.now();
    decodeTimer = setInterval(() => {
      if (active.size === 0) {
        clearInterval(decodeTimer);
        decodeTimer = null;
        return;
      }
      if (sinceLog === 0 || srv.dead) return;
      const now = Date.now();
      const thr = sinceLog / Math.max(0.001, (now - lastLogAt) / 1000);
      stats.lastThroughput = thr;
      const usage = (tokensInUse() / Math.max(1, cfg.mem.tokens)).toFixed(2);
      srv.log.first(
        `Decode batch, #running-req: ${active.size}, #token: ${tokensInUse()}, token usage: ${usage}, cuda graph: ${cfg.graphEnabled ? 'True' : 'False'}, gen throughput (token/s): ${thr.toFixed(2)}, #queue-req: 0`,
      );
      sinceLog = 0;
      lastLogAt = now;
    }, every);
  }

  function send(req, res, status, body, type = 'application/json') {
    if (res.headersSent || res.destroyed) return;
    srv.log.uvicorn(
      'INFO',
      `${clientAddr(req)} - "${req.method} ${req.url} HTTP/${req.httpVersion}" ${status} ${http.STATUS_CODES[status] ?? ''}`,
    );
    const payload = typeof body === 'string' ? body : json(body);
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(payload) });
    res.end(payload);
  }

  // A streaming client can vanish between tokens; writing to its closed response must not take the server down.
  function safeWrite(res, data) {
    if (res.destroyed || res.writableEnded) return false;
    return res.write(data);
  }

  function startStream(req, res) {
    // The client may have gone (or an error answer been sent) before the first token: nothing to start then.
    if (res.headersSent || res.destroyed || res.writableEnded) return;
    srv.log.uvicorn('INFO', `${clientAddr(req)} - "${req.method} ${req.url} HTTP/${req.httpVersion}" 200 OK`);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders?.();
  }

  const modelInfo = () => ({
    model_path: cfg.modelPath,
    tokenizer_path: cfg.tokenizerPath,
    is_generation: true,
    preferred_sampling_params: null,
    weight_version: cfg.weightVersion,
    has_image_understanding: false,
    has_audio_understanding: false,
    model_type: cfg.profile.modelType,
    architectures: [cfg.profile.arch],
  });

  const serverInfo = () => {
    const args = {};
    for (const [k, v] of cfg.serverArgs) args[k] = v;
    return {
      ...args,
      status: 'ready',
      max_total_num_tokens: cfg.mem.tokens,
      max_req_input_len: Math.min(cfg.contextLen, cfg.mem.tokens) - 5,
      internal_states: [
        {
          ...args,
          last_gen_throughput: Math.round(stats.lastThroughput * 100) / 100,
          memory_usage: {
            weight: cfg.mem.weightsGb,
            kvcache: cfg.mem.kvGb,
            token_capacity: cfg.mem.tokens,
            graph: cfg.mem.graphGb,
          },
          effective_max_running_requests_per_dp: cfg.maxRunning,
        },
      ],
      version: cfg.flavor === 'j' ? VERSION_J : VERSION_F,
      simulated: true,
    };
  };

  const loads = () => {
    const used = tokensInUse();
    return {
      dp_rank: 0,
      num_running_reqs: active.size,
      num_waiting_reqs: 0,
      num_used_tokens: used,
      max_total_num_tokens: cfg.mem.tokens,
      token_usage: Math.round((used / Math.max(1, cfg.mem.tokens)) * 10000) / 10000,
      gen_throughput: Math.round(stats.lastThroughput * 100) / 100,
      cache_hit_rate: stats.promptTokens ? Math.round((stats.cachedTokens / stats.promptTokens) * 10000) / 10000 : 0,
      utilization: active.size > 0 ? Math.min(1, active.size / cfg.maxRunning) : 0,
      max_running_requests: cfg.maxRunning,
      num_total_reqs: stats.requests,
    };
  };

  const metrics = () => {
    const lbl = `model_name="${cfg.servedModelName}",engine_type="unified",tp_rank="0",pp_rank="0",moe_ep_rank="0"`;
    const g = (name, help, v, type = 'gauge') =>
      `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}{${lbl}} ${v}\n`;
    const hist = (name, help, h) =>
      `# HELP ${name} ${help}\n# TYPE ${name} histogram\n${name}_sum{${lbl}} ${h.sum}\n${h.buckets
        .map((b, i) => `${name}_bucket{le="${b}",${lbl}} ${h.counts[i]}.0\n`)
        .join('')}${name}_bucket{le="+Inf",${lbl}} ${h.count}.0\n${name}_count{${lbl}} ${h.count}.0\n`;
    return (
      g('sglang:num_running_reqs', 'The number of running requests.', active.size) +
      g('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', waiting.length) +
      g('sglang:num_used_tokens', 'The number of used tokens.', tokensInUse()) +
      g('sglang:token_usage', 'The token usage.', (tokensInUse() / Math.max(1, cfg.mem.tokens)).toFixed(4)) +
      g('sglang:gen_throughput', 'The generation throughput (token/s).', stats.lastThroughput.toFixed(2)) +
      g('sglang:max_total_num_tokens', 'Maximum total number of tokens in the KV cache pool.', cfg.mem.tokens) +
      g('sglang:is_cuda_graph', 'Whether the batch is using CUDA graph.', cfg.graphEnabled ? 1 : 0) +
      g('sglang:prompt_tokens_total', 'Number of prefill tokens processed.', `${stats.promptTokens}.0`, 'counter') +
      g('sglang:generation_tokens_total', 'Number of generation tokens processed.', `${stats.genTokens}.0`, 'counter') +
      g('sglang:num_requests_total', 'Number of requests processed.', `${stats.requests}.0`, 'counter') +
      g('sglang:num_aborted_requests_total', 'Number of requests aborted.', `${stats.aborted}.0`, 'counter') +
      g('sglang:cached_tokens_total', 'Number of cached prompt tokens.', `${stats.cachedTokens}.0`, 'counter') +
      hist('sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', ttftHist) +
      hist('sglang:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', itlHist)
    );
  };

  /**
   * Run one generation: log the prefill, pace tokens (TTFT, then TPOT), apply request-time scenarios.
   * `onToken` gets, with the last token, the request's latency in seconds as the model times it (see `modelled`);
   * `onDone` gets it too.
   * @param {{promptKey: string, promptTokens: number, tokens: string[], onToken: (i: number, e2e: number | null) => void,
   *   onDone: (e2e: number) => void, onAbort: () => void, isHealth?: boolean}} g
   */
  function generate(req, res, g) {
    g.arrived ??= Date.now();
    // At most --max-running-requests decode at once (perf.mjs): the others wait for a slot, and their TTFT with them.
    if (running >= srv.perf.maxRunning) {
      const admit = () => generate(req, res, g);
      waiting.push(admit);
      res.on('close', () => {
        const i = waiting.indexOf(admit);
        if (i >= 0) waiting.splice(i, 1);
      });
      return;
    }
    running++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      running--;
      waiting.shift()?.();
    };
    const rid = g.rid;
    const started = Date.now();
    // The TTFT and ITL histograms read a monotonic clock with sub-millisecond resolution: tokens whose timers fire in
    // one turn of a busy event loop are apart by microseconds, which Date.now() rounds to 0 ms (an ITL of 0).
    const startedHr = performance.now();
    let lastTokenHr = startedHr;
    let emitted = 0;
    let closed = false;
    const timers = new Set();
    const at = (ms, fn) => {
      const t = setTimeout(
        () => {
          timers.delete(t);
          fn();
        },
        Math.max(0, started + ms - Date.now()),
      );
      timers.add(t);
    };
    const cancel = () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      active.delete(rid);
      release();
    };
    const cached =
      !cfg.disableRadixCache && seenPrompts.has(g.promptKey)
        ? Math.max(0, Math.floor((g.promptTokens - 1) / cfg.pageSize) * cfg.pageSize)
        : 0;
    seenPrompts.add(g.promptKey);
    g.cached = cached;
    stats.requests++;
    stats.promptTokens += g.promptTokens;
    stats.cachedTokens += cached;
    active.set(rid, { cancel, tokens: () => g.promptTokens + emitted });
    res.on('close', () => {
      if (!closed && emitted < g.tokens.length) {
        closed = true;
        stats.aborted++;
        cancel();
      }
    });
    logPrefill(g.promptTokens - cached, cached, active.size - 1);

    // This request's pace, from the configuration and the decode batch it joins.
    const ttftMs = srv.perf.ttftMs(g.promptTokens - cached);
    const tpotMs = srv.perf.itlMs(Math.min(running, srv.perf.maxRunning));
    const ev = eventAt(srv.events('request'), 'request');
    const hangRequest = () => {
      srv.hung = true;
    };
    // A helper thread's traceback (scenario `thread_traceback`): this request is served as always, and the thread
    // dies after it, on a server that is idle then (nothing else logged after the traceback).
    if (ev?.kind === 'thread_traceback')
      res.once('close', () => setTimeout(() => srv.dead || writeErr(M.helperThreadTraceback()), 50));
    if (ev && ev.sub === 'prefill') {
      if (ev.kind === 'stall') return hangRequest();
      at(Math.max(1, ttftMs / 2), () => srv.crash(srv.crashFor(ev)));
      return;
    }
    const n = g.tokens.length;
    // The latency reported in meta_info.e2e_latency: the time the simulated GPU took (the TTFT and each token's time
    // as the model paces them, after the wait for a slot as it happened), not the wall time this process took to
    // send them: on a busy machine its timers fire late, which a GPU's work would not. A figure read from it (the
    // tuner's, src/bench-load/metrics.ts) then follows the configuration, not the machine (README "Performance model").
    const modelled = (started - g.arrived + ttftMs + Math.max(0, n - 1) * tpotMs) / 1000;
    for (let i = 0; i < n; i++) {
      at(ttftMs + i * tpotMs, () => {
        if (closed || srv.dead) return;
        if (i === 1 && ev && ev.sub === 'decode') {
          cancel();
          if (ev.kind === 'stall') return hangRequest();
          if (ev.kind === 'watchdog_timeout') {
            hangRequest();
            const w = M.watchdogLines(pyFloat(cfg.watchdogTimeout));
            setTimeout(
              () => {
                if (srv.dead) return;
                srv.log.first(w.debug);
                srv.log.first(w.timeout);
                setTimeout(() => srv.die(), 5000 * srv.scale);
              },
              cfg.watchdogTimeout * 1000 * srv.scale,
            );
            return;
          }
          srv.crash(srv.crashFor(ev));
          return;
        }
        emitted = i + 1;
        stats.genTokens++;
        const now = performance.now();
        observe(i === 0 ? ttftHist : itlHist, (now - (i === 0 ? startedHr : lastTokenHr)) / 1000);
        lastTokenHr = now;
        sinceLog++;
        if (i === 0) ensureDecodeLog();
        g.onToken(i, i === n - 1 ? modelled : null);
        if (i === n - 1) {
          closed = true;
          cancel();
          g.onDone(modelled);
        }
      });
    }
    if (n === 0) {
      at(ttftMs, () => {
        closed = true;
        cancel();
        g.onDone(modelled);
      });
    }
  }

  const eos = cfg.profile.eosId;
  const vocab = cfg.profile.vocab;

  // --- native /generate ---------------------------------------------------------------------------------------

  function handleGenerate(req, res, body) {
    const sp = body.sampling_params ?? {};
    const texts = body.text ?? null;
    const ids = body.input_ids ?? null;
    const batch = Array.isArray(texts) || (Array.isArray(ids) && Array.isArray(ids[0]));
    if (batch) {
      const items = Array.isArray(texts) ? texts.map((t) => ({ text: t })) : ids.map((x) => ({ input_ids: x }));
      const results = new Array(items.length);
      let left = items.length;
      if (left === 0) return send(req, res, 200, []);
      items.forEach((it, k) => {
        const fake = { ...body, ...it, stream: false };
        runGenerate(req, res, fake, sp, (r) => {
          results[k] = r;
          left--;
          if (left === 0) send(req, res, 200, results);
        });
      });
      return;
    }
    if (texts === null && ids === null) {
      return send(req, res, 400, { error: { message: 'Either text or input_ids should be provided.' } });
    }
    runGenerate(req, res, body, sp, (r) => send(req, res, 200, r));
  }

  function runGenerate(req, res, body, sp, finish) {
    const prompt = typeof body.text === 'string' ? body.text : '';
    const promptTokens = body.input_ids ? body.input_ids.length : countTokens(prompt) + 1;
    const stop = sp.stop === undefined || sp.stop === null ? null : Array.isArray(sp.stop) ? sp.stop : [sp.stop];
    const maxNew = sp.max_new_tokens ?? 128;
    const p = plan({ prompt, chat: false, maxTokens: maxNew, stop, ignoreEos: !!sp.ignore_eos, eosId: eos, vocab });
    const rid = body.rid ?? randomUUID().replace(/-/g, '');
    const stream = !!body.stream;
    let text = '';
    const meta = (finishReason, e2e, emitted, cached) => ({
      id: rid,
      finish_reason: finishReason,
      prompt_tokens: promptTokens,
      weight_version: cfg.weightVersion,
      total_retractions: 0,
      completion_tokens: emitted,
      cached_tokens: cached,
      ...(e2e !== null ? { e2e_latency: Math.round(e2e * 10000) / 10000 } : {}),
    });
    const g = {
      rid,
      promptKey: body.input_ids ? json(body.input_ids) : prompt,
      promptTokens,
      tokens: p.tokens,
      onToken: (i, e2e) => {
        text += p.tokens[i];
        if (stream) {
          if (i === 0) startStream(req, res);
          const last = i === p.tokens.length - 1;
          safeWrite(
            res,
            `data: ${json({ text, output_ids: p.ids.slice(0, i + 1), meta_info: meta(last ? p.finish : null, last ? e2e : null, i + 1, g.cached) })}\n\n`,
          );
        }
      },
      onDone: (e2e) => {
        if (stream) {
          if (!res.headersSent) {
            startStream(req, res);
            safeWrite(
              res,
              `data: ${json({ text: '', output_ids: [], meta_info: meta(p.finish, e2e, 0, g.cached) })}\n\n`,
            );
          }
          res.end('data: [DONE]\n\n');
        } else {
          finish({ text, output_ids: p.ids, meta_info: meta(p.finish, e2e, p.tokens.length, g.cached) });
        }
      },
    };
    generate(req, res, g);
  }

  // --- OpenAI-compatible ----------------------------------------------------------------------------------------

  function openaiError(req, res, message, code = 400) {
    send(req, res, code, { object: 'error', message, type: 'BadRequestError', param: null, code });
  }

  function handleOpenAI(req, res, body, chat) {
    if (chat && (!Array.isArray(body.messages) || body.messages.length === 0)) {
      return openaiError(
        req,
        res,
        "1 validation error:\n  {'type': 'missing', 'loc': ('body', 'messages'), 'msg': 'Field required'}",
      );
    }
    if (!chat && (body.prompt === undefined || body.prompt === null)) {
      return openaiError(
        req,
        res,
        "1 validation error:\n  {'type': 'missing', 'loc': ('body', 'prompt'), 'msg': 'Field required'}",
      );
    }
    let prompt;
    let promptTokens;
    if (chat) {
      const lastUser =
        [...body.messages].reverse().find((m) => m.role === 'user') ?? body.messages[body.messages.length - 1];
      prompt =
        typeof lastUser.content === 'string'
          ? lastUser.content
          : Array.isArray(lastUser.content)
            ? lastUser.content.map((c) => c.text ?? '').join(' ')
            : '';
      promptTokens = chatPromptTokens(body.messages);
    } else {
      prompt = Array.isArray(body.prompt) ? String(body.prompt[0] ?? '') : String(body.prompt);
      promptTokens = countTokens(prompt) + 1;
    }
    const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? (chat ? null : 16);
    const stop =
      body.stop === undefined || body.stop === null ? null : Array.isArray(body.stop) ? body.stop : [body.stop];
    const p = plan({ prompt, chat, maxTokens, stop, ignoreEos: !!body.ignore_eos, eosId: eos, vocab });
    const rid = randomUUID().replace(/-/g, '');
    const model = body.model ?? cfg.servedModelName;
    const ts = Math.floor(Date.now() / 1000);
    const stream = !!body.stream;
    const includeUsage = !!body.stream_options?.include_usage;
    const reasoning = chat && cfg.reasoningParser ? 'Simulated reasoning by the SGLang stand-in.' : null;
    const reasoningTokens = reasoning ? countTokens(reasoning) : 0;
    const finishReason = p.finish.type === 'length' ? 'length' : 'stop';
    const matched = p.finish.type === 'stop' ? (p.finish.matched ?? null) : null;
    const usage = (completion) => ({
      prompt_tokens: promptTokens,
      total_tokens: promptTokens + completion,
      completion_tokens: completion,
      prompt_tokens_details: cfg.enableCacheReport ? { cached_tokens: g.cached } : null,
      reasoning_tokens: reasoningTokens,
    });
    const object = chat ? 'chat.completion.chunk' : 'text_completion';
    const chunk = (choice, u = null) =>
      `data: ${json({ id: rid, object, created: ts, model, choices: choice ? [choice] : [], usage: u })}\n\n`;
    let text = '';
    const g = {
      rid,
      promptKey: chat ? json(body.messages) : prompt,
      promptTokens,
      tokens: p.tokens,
      onToken: (i) => {
        text += p.tokens[i];
        if (!stream) return;
        if (i === 0) {
          startStream(req, res);
          if (chat) {
            safeWrite(
              res,
              chunk({
                index: 0,
                delta: { role: 'assistant', content: '', reasoning_content: null, tool_calls: null },
                logprobs: null,
                finish_reason: null,
                matched_stop: null,
              }),
            );
            if (reasoning)
              safeWrite(
                res,
                chunk({
                  index: 0,
                  delta: { role: null, content: null, reasoning_content: reasoning, tool_calls: null },
                  logprobs: null,
                  finish_reason: null,
                  matched_stop: null,
                }),
              );
          }
        }
        const tok = chat && i === 0 ? p.tokens[i].replace(/^\s+/, '') : p.tokens[i];
        if (chat)
          safeWrite(
            res,
            chunk({
              index: 0,
              delta: { role: null, content: tok, reasoning_content: null, tool_calls: null },
              logprobs: null,
              finish_reason: null,
              matched_stop: null,
            }),
          );
        else safeWrite(res, chunk({ index: 0, text: tok, logprobs: null, finish_reason: null, matched_stop: null }));
      },
      onDone: () => {
        const content = chat ? text.replace(/^\s+/, '') : text;
        if (stream) {
          if (!res.headersSent) startStream(req, res);
          if (chat)
            safeWrite(
              res,
              chunk({
                index: 0,
                delta: { role: null, content: null, reasoning_content: null, tool_calls: null },
                logprobs: null,
                finish_reason: finishReason,
                matched_stop: matched,
              }),
            );
          else
            safeWrite(
              res,
              chunk({ index: 0, text: '', logprobs: null, finish_reason: finishReason, matched_stop: matched }),
            );
          if (includeUsage) safeWrite(res, chunk(null, usage(p.tokens.length)));
          res.end('data: [DONE]\n\n');
          return;
        }
        const choice = chat
          ? {
              index: 0,
              message: { role: 'assistant', content, reasoning_content: reasoning, tool_calls: null },
              logprobs: null,
              finish_reason: finishReason,
              matched_stop: matched,
            }
          : { index: 0, text: content, logprobs: null, finish_reason: finishReason, matched_stop: matched };
        send(req, res, 200, {
          id: rid,
          object: chat ? 'chat.completion' : 'text_completion',
          created: ts,
          model,
          choices: [choice],
          usage: usage(p.tokens.length),
          metadata: { weight_version: cfg.weightVersion },
        });
      },
    };
    generate(req, res, g);
  }

  // --- routing ------------------------------------------------------------------------------------------------

  const GET = new Set([
    '/health',
    '/health_generate',
    '/model_info',
    '/get_model_info',
    '/server_info',
    '/get_server_info',
    '/v1/models',
    '/get_load',
    '/v1/loads',
    '/metrics',
    '/ping',
    '/flush_cache',
  ]);
  const POST = new Set(['/generate', '/v1/completions', '/v1/chat/completions', '/flush_cache']);

  async function handle(req, res) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (dummy) {
      if (path === '/health' || path === '/health_generate' || path === '/ping')
        return send(req, res, 200, '', 'text/plain');
      return send(req, res, 404, { detail: 'Not Found' });
    }
    const known = GET.has(path) || POST.has(path);
    if (!known || (path === '/metrics' && !cfg.enableMetrics)) return send(req, res, 404, { detail: 'Not Found' });
    const okMethod = (req.method === 'GET' && GET.has(path)) || (req.method === 'POST' && POST.has(path));
    if (!okMethod) return send(req, res, 405, { detail: 'Method Not Allowed' });
    const open = path.startsWith('/health') || path.startsWith('/metrics');
    if (cfg.apiKey && !open && req.headers.authorization !== `Bearer ${cfg.apiKey}`) {
      return send(req, res, 401, { error: 'Unauthorized' });
    }

    if (path === '/health' || path === '/health_generate') {
      if (srv.status === 'draining') {
        srv.log.main('Health check request received during shutdown. Returning 503.');
        return send(req, res, 503, '', 'text/plain');
      }
      if (srv.status !== 'up' && srv.status !== 'unhealthy') return send(req, res, 503, '', 'text/plain');
      if (srv.status === 'unhealthy') return send(req, res, 503, '', 'text/plain');
      if (srv.hung) {
        const tic = new Date();
        setTimeout(() => {
          srv.log.main(
            `Health check failed. Server couldn't get a response from detokenizer for last 20 seconds. tic start time: ${hhmmss(tic)}. last_heartbeat time: ${hhmmss(new Date(srv.startedAt))}`,
          );
          srv.status = 'unhealthy';
          send(req, res, 503, '', 'text/plain');
        }, 20000 * srv.scale);
        return;
      }
      return send(req, res, 200, '', 'text/plain');
    }
    if (path === '/ping') return send(req, res, 200, '', 'text/plain');
    if (path === '/model_info' || path === '/get_model_info') {
      if (path === '/get_model_info') {
        srv.log.main(
          "Endpoint '/get_model_info' is deprecated and will be removed in a future version. Please use '/model_info' instead.",
        );
      }
      return send(req, res, 200, modelInfo());
    }
    if (path === '/server_info' || path === '/get_server_info') {
      if (path === '/get_server_info') {
        srv.log.main(
          "Endpoint '/get_server_info' is deprecated and will be removed in a future version. Please use '/server_info' instead.",
        );
      }
      return send(req, res, 200, serverInfo());
    }
    if (path === '/v1/models') {
      return send(req, res, 200, {
        object: 'list',
        data: [
          {
            id: cfg.servedModelName,
            object: 'model',
            created,
            owned_by: 'sglang',
            root: cfg.servedModelName,
            parent: null,
            max_model_len: cfg.contextLen,
          },
        ],
      });
    }
    if (path === '/get_load') {
      return send(req, res, 200, [
        {
          dp_rank: 0,
          num_reqs: active.size,
          num_waiting_reqs: 0,
          num_tokens: tokensInUse(),
          ts_tic: Date.now() / 1000,
        },
      ]);
    }
    if (path === '/v1/loads') {
      const l = loads();
      return send(req, res, 200, {
        timestamp: new Date().toISOString(),
        version: cfg.flavor === 'j' ? VERSION_J : VERSION_F,
        dp_rank_count: 1,
        loads: [l],
        aggregate: {
          total_running_reqs: l.num_running_reqs,
          total_waiting_reqs: 0,
          total_reqs: l.num_running_reqs,
          avg_token_usage: l.token_usage,
          avg_throughput: l.gen_throughput,
          avg_utilization: l.utilization,
        },
      });
    }
    if (path === '/metrics') return send(req, res, 200, metrics(), 'text/plain; version=0.0.4; charset=utf-8');
    if (path === '/flush_cache') {
      if (active.size > 0) {
        srv.log.first(
          `Cache not flushed because there are pending requests. #queue-req: 0, #running-req: ${active.size}`,
        );
        return send(
          req,
          res,
          400,
          'Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n',
          'text/plain',
        );
      }
      seenPrompts.clear();
      srv.log.first('Cache flushed successfully!');
      return send(
        req,
        res,
        200,
        'Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n',
        'text/plain',
      );
    }

    // POST generation endpoints
    const raw = await readBody(req);
    let body;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch (e) {
      if (path === '/generate') return send(req, res, 400, { error: { message: `Invalid JSON: ${e.message}` } });
      return openaiError(req, res, `Invalid JSON: ${e.message}`);
    }
    if (typeof body !== 'object' || body === null) body = {};
    if (srv.dead) return;
    if (path === '/generate') return handleGenerate(req, res, body);
    return handleOpenAI(req, res, body, path === '/v1/chat/completions');
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) send(req, res, 500, { error: { message: String(e?.message ?? e) } });
    });
  });
  server.keepAliveTimeout = 5000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port, cfg.host, () => {
      server.removeListener('error', reject);
      resolve({
        server,
        logPrefill,
        activeRids: () => [...active.keys()],
        destroyAll: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      });
    });
  });
}
