// Attempts: every launch, with what ran, where, by whom, and how it ended. The table the team kept by hand.
import { UserError } from '../errors.ts';
import type { Db } from './db.ts';

export type AttemptStatus = 'starting' | 'loading' | 'ready' | 'crashed' | 'stopped' | 'failed' | 'exited' | 'lost';

export const ACTIVE_STATUSES: readonly AttemptStatus[] = ['starting', 'loading', 'ready'];

export interface Attempt {
  id: number;
  host: string;
  profile: string;
  profileJson: string;
  flags: Record<string, string>;
  argv: string[];
  env: Record<string, string>;
  commandLine: string;
  port: number;
  gpus: string | null;
  sglangVersion: string | null;
  actor: string;
  origin: string;
  status: AttemptStatus;
  active: boolean;
  outcome: string | null;
  outcomeDetail: string | null;
  exitCode: number | null;
  runDir: string | null;
  logPath: string | null;
  pgid: number | null;
  pgidStart: string | null;
  lastMilestone: string | null;
  logOffset: number;
  classification: unknown;
  startedAt: number;
  readyAt: number | null;
  endedAt: number | null;
  /** Set for attempts made together (a bisection's steps): their chat messages go to that group's thread. */
  groupKey: string | null;
}

export interface NewAttempt {
  host: string;
  profile: string;
  profileJson: string;
  flags: Record<string, string>;
  argv: string[];
  env: Record<string, string>;
  commandLine: string;
  port: number;
  gpus?: string;
  sglangVersion?: string;
  actor: string;
  origin: string;
  startedAt: number;
  groupKey?: string;
}

type Row = Record<string, unknown>;

function fromRow(r: Row): Attempt {
  return {
    id: r.id as number,
    host: r.host as string,
    profile: r.profile as string,
    profileJson: r.profile_json as string,
    flags: JSON.parse(r.flags_json as string),
    argv: JSON.parse(r.argv_json as string),
    env: JSON.parse(r.env_json as string),
    commandLine: r.command_line as string,
    port: r.port as number,
    gpus: (r.gpus as string) ?? null,
    sglangVersion: (r.sglang_version as string) ?? null,
    actor: r.actor as string,
    origin: r.origin as string,
    status: r.status as AttemptStatus,
    active: r.active === 1,
    outcome: (r.outcome as string) ?? null,
    outcomeDetail: (r.outcome_detail as string) ?? null,
    exitCode: (r.exit_code as number) ?? null,
    runDir: (r.run_dir as string) ?? null,
    logPath: (r.log_path as string) ?? null,
    pgid: (r.pgid as number) ?? null,
    pgidStart: (r.pgid_start as string) ?? null,
    lastMilestone: (r.last_milestone as string) ?? null,
    logOffset: r.log_offset as number,
    classification: r.classification_json ? JSON.parse(r.classification_json as string) : null,
    startedAt: r.started_at as number,
    readyAt: (r.ready_at as number) ?? null,
    endedAt: (r.ended_at as number) ?? null,
    groupKey: (r.group_key as string) ?? null,
  };
}

