// Root lines and phases read from what the upstream programs print: a dead worker before the engine's own fatal-error
// line, a task's cancellation under the record that says what failed, transformers' weight loading and JupyterLab's
// frames.
import { describe, expect, it } from 'vitest';
import { diagnoseText } from '../../src/logs/classify/index.ts';
import { lineShape, statesNothing } from '../../src/logs/classify/lineinfo.ts';

const classify = (lines: string[]) => diagnoseText(`${lines.join('\n')}\n`).classification;

describe('root lines', () => {
  it("vLLM's report that a worker died is the root of the engine core's fatal error after it (cut before its exception)", () => {
    expect(statesNothing('ERROR 11-08 11:01:30 [core.py:502] EngineCore encountered a fatal error.')).toBe(true);
    const c = classify([
      'app  | ERROR 11-08 11:01:29 [multiproc_executor.py:135] Worker proc VllmWorker-3 died unexpectedly, shutting down executor.',
      'app  | ERROR 11-08 11:01:30 [core.py:502] EngineCore encountered a fatal error.',
      'app  | ERROR 11-08 11:01:30 [core.py:502] Traceback (most recent call last):',
      'app  | ERROR 11-08 11:01:30 [core.py:502]   File "/x/vllm/v1/engine/core.py", line 493, in run_engine_core',
      'app  | ERROR 11-08 11:01:30 [core.py:502]     engine_core.run_busy_loop()',
    ]);
    expect([c.category, c.evidence[0]?.line]).toEqual(['other', 1]);
  });

  it("a task's CancelledError is not the root over the error record logged with a traceback the excerpt cut", () => {
    const c = classify([
      '  File "/x/uvicorn/lifespan/on.py", line 137, in receive',
      '    return await self.receive_queue.get()',
      'asyncio.exceptions.CancelledError',
      '',
      '2026-02-11 02:15:04.629 1 kserve ERROR [__main__.py:<module>():337] Failed to start model server: Engine core initialization failed. See root cause above.',
      'Traceback (most recent call last):',
      '  File "/x/huggingfaceserver/__main__.py", line 333, in <module>',
      '    model_server.start([model])',
    ]);
    expect(c.evidence[0]?.line).toBe(5);
  });
});

describe('phase from the frames', () => {
  it("transformers' from_pretrained moving each weight to its device with accelerate is weight loading", () => {
    const c = classify([
      'Traceback (most recent call last):',
      '  File "/x/transformers/models/auto/auto_factory.py", line 471, in from_pretrained',
      '  File "/x/transformers/modeling_utils.py", line 3124, in _load_pretrained_model',
      '  File "/x/transformers/modeling_utils.py", line 699, in _load_state_dict_into_meta_model',
      '  File "/x/accelerate/utils/modeling.py", line 399, in set_module_tensor_to_device',
      '    new_value = value.to(device)',
      'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 270.00 MiB',
    ]);
    expect([c.category, c.phase]).toEqual(['cuda_oom', 'weight_load']);
  });

  it("reads JupyterLab's frames, their path a Markdown link, also when the excerpt starts at one", () => {
    const frame =
      'File [~/envs/x/lib/python3.11/site-packages/vllm/worker/cache_engine.py:64](http://host:8888/lab/tree/x/cache_engine.py#line=63), in CacheEngine._allocate_kv_cache(self, num_blocks, device)';
    expect(lineShape(frame)).toMatchObject({ kind: 'frame', func: 'CacheEngine._allocate_kv_cache' });
    const c = classify([
      frame,
      '---> 64         torch.empty(kv_cache_shape,',
      '',
      'OutOfMemoryError: CUDA out of memory.',
    ]);
    expect([c.category, c.phase]).toEqual(['cuda_oom', 'kv_alloc']);
  });

  it("transformers' tokenizer loading (from_pretrained's _from_pretrained) is weight loading, its encode at a request not", () => {
    const tb = (func: string) =>
      classify([
        'Traceback (most recent call last):',
        '  File "/x/text_generation_server/models/__init__.py", line 12, in get_model',
        `  File "/x/transformers/tokenization_utils_base.py", line 2325, in ${func}`,
        '  File "/x/transformers/tokenization_utils_fast.py", line 111, in __init__',
        "ValueError: Non-consecutive added token '<unk>' found. Should have index 32768 but has index 0 in saved vocabulary.",
      ]).phase;
    expect(tb('_from_pretrained')).toBe('weight_load');
    expect(tb('encode')).not.toBe('weight_load');
  });

  it("vLLM V1's scheduler step (Scheduler.schedule) is serving", () => {
    const c = classify([
      // an excerpt that starts at the scheduler's frame (EngineCore.step's frame above it cut)
      '  File "/x/vllm/v1/core/sched/scheduler.py", line 481, in schedule',
      '    assert num_new_tokens > 0',
      'AssertionError',
    ]);
    expect(c.phase).toBe('runtime');
  });

  it("vLLM V0's `Loading model weights took` (and the Gaudi fork's `took in total`) ends the weight load", () => {
    const phaseAfter = (line: string) =>
      classify([line, 'Traceback (most recent call last):', '  File "/x/y.py", line 1, in f', 'RuntimeError: boom'])
        .phase;
    expect(phaseAfter('INFO 02-04 12:35:23 model_runner.py:794] Loading model weights took 15.0465 GB')).toBe(
      'kv_alloc',
    );
    expect(
      phaseAfter(
        'INFO 02-04 12:35:23 hpu_model_runner.py:794] Loading model weights took in total 15.05 GiB of device memory',
      ),
    ).toBe('kv_alloc');
  });
});
