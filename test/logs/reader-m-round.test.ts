// The reader's answers for constructs the m- round showed (dev cases), the same whatever wraps or cuts the lines.
import { describe, expect, it } from 'vitest';
import { diagnoseText } from '../../src/logs/classify/index.ts';
import { splitJoined } from '../../src/logs/classify/normalise.ts';
import { diagnose } from './diagnose.ts';

describe('c10::Error backtrace lines', () => {
  // c10/util/Exception.cpp (Error::compute_what): the message, then `Exception raised from f at file:line (most recent
  // call first):` and the C++ frames; they are that message's, not failure records of their own.
  const lines = [
    '[W519 18:43:28.518309000 TCPStore.cpp:350] [c10d] TCP client failed to connect/validate to host h:58159 - retrying (try=0, timeout=1800000ms, delay=610ms): Connection reset by peer',
    'Exception raised from recvBytes at /x/torch/csrc/distributed/c10d/Utils.hpp:676 (most recent call first):',
    'frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 52 (0x103307d1c in libc10.dylib)',
    'frame #1: void c10d::tcputil::recvBytes<unsigned int>(int, unsigned int*, unsigned long) + 476 (0x116b50290 in libtorch_cpu.dylib)',
  ];
  it('are no failure record, bare or behind an ERROR-level wrapper', () => {
    const bare = diagnose(lines);
    const wrapped = diagnose(lines.map((l) => `(EngineCore_DP0 pid=1) ERROR 11-05 12:19:32 [core.py:708] ${l}`));
    expect(bare.category).toBe('none');
    expect(wrapped.category).toBe(bare.category);
  });
});

describe('a paste that indents its lines', () => {
  it('reads an exception line indented by the paste outside a traceback', () => {
    const d = diagnose([
      ' ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=64)',
    ]);
    expect(d.category).toBe('backend_assertion');
    expect(diagnose(['[default0]: ValueError: No valid attention backend found for cuda']).category).toBe(d.category);
  });

  it('takes the blanks before a Ray label off with it', () => {
    const tb = [
      ' (SGLangEngine pid=12589)   File "/x/sglang/srt/layers/sampler.py", line 600, in sampling_from_probs_torch',
      ' (SGLangEngine pid=12589)     sampled_index = torch.multinomial(probs, num_samples=1)',
      ' (SGLangEngine pid=12589) torch.AcceleratorError: CUDA error: device-side assert triggered',
    ];
    expect(diagnose(tb).category).toBe('nan_in_sampling');
    expect(diagnose(tb.map((l) => `ERROR:root:${l}`)).category).toBe('nan_in_sampling');
  });
});

describe("libstdc++'s terminate handler", () => {
  it('reads `  what():  msg` as a C++ exception when the terminate line above it was cut off', () => {
    const whole = diagnose([
      "terminate called after throwing an instance of 'std::runtime_error'",
      '  what():  Unexpected empty grammar stack after accepting piece: [control_36]',
    ]);
    const cut = diagnose(['  what():  Unexpected empty grammar stack after accepting piece: [control_36]']);
    expect(whole.category).toBe('other');
    expect(cut.category).toBe('other');
    expect(cut.root).toBe(whole.root);
  });
});

describe('a joined log split again', () => {
  it("cuts before multiprocessing's `Process <name>:` for a name the parent gave (vLLM's EngineCore_0)", () => {
    expect(
      splitJoined(
        'ERROR 06-11 15:17:13 [core.py:517] AssertionError Process EngineCore_0: Traceback (most recent call last):',
      ),
    ).toEqual([
      'ERROR 06-11 15:17:13 [core.py:517] AssertionError',
      'Process EngineCore_0: Traceback (most recent call last):',
    ]);
  });

  it("reads IPython's `/x/f.py in f(args)` frame as a traceback's, so the exception after a colon-ending source line is a line", () => {
    const pieces = splitJoined(
      '/x/auto_gptq/utils/exllama_utils.py in exllama_set_max_input_length(model, max_input_length)      19     if not model.quantize_config.desc_act: ImportError: /x/exllama_kernels.so: undefined symbol: _ZN3c104cuda9SetDeviceEi',
    );
    expect(pieces?.at(-1)).toBe('ImportError: /x/exllama_kernels.so: undefined symbol: _ZN3c104cuda9SetDeviceEi');
  });

  it("splits THC's check failure and the shell's closing `Killed` off as lines", () => {
    expect(
      splitJoined(
        'Start training from epoch 0. THCudaCheck FAIL file=/x/a.cu line=202 error=701 : too many resources requested for launch',
      ),
    ).toEqual([
      'Start training from epoch 0.',
      'THCudaCheck FAIL file=/x/a.cu line=202 error=701 : too many resources requested for launch',
    ]);
    expect(splitJoined('Refiner unloaded. model_type EPS adm 2816 Killed')).toEqual([
      'Refiner unloaded. model_type EPS adm 2816',
      'Killed',
    ]);
  });
});

