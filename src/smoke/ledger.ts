// The smoke, bench and schedule tables live in the bot's one ledger file. Commands get an Engine, which does not
// carry the database handle, so this opens a second connection to the same file (WAL and a busy timeout make that
// safe; it is how two bot processes share the ledger too), one per engine.
import { join } from 'node:path';
import { type Db, openDb } from '../ledger/db.ts';
import { createOutbox, type Outbox } from '../ledger/outbox.ts';
import type { Engine } from '../server/engine.ts';

const open = new WeakMap<Engine, Db>();

export function ledgerDb(engine: Engine): Db {
  let db = open.get(engine);
  if (!db?.open) {
    db = openDb(join(engine.loaded.dataDir, 'ledger.sqlite'));
    open.set(engine, db);
  }
  return db;
}

export function ledgerOutbox(engine: Engine): Outbox {
  return createOutbox(ledgerDb(engine));
}

export function closeLedger(engine: Engine): void {
  open.get(engine)?.close();
  open.delete(engine);
}
