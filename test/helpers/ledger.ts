// A test's own connection to a bot's ledger file, opened through the ledger (src/ledger/db.ts): the engine hands
// its parts repositories, never the connection, so a test that reads or plants rows opens the file itself (SQLite
// serves both connections; each statement sees what the other committed).
import { join } from 'node:path';
import { type Db, openDb } from '../../src/ledger/db.ts';
import type { Engine } from '../../src/lifecycle/engine.ts';

const open = new Map<string, Db>();

export function ledgerDb(engine: Pick<Engine, 'loaded'>): Db {
  const file = join(engine.loaded.dataDir, 'ledger.sqlite');
  let db = open.get(file);
  if (!db) {
    db = openDb(file);
    open.set(file, db);
  }
  return db;
}