describe('an exception line hard-wrapped inside a word', () => {
  it('is one line: the exception line is the root of what its cut-off end matches', () => {
    const d = diagnose([
      'torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 42173, useIpv6: false, code: -98, name: EAD',
      'DRINUSE, message: address already in use',
    ]);
    expect(d.category).toBe('port_in_use');
    expect(d.root).toMatch(/^torch\.distributed\.DistNetworkError: /);
  });
});

describe("a test runner's stream label and a death before a traceback", () => {
  it("takes accelerate's `stderr: ` label off a child's lines (print(label, line))", () => {
    const d = diagnose([
      'stderr:   File "/x/torch/distributed/launcher/api.py", line 250, in launch_agent',
      'stderr:     raise ChildFailedError(',
      'stderr: torch.distributed.elastic.multiprocessing.errors.ChildFailedError:',
      'stderr: ============================================================',
    ]);
    expect(d.root).toBe('stderr: torch.distributed.elastic.multiprocessing.errors.ChildFailedError:');
  });

  it('roots a traceback cut before its exception in the death reported before it', () => {
    const d = diagnose([
      '(APIServer pid=150) ERROR 09-13 18:40:28 [multiproc_executor.py:398] Rank 2 scheduler is dead. Please check if there are relevant logs.',
      '(APIServer pid=150) ERROR 09-13 18:40:28 [multiproc_executor.py:400] Exit code: -9',
      '(APIServer pid=150) ERROR 09-13 18:40:28 [stage_runtime.py:257] [StageRuntime] Stage initialization failed; shutting down 0 initialized client(s)',
      '(APIServer pid=150) ERROR 09-13 18:40:28 [stage_runtime.py:257] Traceback (most recent call last):',
      '(APIServer pid=150) ERROR 09-13 18:40:28 [stage_runtime.py:257]   File "/x/vllm_omni/engine/stage_runtime.py", line 244, in initialize',
    ]);
    expect(d.category).toBe('other');
    expect(d.root).toMatch(/Exit code: -9$/);
  });
});

describe('a joined log behind a stream label', () => {
  it('splits before each `stderr: ` the first line starts with', () => {
    expect(
      splitJoined(
        'stderr:     raise ChildFailedError( stderr: torch.distributed.elastic.multiprocessing.errors.ChildFailedError:',
      ),
    ).toEqual([
      'stderr:     raise ChildFailedError(',
      'stderr: torch.distributed.elastic.multiprocessing.errors.ChildFailedError:',
    ]);
  });
});

describe('phase from what a record or a frame names', () => {
  it("reads the worker method a root line names as the frame it ran (vLLM's `while processing method`)", () => {
    const d = diagnoseText(
      'ERROR 09-27 05:20:38 multiproc_worker_utils.py:233] Exception in worker VllmWorkerProcess while processing method determine_num_available_blocks: CUDA out of memory. Tried to allocate 19.63 GiB.\n',
    ).classification;
    expect([d.category, d.phase]).toEqual(['cuda_oom', 'kv_alloc']);
  });

  it("reads vLLM's initialize_ray_cluster as distributed init (startup)", () => {
    const d = diagnoseText(
      [
        'Traceback (most recent call last):',
        '  File "/x/vllm/engine/async_llm_engine.py", line 357, in from_engine_args',
        '    initialize_ray_cluster(engine_config.parallel_config)',
        '  File "/x/vllm/executor/ray_utils.py", line 106, in initialize_ray_cluster',
        '    raise ValueError(',
        'ValueError: The number of required GPUs exceeds the total',
        '',
      ].join('\n'),
    ).classification;
    expect(d.phase).toBe('startup');
  });
});

describe("vLLM's API server echoing an engine core failure", () => {
  it('names no phase by its output handler, after the core’s own traceback', () => {
    const d = diagnoseText(
      [
        'ERROR 06-11 15:17:13 [core.py:517]   File "/x/vllm/attention/backends/torch_sdpa.py", line 558, in forward',
        'ERROR 06-11 15:17:13 [core.py:517]     assert not self.need_mask',
        'ERROR 06-11 15:17:13 [core.py:517] AssertionError',
        'ERROR 06-11 15:17:13 [async_llm.py:420] AsyncLLM output_handler failed.',
        'ERROR 06-11 15:17:13 [async_llm.py:420] Traceback (most recent call last):',
        'ERROR 06-11 15:17:13 [async_llm.py:420]   File "/x/vllm/v1/engine/async_llm.py", line 379, in output_handler',
        'ERROR 06-11 15:17:13 [async_llm.py:420]     outputs = await engine_core.get_output_async()',
        '',
      ].join('\n'),
    ).classification;
    expect(d.phase).toBe('unknown');
  });
});
