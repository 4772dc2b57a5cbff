// Roles and the decisions made with them: who asked (a chat platform's signed identity), what a command's effect
// needs, and the verdict. The command runtime (src/runtime) attaches them to command definitions; the lifecycle
// carries the asker's role to what a launch may change (src/access/operator.ts).

/** read: looks only. write: changes a server or shared state (launch, stop), so it needs an operator. */
export type Effect = 'read' | 'write';

/** Roles, weakest first. A command needs `def.role`, else operator for write and viewer for read. */
export type Role = 'viewer' | 'operator' | 'admin';

/** Who asked, as a chat platform vouches for it (Slack: signed IDs, never display names). */
export interface Identity {
  user: string;
  team?: string;
  channel?: string;
  /** How the request came: a typed command, a button, a modal. */
  via?: 'command' | 'button' | 'modal';
}

export interface Decision {
  allow: boolean;
  /** Why, for the audit log and the person refused. */
  reason: string;
  /** How to get access. */
  hint?: string;
  /** The asker's role, when allowed: what a command may let them change (src/access/operator.ts). */
  role?: Role;
}

/** What a decision needs of a command: its name, its effect and the role it asks for, if any. */
export interface CommandRule {
  name: string;
  effect: Effect;
  /** Minimum role from chat; default operator for write, viewer for read. */
  role?: Role;
}

export function requiredRole(def: Pick<CommandRule, 'effect' | 'role'>): Role {
  return def.role ?? (def.effect === 'write' ? 'operator' : 'viewer');
}
