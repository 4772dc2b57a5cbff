// Attempts: every launch, with what ran, where, by whom, and how it ended. The table the team kept by hand.
import { UserError } from '../errors.ts';
import { redactText, redactValue } from '../redact.ts';
import { type Db, ledgerId } from './db.ts';

export type AttemptStatus =
  | 'starting'
  | 'queued'
  | 'loading'
  | 'ready'
  | 'crashed'
  | 'stopped'
  | 'failed'
  | 'exited'
  | 'lost';

/** `queued`: a scheduler job waiting for its nodes (Slurm). */
export const ACTIVE_STATUSES: readonly AttemptStatus[] = ['starting', 'queued', 'loading', 'ready'];

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
  /** Multi-node attempts: the head's `addr:port` every node met at; null for one node. */
  distInitAddr: string | null;
  /** Multi-node attempts: every node's host, head first; empty for one node. */
  nodeHosts: string[];
  /** A scheduler job's id (Slurm); null for a server the bot started over SSH. */
  jobId: string | null;
  /** Where the server listens as the host reaches it (a job's compute node); null: the host's own 127.0.0.1. */
  serverAddr: string | null;
  /** The name of its run on the host (run directory, live record): `attempt-N-LEDGER`, `attempt-N` before those. */
  runId: string;
}

/** A worker node of a multi-node attempt (rank >= 1); node 0 is the attempt row itself. */
export interface AttemptNode {
  attemptId: number;
  rank: number;
  host: string;
  gpus: string | null;
  runDir: string | null;
  logPath: string | null;
  pgid: number | null;
  pgidStart: string | null;
  logOffset: number;
}

/** GPUs an attempt holds on one host while it lives. */
export interface Lease {
  host: string;
  gpus: number[];
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
  /** The GPUs held on each host (default: `gpus` on `host`). */
  leases?: Lease[];
  /** Worker nodes of a multi-node attempt. */
  nodes?: Array<{ rank: number; host: string; gpus: number[] }>;
  distInitAddr?: string;
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
    distInitAddr: (r.dist_init_addr as string) ?? null,
    nodeHosts: r.node_hosts ? (r.node_hosts as string).split(',') : [],
    jobId: (r.job_id as string) ?? null,
    serverAddr: (r.server_addr as string) ?? null,
    runId: (r.run_id as string) ?? `attempt-${r.id}`,
  };
}

/** Where an attempt runs, for people: `gpu1`, or `gpu1+gpu2` for a multi-node one. */
export function attemptWhere(a: Pick<Attempt, 'host' | 'nodeHosts'>): string {
  return a.nodeHosts.length > 1 ? a.nodeHosts.join('+') : a.host;
}

function nodeFromRow(r: Row): AttemptNode {
  return {
    attemptId: r.attempt_id as number,
    rank: r.rank as number,
    host: r.host as string,
    gpus: (r.gpus as string) ?? null,
    runDir: (r.run_dir as string) ?? null,
    logPath: (r.log_path as string) ?? null,
    pgid: (r.pgid as number) ?? null,
    pgidStart: (r.pgid_start as string) ?? null,
    logOffset: r.log_offset as number,
  };
}

function describe(a: Attempt): string {
  return `attempt #${a.id} (${a.profile}), launched by ${a.actor} at ${new Date(a.startedAt).toISOString()}, ${a.status}`;
}

const gpuList = (gpus: number[]): string => `GPU${gpus.length === 1 ? '' : 's'} ${gpus.join(',')}`;

/**
 * The errors a serving server was seen to survive (`error_survived` events, src/lifecycle/early-alert.ts): how many
 * different ones (by dedup key: class and root line; a repeat is not counted again) and the newest one's time, class
 * and root line.
 */
export interface Survived {
  /** Different errors survived: the sum of the events' `count` (one event per quiet window holds several). */
  count: number;
  lastAt: number;
  category: string;
  /** Redacted (as every event's data is when written, and again when read). */
  root: string;
}

