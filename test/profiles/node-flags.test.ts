// The multi-node flags belong to the bot: it renders them per node (each node's rank, the head's address and a port
// found free there). A profile that sets them itself would launch every node as the same rank.
import { describe, expect, it } from 'vitest';
import { checkExtraArgs } from '../../src/profiles/checks.ts';

describe('multi-node flags in extra_args', () => {
  it('are refused, each with how to launch on several hosts instead', () => {
    const issues = checkExtraArgs('p.yaml', ['--nnodes', '2', '--node-rank=1', '--dist-init-addr', '10.0.0.1:5000']);
    expect(issues.map((i) => i.message)).toEqual([
      '--nnodes is set by the bot for each node of a multi-node launch',
      '--node-rank is set by the bot for each node of a multi-node launch',
      '--dist-init-addr is set by the bot for each node of a multi-node launch',
    ]);
    expect(issues[0]!.fix).toMatch(/--host GROUP/);
  });

  it('leave other flags alone', () => {
    expect(checkExtraArgs('p.yaml', ['--enable-cache-report', '--dist-timeout', '600'])).toEqual([]);
  });
});