export function createAttemptStore(db: Db) {
  const insert = db.prepare(`INSERT INTO attempts
    (host, profile, profile_json, flags_json, argv_json, env_json, command_line, port, gpus, sglang_version, actor,
     origin, status, active, started_at, group_key)
    VALUES (@host, @profile, @profile_json, @flags_json, @argv_json, @env_json, @command_line, @port, @gpus,
     @sglang_version, @actor, @origin, 'starting', 1, @started_at, @group_key)`);
  const byId = db.prepare('SELECT * FROM attempts WHERE id = ?');
  const activeOn = db.prepare('SELECT * FROM attempts WHERE host = ? AND active = 1');
  const addEvent = db.prepare('INSERT INTO events (attempt_id, at, kind, data_json) VALUES (?, ?, ?, ?)');

  function busy(host: string): UserError {
    const running = activeOn.get(host) as Row | undefined;
    const r = running ? fromRow(running) : undefined;
    return new UserError(
      r
        ? `a server already runs on ${host}: attempt #${r.id} (${r.profile}), launched by ${r.actor} at ${new Date(r.startedAt).toISOString()}, ${r.status}`
        : `a server already runs on ${host}`,
      `stop it first with: stop --host ${host}`,
    );
  }

  return {
    /**
     * Opens an attempt, or refuses when the host already has a live one. The partial unique index makes this atomic
     * across threads and processes: ten concurrent launches insert exactly one row.
     */
    open(a: NewAttempt): Attempt {
      try {
        const info = insert.run({
          host: a.host,
          profile: a.profile,
          profile_json: a.profileJson,
          flags_json: JSON.stringify(a.flags),
          argv_json: JSON.stringify(a.argv),
          env_json: JSON.stringify(a.env),
          command_line: a.commandLine,
          port: a.port,
          gpus: a.gpus ?? null,
          sglang_version: a.sglangVersion ?? null,
          actor: a.actor,
          origin: a.origin,
          started_at: a.startedAt,
          group_key: a.groupKey ?? null,
        });
        return fromRow(byId.get(info.lastInsertRowid) as Row);
      } catch (e) {
        if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw busy(a.host);
        throw e;
      }
    },
    /** Throws the "already runs" error (who launched what, when) when the host has a live attempt. */
    assertIdle(host: string): void {
      if (activeOn.get(host)) throw busy(host);
    },
    get(id: number): Attempt | undefined {
      const r = byId.get(id) as Row | undefined;
      return r ? fromRow(r) : undefined;
    },
    activeOn(host: string): Attempt | undefined {
      const r = activeOn.get(host) as Row | undefined;
      return r ? fromRow(r) : undefined;
    },
    allActive(): Attempt[] {
      return (db.prepare('SELECT * FROM attempts WHERE active = 1 ORDER BY id').all() as Row[]).map(fromRow);
    },
    list(filter: { profile?: string; host?: string; limit?: number } = {}): Attempt[] {
      const where: string[] = [];
      const args: unknown[] = [];
      if (filter.profile) {
        where.push('profile = ?');
        args.push(filter.profile);
      }
      if (filter.host) {
        where.push('host = ?');
        args.push(filter.host);
      }
      const sql = `SELECT * FROM attempts ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
      return (db.prepare(sql).all(...args, filter.limit ?? 100) as Row[]).map(fromRow).reverse();
    },
    update(
      id: number,
      patch: Partial<{
        status: AttemptStatus;
        runDir: string;
        logPath: string;
        pgid: number;
        pgidStart: string;
        lastMilestone: string;
        logOffset: number;
        readyAt: number;
        sglangVersion: string;
        gpus: string;
        classification: unknown;
      }>,
    ): void {
      const cols: Record<string, unknown> = {
        status: patch.status,
        run_dir: patch.runDir,
        log_path: patch.logPath,
        pgid: patch.pgid,
        pgid_start: patch.pgidStart,
        last_milestone: patch.lastMilestone,
        log_offset: patch.logOffset,
        ready_at: patch.readyAt,
        sglang_version: patch.sglangVersion,
        gpus: patch.gpus,
        classification_json: patch.classification === undefined ? undefined : JSON.stringify(patch.classification),
      };
      const set = Object.entries(cols).filter(([, v]) => v !== undefined);
      if (set.length === 0) return;
      db.prepare(`UPDATE attempts SET ${set.map(([k]) => `${k} = ?`).join(', ')} WHERE id = ?`).run(
        ...set.map(([, v]) => v),
        id,
      );
    },
    /** Closes an attempt once: the first outcome recorded wins (a crash seen by the log follower beats a later stop). */
    finish(
      id: number,
      end: { status: AttemptStatus; outcome: string; detail?: string; exitCode?: number | null; at: number },
    ): boolean {
      const info = db
        .prepare(
          `UPDATE attempts SET status = ?, outcome = ?, outcome_detail = ?, exit_code = ?, ended_at = ?, active = 0
           WHERE id = ? AND active = 1`,
        )
        .run(end.status, end.outcome, end.detail ?? null, end.exitCode ?? null, end.at, id);
      return info.changes === 1;
    },
    event(id: number, at: number, kind: string, data: unknown = {}): void {
      addEvent.run(id, at, kind, JSON.stringify(data));
    },
    events(id: number): Array<{ at: number; kind: string; data: unknown }> {
      return (
        db.prepare('SELECT at, kind, data_json FROM events WHERE attempt_id = ? ORDER BY id').all(id) as Row[]
      ).map((r) => ({ at: r.at as number, kind: r.kind as string, data: JSON.parse(r.data_json as string) }));
    },
  };
}

export type AttemptStore = ReturnType<typeof createAttemptStore>;