/**
 * An `error_survived` event's data (early-alert.ts writes it): one per quiet window, updated in place when a
 * different error is survived within it. `keys`: the dedup keys it counts (`count` of them); `category`, `root`,
 * `lastAt`: the newest one's; `prev`: the one before it in this window, so that a crash alert can leave out the
 * crash's own error and still name the newest other one. Events written before `keys` existed count one each.
 */
export interface SurvivedData {
  category: string;
  root: string;
  why: string;
  rank?: number;
  keys?: string[];
  count?: number;
  lastAt?: number;
  prev?: { category: string; root: string; key: string; at: number };
}

/** The ledger's hot reads, each on an index (src/ledger/db.ts); test/ledger/scale.test.ts checks their plans. */
export const HOT_QUERIES = {
  failing: `SELECT * FROM attempts WHERE active = 0 AND (classification_json IS NOT NULL OR status = 'crashed')
     ORDER BY id DESC`,
  ofModel: 'SELECT * FROM attempts WHERE model_path = ? AND id <= ? ORDER BY id',
  ofModelOnHost: 'SELECT * FROM attempts WHERE model_path = ? AND host = ? AND id <= ? ORDER BY id',
  // With exactly one max() in it, SQLite takes the bare columns (at, data_json) from the row holding that max: the
  // newest event of each attempt (https://www.sqlite.org/lang_select.html, "bare columns in an aggregate query").
  survived: `SELECT attempt_id, SUM(COALESCE(json_extract(data_json, '$.count'), 1)) AS n, MAX(id) AS last_id, at,
     data_json FROM events
     WHERE attempt_id IN (SELECT value FROM json_each(?)) AND kind = 'error_survived' GROUP BY attempt_id`,
};

