// The smoke, bench and schedule tables live in the bot's one ledger file, on the engine's own connection; chat
// messages these parts send go through the engine's outbox (delivered in order, never lost).
import type { Db } from '../ledger/db.ts';
import { createOutbox, type Outbox } from '../ledger/outbox.ts';
import type { Engine } from '../server/engine.ts';

export function ledgerDb(engine: Engine): Db {
  return engine.db;
}

export function ledgerOutbox(engine: Engine): Outbox {
  return engine.outbox ?? createOutbox(engine.db);
}
