// The reader's answers for constructs the n- round showed (dev cases), built from constructed lines: the same whatever
// wraps, interleaves, fences, joins or cuts them.
import { describe, expect, it } from 'vitest';
import { diagnoseText } from '../../src/logs/classify/index.ts';
import { displayText } from '../../src/logs/classify/lineinfo.ts';
import { splitJoined } from '../../src/logs/classify/normalise.ts';
import { diagnose } from './diagnose.ts';

const VLLM = (l: string) => `(EngineCore_DP0 pid=1) ERROR 11-05 12:19:32 [core.py:708] ${l}`;
const PYLOG = (l: string) => `ERROR:root:${l}`;

describe("NCCL's return trace after its WARN", () => {
  // src/include/checks.h NCCLCHECK: the WARN where the call failed, then one `NCCL INFO file.cc:line -> code` per
  // frame it unwinds (of one process or several), then the scheduler's traceback, cut after its header
  const lines = [
    'gpu-a:211:905 [3] socket.c:485 NCCL WARN socketStartConnect: Connect to 10.1.2.3<40001> failed : Connection refused',
    'gpu-a:211:905 [3] NCCL INFO transport/net.cc:687 -> 2',
    'gpu-a:208:208 [0] NCCL INFO transport.cc:183 -> 2',
    'gpu-a:208:208 [0] NCCL INFO init.cc:1263 -> 2',
    'gpu-a:209:209 [1] NCCL INFO init.cc:1548 -> 2',
    'gpu-a:209:209 [1] NCCL INFO init.cc:1799 -> 2',
    '[2025-06-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):',
  ];
  it('leaves the WARN the record the traceback was logged with, bare or behind an ERROR-level wrapper', () => {
    for (const wrap of [(l: string) => l, VLLM, PYLOG]) {
      const d = diagnose(lines.map(wrap));
      expect(d.category).toBe('nccl_error');
      expect(displayText(d.root ?? '')).toContain('NCCL WARN socketStartConnect');
    }
  });
});

describe("an exception message's next lines", () => {
  const head = [
    'Traceback (most recent call last):',
    '  File "/x/app/run.py", line 15, in main',
    '    raise RuntimeError("the worker stopped")',
    'RuntimeError: the worker stopped',
    ' rank=0',
  ];
  const after = [
    '2025-06-01T10:00:00.123456Z ERROR launcher: Shard 1 failed to start:',
    '/x/site-packages/bitsandbytes/cuda_setup/main.py:145: UserWarning: ',
    'WARNING: Compute capability < 7.5 detected! Only slow 8-bit matmul is supported',
  ];
  it("end at a warning: a line of its own, whose words (`Compute capability`) are not the exception's", () => {
    const d = diagnose([...head, ...after]);
    expect(d.category).toBe('other');
    expect(d.root).toBe('RuntimeError: the worker stopped');
    // another rank's record printed after the exception line leaves the same answer
    const interleaved = [
      ...head.slice(0, 4),
      '[2025-06-01 10:00:00 TP7] Cache flushed successfully!',
      ...head.slice(4),
    ];
    expect(diagnose([...interleaved, ...after]).category).toBe(d.category);
  });

  it("end at a line that opens with a record's date and time", () => {
    const d = diagnose([...head, '2025-06-01 10:00:00 launcher: the pool reports sm_80 or newer']);
    expect(d.root).toBe('RuntimeError: the worker stopped');
  });
});

describe("a reporter's prose above ranks' records", () => {
  const ranks = [
    '[rank3]:[W208 00:55:32.444 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=103) timed out after 1800000ms',
    '[rank4]:[W208 00:55:32.445 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=104) timed out after 1800000ms',
    '[2025-02-08 00:55:32 TP5] Scheduler hit an exception: Traceback (most recent call last):',
    '  File "/x/sglang/srt/managers/scheduler.py", line 1787, in run_scheduler_process',
    '    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)',
  ];
  it('leaves the first rank’s record the one the traceback was logged with, as without the prose', () => {
    const bare = diagnose(ranks);
    const pasted = diagnose(['When I start the server I get this error:', '', '```log', ...ranks, '```']);
    expect(displayText(bare.root ?? '')).toContain('fd=103');
    expect(displayText(pasted.root ?? '')).toBe(displayText(bare.root ?? ''));
  });
});

