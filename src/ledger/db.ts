// The ledger's SQLite file: opened once, schema migrated in place. WAL so readers (status in another terminal)
// never block the bot, and a busy timeout so two bot processes can share it.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export type Db = Database.Database;

export const MIGRATIONS: string[] = [
  `CREATE TABLE attempts (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     host TEXT NOT NULL,
     profile TEXT NOT NULL,
     profile_json TEXT NOT NULL,
     flags_json TEXT NOT NULL,
     argv_json TEXT NOT NULL,
     env_json TEXT NOT NULL,
     command_line TEXT NOT NULL,
     port INTEGER NOT NULL,
     gpus TEXT,
     sglang_version TEXT,
     actor TEXT NOT NULL,
     origin TEXT NOT NULL,
     status TEXT NOT NULL,
     active INTEGER NOT NULL DEFAULT 1,
     outcome TEXT,
     outcome_detail TEXT,
     exit_code INTEGER,
     run_dir TEXT,
     log_path TEXT,
     pgid INTEGER,
     pgid_start TEXT,
     last_milestone TEXT,
     log_offset INTEGER NOT NULL DEFAULT 0,
     classification_json TEXT,
     started_at INTEGER NOT NULL,
     ready_at INTEGER,
     ended_at INTEGER
   )`,
  // At most one live attempt per host: the database refuses a second, whatever the number of bot processes.
  `CREATE UNIQUE INDEX one_active_attempt_per_host ON attempts(host) WHERE active = 1`,
  `CREATE TABLE events (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     attempt_id INTEGER NOT NULL REFERENCES attempts(id),
     at INTEGER NOT NULL,
     kind TEXT NOT NULL,
     data_json TEXT NOT NULL
   )`,
  `CREATE INDEX events_by_attempt ON events(attempt_id, id)`,
  `CREATE TABLE audit (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     actor TEXT NOT NULL,
     origin TEXT NOT NULL,
     place TEXT,
     command TEXT NOT NULL,
     args_json TEXT NOT NULL,
     decision TEXT NOT NULL,
     result TEXT,
     duration_ms INTEGER
   )`,
  `CREATE TABLE outbox (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     key TEXT NOT NULL UNIQUE,
     kind TEXT NOT NULL,
     channel TEXT NOT NULL,
     ref_key TEXT,
     parent_key TEXT,
     payload_json TEXT NOT NULL,
     status TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_at INTEGER NOT NULL,
     error TEXT,
     created_at INTEGER NOT NULL,
     sent_at INTEGER
   )`,
  `CREATE INDEX outbox_pending ON outbox(status, id)`,
  `CREATE TABLE message_refs (ref_key TEXT PRIMARY KEY, channel TEXT NOT NULL, ts TEXT NOT NULL)`,
  `CREATE TABLE alerts (
     dedup_key TEXT PRIMARY KEY,
     attempt_id INTEGER NOT NULL,
     category TEXT NOT NULL,
     count INTEGER NOT NULL,
     first_at INTEGER NOT NULL,
     last_at INTEGER NOT NULL,
     ref_key TEXT NOT NULL
   )`,
  // Smoke checks (src/smoke): one row per run, with the figures a later run is compared with.
  `CREATE TABLE smoke_runs (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     host TEXT NOT NULL,
     profile TEXT NOT NULL,
     attempt_id INTEGER,
     mode TEXT NOT NULL,
     actor TEXT NOT NULL,
     origin TEXT NOT NULL,
     verdict TEXT NOT NULL,
     passed INTEGER NOT NULL,
     total INTEGER NOT NULL,
     ttft_ms REAL,
     tok_s REAL,
     baseline_id INTEGER,
     crash_category TEXT,
     summary TEXT NOT NULL,
     result_json TEXT NOT NULL,
     duration_ms INTEGER NOT NULL
   )`,
  `CREATE INDEX smoke_runs_by_target ON smoke_runs(host, profile, verdict, id)`,
  // Load benchmarks (src/bench-load): one row per sweep, per attempt.
  `CREATE TABLE bench_runs (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     host TEXT NOT NULL,
     profile TEXT NOT NULL,
     attempt_id INTEGER,
     actor TEXT NOT NULL,
     origin TEXT NOT NULL,
     params_json TEXT NOT NULL,
     results_json TEXT NOT NULL,
     chart_path TEXT,
     duration_ms INTEGER NOT NULL
   )`,
  // Scheduled jobs (src/schedule): when each was first seen and last due/run, so a run missed while the bot was
  // down can be caught up at start-up.
  `CREATE TABLE schedule_state (
     job TEXT PRIMARY KEY,
     first_seen_at INTEGER NOT NULL,
     last_due_at INTEGER,
     last_started_at INTEGER,
     last_finished_at INTEGER,
     last_result TEXT,
     last_catch_up INTEGER NOT NULL DEFAULT 0
   )`,
  // Issue drafts (src/reports): the host environment an upstream report needs, captured once per host and SGLang
  // version, and which capture each attempt ran under.
  `CREATE TABLE environments (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     host TEXT NOT NULL,
     sglang_version TEXT NOT NULL,
     captured_at INTEGER NOT NULL,
     source TEXT NOT NULL,
     report_json TEXT NOT NULL
   )`,
  `CREATE INDEX environments_by_key ON environments(host, sglang_version, id)`,
  `CREATE TABLE attempt_environments (
     attempt_id INTEGER PRIMARY KEY REFERENCES attempts(id),
     environment_id INTEGER NOT NULL REFERENCES environments(id)
   )`,
  // Next-step advice (src/advice): each `next` run's numbered suggestions, so `launch next:N` can name one.
  `CREATE TABLE suggestions (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     batch INTEGER NOT NULL,
     n INTEGER NOT NULL,
     at INTEGER NOT NULL,
     actor TEXT NOT NULL,
     profile TEXT NOT NULL,
     base TEXT NOT NULL,
     overrides_json TEXT NOT NULL,
     reason TEXT NOT NULL,
     ref TEXT
   )`,
  `CREATE INDEX suggestions_by_batch ON suggestions(batch, n)`,
  // Attempts made together (the steps of a bisection) share one chat thread.
  `ALTER TABLE attempts ADD COLUMN group_key TEXT`,
  // Several servers per host (issue 7): the one-per-host rule becomes one holder per GPU and one server per port. A
  // lease row lives exactly as long as its attempt is live (attempts.finish deletes it in the same transaction); the
  // primary key makes two concurrent launches wanting the same GPU insert exactly one lease, across processes.
  `DROP INDEX one_active_attempt_per_host`,
  `CREATE UNIQUE INDEX one_active_attempt_per_port ON attempts(host, port) WHERE active = 1`,
  `CREATE TABLE gpu_leases (
     host TEXT NOT NULL,
     gpu INTEGER NOT NULL,
     attempt_id INTEGER NOT NULL REFERENCES attempts(id),
     PRIMARY KEY (host, gpu)
   )`,
  `CREATE INDEX gpu_leases_by_attempt ON gpu_leases(attempt_id)`,
  `INSERT OR IGNORE INTO gpu_leases (host, gpu, attempt_id)
     SELECT a.host, CAST(j.value AS INTEGER), a.id FROM attempts a, json_each('[' || a.gpus || ']') j
     WHERE a.active = 1 AND a.gpus IS NOT NULL AND a.gpus != ''`,
  // Multi-node attempts: node 0 (the head) is the attempt row itself; the worker nodes are here.
  `CREATE TABLE attempt_nodes (
     attempt_id INTEGER NOT NULL REFERENCES attempts(id),
     rank INTEGER NOT NULL,
     host TEXT NOT NULL,
     gpus TEXT,
     run_dir TEXT,
     log_path TEXT,
     pgid INTEGER,
     pgid_start TEXT,
     log_offset INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (attempt_id, rank)
   )`,
  `ALTER TABLE attempts ADD COLUMN dist_init_addr TEXT`,
  // Every node's host, head first (multi-node only), so a message can say where an attempt runs without a join.
  `ALTER TABLE attempts ADD COLUMN node_hosts TEXT`,
  // A post whose try may have reached the chat (a timeout, a reset, a 5xx, the bot killed mid-call): before posting
  // it again, the chat's history is searched for it (src/chat/delivery.ts).
  `ALTER TABLE outbox ADD COLUMN uncertain INTEGER NOT NULL DEFAULT 0`,
  `CREATE INDEX outbox_done ON outbox(status, sent_at)`,
  // Attempts run as a job of a cluster's scheduler (Slurm): its job id, and the address of node 0 (the compute node
  // readiness is checked on, through a tunnel from the login node). Null for a server started over SSH.
  `ALTER TABLE attempts ADD COLUMN job_id TEXT`,
  `ALTER TABLE attempts ADD COLUMN server_addr TEXT`,
  // Autopilot runs (src/autopilot): what was asked, where the run is, and every trial with its figures, so a bot
  // restarted mid-run resumes it from here.
  `CREATE TABLE autopilot_runs (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     host TEXT NOT NULL,
     profile TEXT NOT NULL,
     actor TEXT NOT NULL,
     origin TEXT NOT NULL,
     status TEXT NOT NULL,
     phase TEXT NOT NULL,
     params_json TEXT NOT NULL,
     state_json TEXT NOT NULL,
     group_key TEXT NOT NULL,
     gpus TEXT NOT NULL,
     cancel_requested INTEGER NOT NULL DEFAULT 0,
     heartbeat_at INTEGER NOT NULL,
     started_at INTEGER NOT NULL,
     deadline_at INTEGER NOT NULL,
     ended_at INTEGER,
     result_json TEXT
   )`,
  `CREATE TABLE autopilot_trials (
     run_id INTEGER NOT NULL REFERENCES autopilot_runs(id),
     n INTEGER NOT NULL,
     phase TEXT NOT NULL,
     attempt_id INTEGER,
     profile TEXT NOT NULL,
     changes TEXT NOT NULL,
     knobs_json TEXT,
     outcome TEXT NOT NULL,
     category TEXT,
     throughput REAL,
     ttft_p99 REAL,
     itl_p50 REAL,
     meets_slo INTEGER,
     note TEXT,
     at INTEGER NOT NULL,
     PRIMARY KEY (run_id, n)
   )`,
  // GPUs an autopilot run holds between its trials: a launch of another group is refused them, naming the run.
  `CREATE TABLE gpu_holds (
     host TEXT NOT NULL,
     gpu INTEGER NOT NULL,
     group_key TEXT NOT NULL,
     holder TEXT NOT NULL,
     PRIMARY KEY (host, gpu)
   )`,
  // What happened to a scheduled run besides running (src/schedule): it waited for another job on its host, it was
  // skipped because the job's previous run was still going, or runs were missed while the bot was down.
  `CREATE TABLE schedule_events (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     job TEXT NOT NULL,
     due_at INTEGER NOT NULL,
     at INTEGER NOT NULL,
     kind TEXT NOT NULL,
     detail TEXT NOT NULL
   )`,
  `CREATE INDEX schedule_events_by_job ON schedule_events(job, id)`,
  // The ledger's hot reads stay index lookups however many attempts it holds (test/ledger/scale.test.ts checks the
  // query plans): an attempt's model (the "configurations tried" for it, whether a suggestion was already tried),
  // the newest failures, and `attempts --profile/--host`.
  `ALTER TABLE attempts ADD COLUMN model_path TEXT`,
  `UPDATE attempts SET model_path = COALESCE(json_extract(flags_json, '$."model-path"'), '')`,
  `CREATE INDEX attempts_by_model ON attempts(model_path, host, id)`,
  `CREATE INDEX attempts_by_model_any_host ON attempts(model_path, id)`,
  `CREATE INDEX attempts_failing ON attempts(id) WHERE active = 0 AND (classification_json IS NOT NULL OR status = 'crashed')`,
  `CREATE INDEX attempts_by_profile ON attempts(profile, id)`,
  `CREATE INDEX attempts_by_host ON attempts(host, id)`,
  // Run ids on a host name the ledger too (issue 17): two bots with their own ledgers may share a host's workdir.
  // Attempts from before keep `attempt-N` (NULL here), which their hosts' records use.
  `CREATE TABLE ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  `ALTER TABLE attempts ADD COLUMN run_id TEXT`,
];

export function openDb(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  // The busy timeout first: several processes opening a new ledger at once wait for each other from the start.
  db.pragma(`busy_timeout = ${BUSY_WAIT_MS}`);
  // Switching a new file to WAL takes its exclusive lock; where waiting could deadlock, SQLite answers SQLITE_BUSY at
  // once instead of calling its busy handler (https://www.sqlite.org/c3ref/busy_handler.html), as it can while
  // another process is creating the same new ledger: those steps are tried again until the same deadline.
  whileBusy(() => db.pragma('journal_mode = WAL'));
  db.pragma('foreign_keys = ON');
  whileBusy(() => migrate(db));
  // This ledger's own id, made once: part of every run id it hands out.
  db.prepare("INSERT OR IGNORE INTO ledger_meta (key, value) VALUES ('ledger_id', ?)").run(
    randomBytes(4).toString('hex'),
  );
  return db;
}

/** The ledger's id (8 hex digits), fixed when it was created. */
export function ledgerId(db: Db): string {
  return (db.prepare("SELECT value FROM ledger_meta WHERE key = 'ledger_id'").get() as { value: string }).value;
}

const BUSY_WAIT_MS = 5000;
const BUSY_RETRY_MS = 25;

/** `step`, again while SQLite answers SQLITE_BUSY without waiting (its busy handler not called), up to BUSY_WAIT_MS. */
function whileBusy<T>(step: () => T): T {
  const until = Date.now() + BUSY_WAIT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      return step();
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || Date.now() >= until) throw e;
      // a synchronous pause: opening the ledger is synchronous for its callers (better-sqlite3)
      Atomics.wait(pause, 0, 0, BUSY_RETRY_MS);
    }
  }
}

function migrate(db: Db): void {
  if ((db.pragma('user_version', { simple: true }) as number) >= MIGRATIONS.length) return;
  db.transaction(() => {
    // Read again under the write lock: another process may have migrated while this one waited for it.
    const version = db.pragma('user_version', { simple: true }) as number;
    for (let i = version; i < MIGRATIONS.length; i++) db.exec(MIGRATIONS[i]!);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
