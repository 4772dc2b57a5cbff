// A bot restarted while a crash was being written, over a real sshd: its follower resumes at the saved byte offset
// and reads the log before it as context, so a traceback that began before the restart and ends after it is named
// from all of its frames, with its own exception line as the root. A ready attempt's follow reads on as a serving
// server's log even when its ready line is further back than that context: another client's bad request is no crash.
import { appendFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { headNode, saveOffset } from '../../src/lifecycle/nodes.ts';
import { resumeWatches } from '../../src/lifecycle/resume.ts';
import { CONTEXT_BYTES } from '../../src/lifecycle/watch.ts';
import { freshDirs, makeBot, testConfig, until } from '../helpers/app.ts';
import { freePort } from '../helpers/sshd.ts';
import { sshdWithBots } from '../helpers/sshd-bots.ts';

const shared = sshdWithBots();

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A scheduler's traceback through torch.distributed: only its frames say the exception came from a collective.
const BEFORE = [
  '[2026-12-01 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):',
  '  File "/x/sglang/srt/managers/scheduler.py", line 1, in event_loop_normal',
  '    result = self.run_batch(batch)',
  '  File "/x/sglang/srt/distributed/parallel_state.py", line 2, in all_reduce',
  '    torch.distributed.all_reduce(input_, group=self.device_group)',
  '  File "/x/torch/distributed/distributed_c10d.py", line 3, in all_reduce',
  '    work = group.allreduce([tensor], opts)',
];
const AFTER = ['RuntimeError: unhandled system error', '[2026-12-01 10:00:01] Received sigquit from a child process.'];

describe('resuming a follower after a bot restart', () => {
  it('primes the classifier with the log before the saved offset: a traceback split by the restart is read whole', async () => {
    const dirs = freshDirs();
    const loaded = testConfig(shared.sshd, dirs);
    const first = shared.keep(makeBot(loaded, dirs));
    const r = await first.run(`launch small --no-check --port ${await freePort()}`);
    expect(r.exitCode).toBe(0);
    const id = first.app.engine.attempts.activeOn('gpu')!.id;
    const logPath = first.app.engine.attempts.get(id)!.logPath!;
    // The traceback starts; the bot handles it up to here and goes down.
    appendFileSync(logPath, `${BEFORE.join('\n')}\n`);
    await first.app.close();

    const second = shared.keep(makeBot(loaded, dirs));
    const engine = second.app.engine;
    // The offset the first bot saved last: every byte written so far was handled.
    saveOffset(engine, headNode(engine.attempts.get(id)!), statSync(logPath).size);
    const events: string[] = [];
    expect(await resumeWatches(engine, (e) => events.push(e.kind), second.app.diagnoser)).toBe(1);
    await wait(500);
    appendFileSync(logPath, `${AFTER.join('\n')}\n`);
    // The crash ends the server, as it would: a ready server that still served would be asked and no crash told
    // (early-alert.ts).
    process.kill(-engine.attempts.get(id)!.pgid!, 'SIGKILL');

    await until(() => engine.attempts.get(id)?.classification != null, 15_000);
    const c = engine.attempts.get(id)!.classification as {
      category: string;
      phase: string;
      evidence: Array<{ text: string }>;
    };
    expect(c.category).toBe('nccl_error');
    expect(c.phase).toBe('runtime');
    expect(c.evidence[0]?.text).toBe('RuntimeError: unhandled system error');
    // The context lines were read, not handled again: no milestone or progress event came from them.
    expect(events).toEqual([]);
  }, 60_000);

  it("reads a ready attempt's log on as a serving server's, though the ready line is before the context window", async () => {
    const dirs = freshDirs();
    const loaded = testConfig(shared.sshd, dirs);
    const first = shared.keep(makeBot(loaded, dirs));
    const r = await first.run(`launch small --no-check --port ${await freePort()}`);
    expect(r.exitCode).toBe(0);
    const id = first.app.engine.attempts.activeOn('gpu')!.id;
    expect(first.app.engine.attempts.get(id)!.status).toBe('ready');
    const logPath = first.app.engine.attempts.get(id)!.logPath!;
    await first.app.close();
    // Hours later, the load balancer's health probes answered: the ready line is further back than the context a
    // resumed follow reads again, and nothing in that context says the server serves.
    const probe = '[2026-12-01 11:00:00] INFO:     10.0.0.9:40112 - "GET /health HTTP/1.1" 200 OK\n';
    appendFileSync(logPath, probe.repeat(Math.ceil((CONTEXT_BYTES * 2) / probe.length)));

    const second = shared.keep(makeBot(loaded, dirs));
    const engine = second.app.engine;
    saveOffset(engine, headNode(engine.attempts.get(id)!), statSync(logPath).size);
    expect(await resumeWatches(engine, () => {}, second.app.diagnoser)).toBe(1);
    await wait(500);
    // Another client's bad request, which the server answers with an error and serves on after.
    appendFileSync(
      logPath,
      [
        '[2026-12-01 11:00:01] ERROR:    Exception in ASGI application',
        'Traceback (most recent call last):',
        '  File "/x/sglang/srt/entrypoints/http_server.py", line 400, in openai_v1_chat_completions',
        '    return await raw_request.app.state.openai_serving_chat.handle_request(request, raw_request)',
        "ValueError: Unknown tool_choice 'required2'",
        '',
      ].join('\n'),
    );
    // Long enough for the follower to read those lines and for an early alert on them to settle.
    await wait(1500);
    expect(engine.attempts.get(id)?.classification ?? null).toBeNull();
    const crash = 'RuntimeError: CUDA error: an illegal memory access was encountered';
    appendFileSync(
      logPath,
      [
        '[2026-12-01 11:00:02 TP0] Scheduler hit an exception: Traceback (most recent call last):',
        '  File "/x/sglang/srt/managers/scheduler.py", line 1, in event_loop_normal',
        '    result = self.run_batch(batch)',
        crash,
        '',
      ].join('\n'),
    );
    process.kill(-engine.attempts.get(id)!.pgid!, 'SIGKILL');
    await until(() => engine.attempts.get(id)?.classification != null, 15_000);
    const c = engine.attempts.get(id)!.classification as { category: string; evidence: Array<{ text: string }> };
    expect(c.category).toBe('illegal_memory_access');
    expect(c.evidence[0]?.text).toBe(crash);
  }, 60_000);
});