describe('a joined log', () => {
  it("splits before ROCm's memory access fault line", () => {
    const pieces = splitJoined(
      '(Worker_TP3 pid=891) [aiter] import [module_x] under /x/aiter/jit/module_x.so Memory access fault by GPU node-3 (Agent handle: 0x13e852f0) on address 0x77d445e00000. Reason: Unknown.',
    );
    expect(pieces?.[pieces.length - 1]).toBe(
      'Memory access fault by GPU node-3 (Agent handle: 0x13e852f0) on address 0x77d445e00000. Reason: Unknown.',
    );
  });

  it("splits before Ray's daemon labels and at its driver's tab-separated records", () => {
    expect(
      splitJoined(
        '2024-05-08 14:22:55,479\tINFO worker.py:1564 -- Connecting to existing Ray cluster at address: 10.0.0.2:6379... 2024-05-08 14:22:55,484\tINFO worker.py:1740 -- Connected to Ray cluster. (raylet) The node with node id: abc has been marked dead because the detector has missed too many heartbeats from it.',
      ),
    ).toEqual([
      '2024-05-08 14:22:55,479\tINFO worker.py:1564 -- Connecting to existing Ray cluster at address: 10.0.0.2:6379...',
      '2024-05-08 14:22:55,484\tINFO worker.py:1740 -- Connected to Ray cluster.',
      '(raylet) The node with node id: abc has been marked dead because the detector has missed too many heartbeats from it.',
    ]);
  });

  it('keeps a line whole whose quote opens right after a launcher label', () => {
    expect(
      splitJoined('3: "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 786.00 MiB"'),
    ).toBeNull();
    expect(
      splitJoined('[default0]:"ValueError: The model\'s max seq len (4096) is larger than the KV cache"'),
    ).toBeNull();
  });
});

describe('an excerpt cut inside its first line', () => {
  const rest = [
    'libfoo.so.3: cannot open shared object file: No such file or directory',
    'INFO 04-23 19:30:01 foo_utils.py:18] It is expected if you are not running on this device.',
    '(Worker pid=12) ERROR 04-23 19:30:04 foo.py:53] Failed to load foo library from libfoo.so.3 .It is expected if you are not running on this device.',
    '(Worker pid=12) INFO 04-23 19:30:04 foo_utils.py:17] Failed to import foo library: libfoo.so.3: cannot open shared object file: No such file or directory',
  ];
  it('is the message a later line states whole at INFO: no failure record of its own', () => {
    const whole = [`INFO 04-23 19:30:01 foo_utils.py:17] Failed to import foo library: ${rest[0]}`, ...rest.slice(1)];
    const cut = diagnose(rest);
    expect(displayText(cut.root ?? '')).toContain('Failed to load foo library');
    expect(displayText(cut.root ?? '')).toBe(displayText(diagnose(whole).root ?? ''));
  });

  it('keeps what its words state when no later line repeats them', () => {
    const d = diagnose([
      'f00, local_nic: mlx5_2, peer_nic: 10.0.2.9:15992@mlx5_1, dest_rkey: 214, retry_cnt: 0): local protection error',
      'I0724 03:14:20.702893 104002 worker_pool.cpp:303] Marking the device inactive',
    ]);
    expect(d.root).toContain('local protection error');
  });
});

