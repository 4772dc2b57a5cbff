// Part src/access: owns who may do what: roles and identities, the Slack access policy, and what an operator may
//   change in a launch.
// May import: clock.ts, config, errors.ts, glob.ts, profiles, single-flight.ts.
//
// Who may do what from Slack: roles granted to user IDs and user groups, channels allow-listed, default deny.
// Decided on signed IDs only (never display names), and again on every click: the clicker is not the launcher.

import type { AccessConfig } from '../config/schema.ts';
import type { GroupDirectory } from './groups.ts';
import { type CommandRule, type Decision, type Identity, type Role, requiredRole } from './roles.ts';

const RANK: Record<Role, number> = { viewer: 1, operator: 2, admin: 3 };

export interface AccessPolicy {
  decide(def: CommandRule, who: Identity): Promise<Decision>;
  roleOf(who: Identity): Promise<Role | null>;
}

const strongest = (a: Role | null, b: Role | null): Role | null => {
  if (!a) return b;
  if (!b) return a;
  return RANK[a] >= RANK[b] ? a : b;
};

export function createAccessPolicy(opts: {
  access: AccessConfig | undefined;
  teamId?: string;
  groups: GroupDirectory;
}): AccessPolicy {
  const { access, groups } = opts;

  async function roleOf(who: Identity, atLeast?: Role): Promise<Role | null> {
    if (!access) return null;
    let role: Role | null = access.users[who.user] ?? null;
    // Only ask Slack about groups when the user's own grant is not already enough.
    for (const [group, groupRole] of Object.entries(access.groups)) {
      if (atLeast && role && RANK[role] >= RANK[atLeast]) break;
      if (role && RANK[role] >= RANK[groupRole]) continue;
      if ((await groups.members(group)).has(who.user)) role = strongest(role, groupRole);
    }
    return strongest(role, access.default_role === 'viewer' ? 'viewer' : null);
  }

  return {
    roleOf: (who) => roleOf(who),
    async decide(def, who) {
      if (!access) {
        return {
          allow: false,
          reason: 'no access policy is configured for Slack',
          hint: 'an admin adds an access: section (users, groups, channels) to the bot config',
        };
      }
      if (opts.teamId && who.team && who.team !== opts.teamId) {
        return { allow: false, reason: `workspace ${who.team} is not the one this bot serves` };
      }
      if (!who.channel || !access.channels.includes(who.channel)) {
        const where = access.channels.map((c) => `<#${c}>`).join(', ');
        return {
          allow: false,
          reason: '/glm is not enabled in this channel',
          hint: where
            ? `use it in ${where}, or ask an admin to add this channel to access.channels`
            : 'ask an admin to add this channel to access.channels',
        };
      }
      const need = requiredRole(def);
      const role = await roleOf(who, need);
      if (role && RANK[role] >= RANK[need]) return { allow: true, reason: `${who.user} is ${role}`, role };
      return {
        allow: false,
        reason: `${def.name} needs the ${need} role; you are ${role ? `a ${role}` : 'not granted any role'}`,
        hint: 'ask an admin to grant it (access.users or access.groups in the bot config)',
      };
    },
  };
}
