// Part src/ledger: owns the bot's SQLite file: attempts and their outcomes, GPU leases and holds, the chat outbox, the
//   audit log, alerts, environments, smoke and bench history, schedule state, suggestions, autopilot runs. It is the
//   only part that imports better-sqlite3 or prepares a statement; every other part receives the tables it uses,
//   never the connection.
// May import: errors.ts, redact.ts.
import { alertTable } from './alerts.ts';
import { createAttemptStore } from './attempts.ts';
import { createAuditLog } from './audit.ts';
import { autopilotTable } from './autopilot.ts';
import { benchTable } from './bench.ts';
import { outcomeCounts } from './counts.ts';
import { type Db, openDb } from './db.ts';
import { environmentStore } from './environments.ts';
import { createOutbox } from './outbox.ts';
import { createScheduleState } from './schedule.ts';
import { createSmokeStore } from './smoke.ts';
import { suggestionStore } from './suggestions.ts';

/** The tables beside attempts, audit and the outbox, each a small repository over the one connection. */
export function ledgerTables(db: Db) {
  return {
    alerts: alertTable(db),
    environments: environmentStore(db),
    smoke: createSmokeStore(db),
    schedule: createScheduleState(db),
    suggestions: suggestionStore(db),
    outcomeCounts: () => outcomeCounts(db),
    /** Bench runs; `L` is a level's figures as the bench part types them. */
    bench: <L>() => benchTable<L>(db),
    /** Autopilot runs, their trials and GPU holds, typed by the autopilot (src/autopilot/store.ts). */
    autopilot: <P, S, K>() => autopilotTable<P, S, K>(db),
  };
}

export type LedgerTables = ReturnType<typeof ledgerTables>;

/** Opens (creating or upgrading) the ledger file; `face` names this process's outbox (terminal, slack). */
export function openLedger(file: string, face: string) {
  const db = openDb(file);
  return {
    attempts: createAttemptStore(db),
    audit: createAuditLog(db),
    outbox: createOutbox(db, face),
    tables: ledgerTables(db),
    close: () => db.close(),
  };
}