describe("an exception message's next lines carry its line's front", () => {
  it('end at a record of another kind or another process, and at multiprocessing’s `Process X:` line', () => {
    const own = diagnose([
      '  File "/x/app/dist.py", line 256, in check',
      '    raise RuntimeError(f"worker stopped: {code}")',
      'RuntimeError: worker stopped: 3',
      'INFO 04-22 18:37:21 [multiproc_worker_utils.py:124] Killing workers, minimum capability: 80',
      'Process Process-1:',
    ]);
    // (the INFO line's words, read as more of the message, would name a GPU architecture refused)
    expect([own.category, own.root]).toEqual(['other', 'RuntimeError: worker stopped: 3']);
    // the same front on every line of one record (vLLM's logger) is that record's message going on
    const vllm = (l: string) => `(VllmWorker rank=0 pid=41) ERROR 08-06 22:23:09 [multiproc_executor.py:487] ${l}`;
    const other =
      '(VllmWorker rank=2 pid=45) ERROR 08-06 22:23:09 [multiproc_executor.py:487] WorkerProc failed to start.';
    const d = diagnoseText(
      [vllm('  File "/x/app/dist.py", line 256, in check'), vllm('RuntimeError: worker stopped: 3'), other, ''].join(
        '\n',
      ),
    );
    expect(d.classification.summary).not.toContain('WorkerProc');
  });
});

describe('phases the n- round showed', () => {
  const phaseOf = (lines: string[]) => diagnoseText([...lines, ''].join('\n')).classification.phase;

  it("reads torch.distributed's process-group helper and vLLM V0's AsyncLLMEngine constructor as start-up", () => {
    expect(
      phaseOf([
        '  File "/x/torch/distributed/distributed_c10d.py", line 1744, in _new_process_group_helper',
        '    backend_class = ProcessGroupGloo(',
        'torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /default_pg/0//cpu//0/2',
      ]),
    ).toBe('startup');
    expect(
      phaseOf([
        'RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)',
        'Process Process-1:',
        'Traceback (most recent call last):',
        '  File "/x/vllm/engine/async_llm_engine.py", line 381, in __init__',
        '    self.engine = self._init_engine(*args, **kwargs)',
      ]),
    ).toBe('startup');
  });

  it("reads the serving loop's done-callback and V1's step output copy as runtime", () => {
    expect(
      phaseOf([
        'Traceback (most recent call last):',
        '  File "/x/engine/async_engine.py", line 31, in _raise_exception_on_finish',
        '    raise AsyncEngineDeadError(',
        'engine.AsyncEngineDeadError: Task finished unexpectedly.',
      ]),
    ).toBe('runtime');
    expect(
      phaseOf([
        '  File "/x/vllm/v1/worker/gpu/async_utils.py", line 168, in get_output',
        '    self.copy_event.synchronize()',
        'torch.AcceleratorError: CUDA error: device-side assert triggered',
      ]),
    ).toBe('runtime');
  });

  it("reads llama.cpp's KV cache line as the KV cache allocated", () => {
    expect(
      phaseOf([
        'llama_new_context_with_model: KV self size  = 512.00 MiB, K (f16): 256.00 MiB, V (f16): 256.00 MiB',
        'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144.00 MiB on device 0: cudaMalloc failed: out of memory',
      ]),
    ).toBe('kv_alloc');
    expect(
      phaseOf([
        'llama_kv_cache_unified:      CUDA0 KV buffer size =   256.00 MiB',
        'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144.00 MiB on device 0: cudaMalloc failed: out of memory',
      ]),
    ).toBe('kv_alloc');
  });
});

describe("Ray's cluster joined", () => {
  it('is a start-up milestone: the ranks joining the cluster they run on', () => {
    const d = diagnoseText(
      [
        '2024-05-08 14:22:55,479\tINFO worker.py:1564 -- Connecting to existing Ray cluster at address: 10.0.0.2:6379...',
        '(raylet) The node with node id: abc and address: 10.0.0.5 has been marked dead because the detector has missed too many heartbeats from it.',
        '',
      ].join('\n'),
    );
    expect(d.classification.phase).toBe('startup');
  });

  it("is not NCCL's communicator set-up, which a first collective can run at any step", () => {
    const d = diagnoseText(
      [
        'gpu-a:412:433 [0] NCCL INFO init.cc:1014 -> 3',
        '[rank1]: Traceback (most recent call last):',
        '[rank1]:   File "/x/app/test.py", line 8, in <module>',
        '[rank1]:     dist.all_reduce(data, op=dist.ReduceOp.SUM)',
        '[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, internal error',
        '',
      ].join('\n'),
    );
    expect(d.classification.phase).toBe('unknown');
  });
});