/** `attempts [--profile P] [--host H]`: the newest N, filtered. */
export function listSql(where: string[]): string {
  return `SELECT * FROM attempts ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
}

export function createAttemptStore(db: Db) {
  const insert = db.prepare(`INSERT INTO attempts
    (host, profile, profile_json, flags_json, argv_json, env_json, command_line, port, gpus, sglang_version, actor,
     origin, status, active, started_at, group_key, dist_init_addr, node_hosts, model_path)
    VALUES (@host, @profile, @profile_json, @flags_json, @argv_json, @env_json, @command_line, @port, @gpus,
     @sglang_version, @actor, @origin, 'starting', 1, @started_at, @group_key, @dist_init_addr, @node_hosts,
     @model_path)`);
  const byId = db.prepare('SELECT * FROM attempts WHERE id = ?');
  const failing = db.prepare(HOT_QUERIES.failing);
  const ofModelAll = db.prepare(HOT_QUERIES.ofModel);
  const ofModelOnHost = db.prepare(HOT_QUERIES.ofModelOnHost);
  const activeOnHost = db.prepare(
    `SELECT * FROM attempts WHERE active = 1
     AND (host = ? OR id IN (SELECT attempt_id FROM attempt_nodes WHERE host = ?)) ORDER BY id`,
  );
  // Every node of a multi-node server binds the port on its host (workers serve a dummy /health there).
  const onPort = db.prepare(
    `SELECT * FROM attempts WHERE active = 1 AND port = ?
     AND (host = ? OR id IN (SELECT attempt_id FROM attempt_nodes WHERE host = ?))`,
  );
  const leaseHolder = db.prepare(
    'SELECT a.*, l.gpu AS leased_gpu FROM gpu_leases l JOIN attempts a ON a.id = l.attempt_id WHERE l.host = ? AND l.gpu = ?',
  );
  const leasesOn = db.prepare('SELECT gpu, attempt_id FROM gpu_leases WHERE host = ? ORDER BY gpu');
  const heldBy = db.prepare('SELECT gpu, group_key, holder FROM gpu_holds WHERE host = ? AND gpu = ?');
  const addLease = db.prepare('INSERT INTO gpu_leases (host, gpu, attempt_id) VALUES (?, ?, ?)');
  const dropLeases = db.prepare('DELETE FROM gpu_leases WHERE attempt_id = ?');
  const addNode = db.prepare('INSERT INTO attempt_nodes (attempt_id, rank, host, gpus) VALUES (?, ?, ?, ?)');
  const nodesOf = db.prepare('SELECT * FROM attempt_nodes WHERE attempt_id = ? ORDER BY rank');
  const close = db.prepare(
    `UPDATE attempts SET status = ?, outcome = ?, outcome_detail = ?, exit_code = ?, ended_at = ?, active = 0
     WHERE id = ? AND active = 1`,
  );
  const setRunId = db.prepare('UPDATE attempts SET run_id = ? WHERE id = ?');
  const ledger = ledgerId(db);
  const addEvent = db.prepare('INSERT INTO events (attempt_id, at, kind, data_json) VALUES (?, ?, ?, ?)');
  const survivedOf = db.prepare(HOT_QUERIES.survived);
  const survivedEvents = db.prepare(
    "SELECT id, at, data_json FROM events WHERE attempt_id = ? AND kind = 'error_survived' ORDER BY id",
  );
  const setEventData = db.prepare('UPDATE events SET data_json = ? WHERE id = ?');
  const readSurvived = (r: Row): { id: number; at: number; data: Partial<SurvivedData> } => {
    try {
      return { id: r.id as number, at: r.at as number, data: JSON.parse(r.data_json as string) as SurvivedData };
    } catch {
      return { id: r.id as number, at: r.at as number, data: {} }; // a row that cannot be read still counts one
    }
  };
  const survivedValue = (at: number, category: unknown, root: unknown, count: number): Survived => ({
    count,
    lastAt: at,
    category: typeof category === 'string' ? category : 'unknown',
    // Redacted when written; again here, before anyone shortens it (a cut token no longer looks like one).
    root: redactText(typeof root === 'string' ? root : ''),
  });

  /** Who holds any of these GPUs on this host, each holder once with the GPUs it holds of them. */
  function holders(host: string, gpus: readonly number[]): Array<{ attempt: Attempt; gpus: number[] }> {
    const out = new Map<number, { attempt: Attempt; gpus: number[] }>();
    for (const g of gpus) {
      const r = leaseHolder.get(host, g) as Row | undefined;
      if (!r) continue;
      const a = fromRow(r);
      const entry = out.get(a.id) ?? { attempt: a, gpus: [] };
      entry.gpus.push(g);
      out.set(a.id, entry);
    }
    return [...out.values()];
  }

  /**
   * The refusal for a launch whose GPUs or port are taken, with the attempt in the way (the first, when several):
   * the error names the holders and says how to get past them.
   */
  function conflict(
    host: string,
    port: number,
    gpus: readonly number[],
    groupKey?: string | null,
  ): { error: UserError; holder: Attempt | null } | null {
    // GPUs an autopilot run holds between its trials are its own steps' only.
    const reserved = gpus
      .map((g) => heldBy.get(host, g) as Row | undefined)
      .filter((r): r is Row => r !== undefined && r.group_key !== groupKey);
    if (reserved.length > 0) {
      const who = [...new Set(reserved.map((r) => r.holder as string))].join('; ');
      return {
        holder: null,
        error: new UserError(`${gpuList(reserved.map((r) => r.gpu as number))} on ${host}: held by ${who}`, {
          kind: 'gpus-reserved',
          host,
        }),
      };
    }
    const held = holders(host, gpus);
    if (held.length > 0) {
      const who = held.map((h) => `${gpuList(h.gpus)} held by ${describe(h.attempt)}`).join('; ');
      const holder = held[0]!.attempt;
      return {
        holder,
        error: new UserError(`${gpuList([...gpus])} on ${host}: ${who}`, { kind: 'gpus-held', holder: holder.id }),
      };
    }
    const r = onPort.get(port, host, host) as Row | undefined;
    if (!r) return null;
    const holder = fromRow(r);
    return {
      holder,
      error: new UserError(`port ${port} on ${host} is served by ${describe(holder)}`, {
        kind: 'port-taken',
        holder: holder.id,
      }),
    };
  }

  const openTx = db.transaction((a: NewAttempt): Attempt => {
    const leases = a.leases ?? [{ host: a.host, gpus: parseGpus(a.gpus) }];
    for (const l of leases) {
      const c = conflict(l.host, a.port, l.gpus, a.groupKey);
      if (c) throw c.error;
    }
    const info = insert.run({
      host: a.host,
      profile: a.profile,
      profile_json: a.profileJson,
      flags_json: JSON.stringify(a.flags),
      model_path: a.flags['model-path'] ?? '',
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
      dist_init_addr: a.distInitAddr ?? null,
      node_hosts: a.nodes?.length ? [a.host, ...a.nodes.map((n) => n.host)].join(',') : null,
    });
    const id = Number(info.lastInsertRowid);
    setRunId.run(`attempt-${id}-${ledger}`, id);
    for (const l of leases) for (const g of l.gpus) addLease.run(l.host, g, id);
    for (const n of a.nodes ?? []) addNode.run(id, n.rank, n.host, n.gpus.join(','));
    return fromRow(byId.get(id) as Row);
  });

  return {
    /** This ledger's id, part of every run id. */
    ledgerId: ledger,
    /**
     * Opens an attempt with its GPU leases, or refuses (naming the holder) when one of its GPUs or its port is taken.
     * IMMEDIATE takes the write lock before the check, so the check and the insert are one step across processes:
     * ten concurrent launches wanting the same GPU insert exactly one attempt.
     */
    open(a: NewAttempt): Attempt {
      try {
        return openTx.immediate(a);
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
          throw (
            conflict(a.host, a.port, parseGpus(a.gpus))?.error ??
            new UserError(`${a.host} is busy`, { kind: 'command', lead: 'see', command: 'status' })
          );
        }
        throw e;
      }
    },
    /** The refusal a launch of these GPUs on this port would meet now, or null. */
    conflict,
    holders,
    /** Every GPU lease on a host, lowest GPU first. */
    leasesOn(host: string): Array<{ gpu: number; attemptId: number }> {
      return (leasesOn.all(host) as Row[]).map((r) => ({ gpu: r.gpu as number, attemptId: r.attempt_id as number }));
    },
    get(id: number): Attempt | undefined {
      const r = byId.get(id) as Row | undefined;
      return r ? fromRow(r) : undefined;
    },
    /** The newest live attempt with a node on this host (its head or a worker). */
    activeOn(host: string): Attempt | undefined {
      const rows = activeOnHost.all(host, host) as Row[];
      return rows.length > 0 ? fromRow(rows[rows.length - 1]!) : undefined;
    },
    /** Every live attempt with a node on this host, oldest first. */
    allActiveOn(host: string): Attempt[] {
      return (activeOnHost.all(host, host) as Row[]).map(fromRow);
    },
    /** The worker nodes (rank >= 1) of a multi-node attempt; empty for one node. */
    nodes(id: number): AttemptNode[] {
      return (nodesOf.all(id) as Row[]).map(nodeFromRow);
    },
    updateNode(
      id: number,
      rank: number,
      patch: Partial<{ runDir: string; logPath: string; pgid: number; pgidStart: string; logOffset: number }>,
    ): void {
      const cols: Record<string, unknown> = {
        run_dir: patch.runDir,
        log_path: patch.logPath,
        pgid: patch.pgid,
        pgid_start: patch.pgidStart,
        log_offset: patch.logOffset,
      };
      const set = Object.entries(cols).filter(([, v]) => v !== undefined);
      if (set.length === 0) return;
      db.prepare(
        `UPDATE attempt_nodes SET ${set.map(([k]) => `${k} = ?`).join(', ')} WHERE attempt_id = ? AND rank = ?`,
      ).run(...set.map(([, v]) => v), id, rank);
    },
    /**
     * Finished attempts that crashed or were classified, newest first, read one at a time: the caller stops at the
     * first that fits (an index walk, whatever the size of the ledger). Run no other statement while iterating.
     */
    *failingNewestFirst(): Generator<Attempt> {
      for (const r of failing.iterate() as IterableIterator<Row>) yield fromRow(r);
    },
    /** Every attempt of a model (optionally on one host, up to an attempt), oldest first. */
    ofModel(modelPath: string, opts: { host?: string; maxId?: number } = {}): Attempt[] {
      const rows = (
        opts.host === undefined
          ? ofModelAll.all(modelPath, opts.maxId ?? Number.MAX_SAFE_INTEGER)
          : ofModelOnHost.all(modelPath, opts.host, opts.maxId ?? Number.MAX_SAFE_INTEGER)
      ) as Row[];
      return rows.map(fromRow);
    },
    byIds(ids: readonly number[]): Attempt[] {
      return ids.flatMap((id) => {
        const r = byId.get(id) as Row | undefined;
        return r ? [fromRow(r)] : [];
      });
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
      return (db.prepare(listSql(where)).all(...args, filter.limit ?? 100) as Row[]).map(fromRow).reverse();
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
        jobId: string;
        serverAddr: string;
        nodeHosts: string[];
        distInitAddr: string;
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
        // a classification's evidence and summary are log lines: scrubbed as everything the ledger keeps
        classification_json:
          patch.classification === undefined ? undefined : JSON.stringify(redactValue(patch.classification)),
        job_id: patch.jobId,
        server_addr: patch.serverAddr,
        node_hosts: patch.nodeHosts?.join(','),
        dist_init_addr: patch.distInitAddr,
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
      // The lease ends with the attempt, in the same transaction: however the attempt ends (crash seen, stop, or a
      // restarted bot reconciling with the host), its GPUs are free the moment it is closed.
      return db.transaction(() => {
        const detail = end.detail === undefined ? null : redactText(end.detail);
        const info = close.run(end.status, end.outcome, detail, end.exitCode ?? null, end.at, id);
        if (info.changes === 1) dropLeases.run(id);
        return info.changes === 1;
      })();
    },
    event(id: number, at: number, kind: string, data: unknown = {}): void {
      addEvent.run(id, at, kind, JSON.stringify(redactValue(data)));
    },
    events(id: number): Array<{ at: number; kind: string; data: unknown }> {
      return (
        db.prepare('SELECT at, kind, data_json FROM events WHERE attempt_id = ? ORDER BY id').all(id) as Row[]
      ).map((r) => ({ at: r.at as number, kind: r.kind as string, data: JSON.parse(r.data_json as string) }));
    },
    /** The errors each of these attempts' servers survived (attempts with none are absent): one query for a table. */
    survived(ids: readonly number[]): Map<number, Survived> {
      const out = new Map<number, Survived>();
      if (ids.length === 0) return out;
      for (const r of survivedOf.all(JSON.stringify(ids)) as Row[]) {
        const { at, data } = readSurvived(r);
        out.set(r.attempt_id as number, survivedValue(data.lastAt ?? at, data.category, data.root, r.n as number));
      }
      return out;
    },
    /** This attempt's `error_survived` events, oldest first (early-alert.ts counts and updates them). */
    survivedEvents(id: number): Array<{ id: number; at: number; data: Partial<SurvivedData> }> {
      return (survivedEvents.all(id) as Row[]).map(readSurvived);
    },
    /** Replaces an event's data (redacted as when written): a quiet window's `error_survived` counts one more. */
    updateEvent(eventId: number, data: unknown): void {
      setEventData.run(JSON.stringify(redactValue(data)), eventId);
    },
    /**
     * The errors this attempt's server survived other than the one with dedup key `except` (a crash alert leaves out
     * the error the server died of: it did not survive that one), or undefined when there are none.
     */
    survivedExcept(id: number, except: string): Survived | undefined {
      const evs = (survivedEvents.all(id) as Row[]).map(readSurvived);
      let count = 0;
      for (const e of evs) count += (e.data.count ?? 1) - (e.data.keys?.includes(except) ? 1 : 0);
      if (count <= 0) return undefined;
      for (const e of [...evs].reverse()) {
        const d = e.data;
        if (d.keys?.at(-1) !== except) return survivedValue(d.lastAt ?? e.at, d.category, d.root, count);
        if (d.prev) return survivedValue(d.prev.at, d.prev.category, d.prev.root, count);
      }
      return undefined;
    },
  };
}

export type AttemptStore = ReturnType<typeof createAttemptStore>;

/** `0,1,2` -> [0, 1, 2]; null or empty -> []. */
export function parseGpus(gpus: string | null | undefined): number[] {
  return gpus ? gpus.split(',').map((g) => Number(g.trim())) : [];
}
