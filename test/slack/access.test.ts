// Access policy: roles from user IDs and user groups, channels allow-listed, default deny, group lookups cached.
import { describe, expect, it } from 'vitest';
import { createGroupDirectory } from '../../src/access/groups.ts';
import { createAccessPolicy } from '../../src/access/policy.ts';
import { AccessSchema } from '../../src/config/schema.ts';
import type { CommandDef } from '../../src/runtime/define.ts';

const cmd = (name: string, effect: 'read' | 'write', role?: 'admin'): Pick<CommandDef, 'name' | 'effect' | 'role'> => ({
  name,
  effect,
  role,
});

function setup(raw: unknown, members: Record<string, string[]> = {}) {
  let t = 0;
  const lookups: string[] = [];
  let fail = false;
  const groups = createGroupDirectory(
    {
      list: async (g) => {
        lookups.push(g);
        if (fail) throw new Error('slack down');
        return members[g] ?? [];
      },
    },
    { ttlMs: 1000, clock: { now: () => t, sleep: async () => {} } },
  );
  const policy = createAccessPolicy({ access: AccessSchema.parse(raw), teamId: 'T1', groups });
  return {
    policy,
    lookups,
    advance: (ms: number) => {
      t += ms;
    },
    breakSlack: () => {
      fail = true;
    },
  };
}

const at = (user: string, channel = 'COPS', team = 'T1') => ({ user, channel, team });

describe('access policy', () => {
  const access = {
    users: { UADMIN: 'admin', UOP: 'operator', UVIEW: 'viewer' },
    groups: { SGPU: 'operator' },
    channels: ['COPS'],
  };

  it('roles: viewers read, operators change things, admins also audit; others get nothing', async () => {
    const { policy } = setup(access, { SGPU: ['UG'] });
    const read = cmd('status', 'read');
    const write = cmd('launch', 'write');
    const admin = cmd('audit', 'read', 'admin');
    expect((await policy.decide(read, at('UVIEW'))).allow).toBe(true);
    expect((await policy.decide(write, at('UVIEW'))).allow).toBe(false);
    expect((await policy.decide(write, at('UOP'))).allow).toBe(true);
    expect((await policy.decide(write, at('UG'))).allow).toBe(true);
    expect((await policy.decide(admin, at('UOP'))).reason).toBe('audit needs the admin role; you are a operator');
    expect((await policy.decide(admin, at('UADMIN'))).allow).toBe(true);
    const nobody = await policy.decide(read, at('UNOBODY'));
    expect(nobody).toMatchObject({
      allow: false,
      reason: 'status needs the viewer role; you are not granted any role',
    });
  });

  it('channels are allow-listed and other workspaces refused, whatever the role', async () => {
    const { policy } = setup(access);
    const d = await policy.decide(cmd('status', 'read'), at('UADMIN', 'CELSE'));
    expect(d).toMatchObject({ allow: false, reason: '/glm is not enabled in this channel' });
    expect(d.hint).toContain('<#COPS>');
    expect((await policy.decide(cmd('status', 'read'), at('UADMIN', 'COPS', 'T2'))).allow).toBe(false);
  });

  it('default_role viewer lets anyone in an allowed channel look, never change', async () => {
    const { policy } = setup({ ...access, default_role: 'viewer' });
    expect((await policy.decide(cmd('status', 'read'), at('UANY'))).allow).toBe(true);
    expect((await policy.decide(cmd('stop', 'write'), at('UANY'))).allow).toBe(false);
  });

  it('without an access section nobody may do anything', async () => {
    const policy = createAccessPolicy({ access: undefined, groups: { members: async () => new Set() } });
    const d = await policy.decide(cmd('help', 'read'), at('UADMIN'));
    expect(d.allow).toBe(false);
    expect(d.hint).toMatch(/access: section/);
  });

  it('user groups are looked up once per cache period, only when needed, and survive a Slack hiccup', async () => {
    const s = setup(access, { SGPU: ['UG'] });
    await Promise.all(Array.from({ length: 20 }, () => s.policy.decide(cmd('launch', 'write'), at('UG'))));
    expect(s.lookups).toEqual(['SGPU']);
    await s.policy.decide(cmd('launch', 'write'), at('UOP')); // already an operator: no lookup
    expect(s.lookups).toEqual(['SGPU']);
    s.advance(1500);
    s.breakSlack();
    expect((await s.policy.decide(cmd('launch', 'write'), at('UG'))).allow).toBe(true); // stale answer kept
    expect(s.lookups).toEqual(['SGPU', 'SGPU']);
  });

  it('rejects malformed IDs in the config', () => {
    expect(AccessSchema.safeParse({ users: { alice: 'admin' } }).success).toBe(false);
    expect(AccessSchema.safeParse({ users: { U1AB: 'root' } }).success).toBe(false);
  });
});
