// Issue 11, round 5: where a request that failed ends and a broken server begins, whose report of a death is the root,
// and what a configuration refused really says. Each case is built from the documented messages the rules name.
import { describe, expect, it } from 'vitest';
import { diagnoseText } from '../../src/logs/classify/index.ts';

const READY = [
  '[2025-11-05 12:00:00] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16',
  '[2025-11-05 12:00:06] The server is fired up and ready to roll!',
];

function diagnose(lines: string[]) {
  const d = diagnoseText([...lines, ''].join('\n'));
  return { category: d.classification.category, root: d.classification.evidence[0]?.text, reason: d.reason };
}

const API = '(APIServer pid=1) ERROR 05-12 01:48:42 [api_router.py:72] ';
const engineDead = [
  `${API}Traceback (most recent call last):`,
  `${API}  File "/x/vllm/entrypoints/openai/chat_completion/serving.py", line 225, in render_chat_request`,
  `${API}    raise self.engine_client.dead_error`,
  `${API}vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.`,
  '(APIServer pid=1) INFO:     10.1.6.81:16983 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
  '(APIServer pid=1) INFO:     Shutting down',
];

describe('a server whose engine is dead is broken, whatever it still answers', () => {
  it("vLLM's EngineDeadError, answered 500 after it, is a crash with that line as the root", () => {
    const d = diagnose([...READY, ...engineDead]);
    expect(d.category, d.reason).toBe('other');
    expect(d.root).toContain('EngineDeadError');
  });

  it("the engine core's own error, when the log has it, names the crash", () => {
    const core = [
      '(EngineCore_DP0 pid=9) ERROR 05-12 01:48:41 [core.py:708] EngineCore encountered a fatal error.',
      '(EngineCore_DP0 pid=9) ERROR 05-12 01:48:41 [core.py:708] Traceback (most recent call last):',
      '(EngineCore_DP0 pid=9) ERROR 05-12 01:48:41 [core.py:708]   File "/x/vllm/v1/engine/core.py", line 701, in run_engine_core',
      '(EngineCore_DP0 pid=9) ERROR 05-12 01:48:41 [core.py:708]     engine_core.run_busy_loop()',
      '(EngineCore_DP0 pid=9) ERROR 05-12 01:48:41 [core.py:708] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.',
    ];
    expect(diagnose([...READY, ...core, ...engineDead]).category).toBe('cuda_oom');
  });

  it("the NVIDIA driver's Xid is a GPU fault: a crash, its line the root", () => {
    const xid = 'NVRM: Xid (PCI:0000:01:00): 8, pid=48694, name=python3, channel 0x00000008';
    const d = diagnose([...READY, 'NVRM: krcWatchdog_IMPL: RC watchdog: GPU is probably locked!', xid]);
    expect(d.category, d.reason).toBe('other');
    expect(d.root).toBe(xid);
  });
});

describe('whose report of a death is the root', () => {
  it("PyTorch's monitored barrier naming the faulty rank, after a launcher's sigquit, is the process group's failure", () => {
    const gloo =
      '[rank3]:[E421 04:13:43.426633564 ProcessGroupGloo.cpp:143] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.';
    const d = diagnose([
      '[2025-04-21 04:13:43] Received sigquit from a child process. It usually means the child failed.',
      gloo,
      '[2025-04-21 04:13:43 TP3] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/x/sglang/srt/managers/scheduler.py", line 2056, in run_scheduler_process',
      '    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)',
    ]);
    expect(d.category, d.reason).toBe('nccl_error');
    expect(d.root).toBe(gloo);
  });
});
