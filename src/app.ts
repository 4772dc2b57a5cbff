// The one place real implementations are wired together: config, hosts, ledger, profiles, logger, commands.
import { join } from 'node:path';
import { COMMANDS } from '../commands/index.ts';
import { type Clock, systemClock } from './clock.ts';
import { createDispatch, type Dispatch } from './commands/registry.ts';
import { type LoadedConfig, loadConfig } from './config/load.ts';
import { createHostPool } from './hosts/from-config.ts';
import { createAttemptStore } from './ledger/attempts.ts';
import { createAuditLog } from './ledger/audit.ts';
import { openDb } from './ledger/db.ts';
import { createLogger, type Logger } from './logger.ts';
import { loadProfiles } from './profiles/index.ts';
import { basicDiagnoser, type DiagnoserFactory } from './server/diagnosis.ts';
import type { Engine } from './server/engine.ts';
import { stopMonitors } from './server/monitor.ts';

export interface App {
  engine: Engine;
  dispatch: Dispatch;
  diagnoser: DiagnoserFactory;
  close(): Promise<void>;
}

export function createApp(
  opts: { env?: NodeJS.ProcessEnv; loaded?: LoadedConfig; log?: Logger; clock?: Clock } = {},
): App {
  const env = opts.env ?? process.env;
  const loaded = opts.loaded ?? loadConfig(env);
  const log = opts.log ?? createLogger();
  const db = openDb(join(loaded.dataDir, 'ledger.sqlite'));
  const engine: Engine = {
    loaded,
    pool: createHostPool(loaded, env),
    attempts: createAttemptStore(db),
    audit: createAuditLog(db),
    profiles: loadProfiles(loaded.profilesDir),
    clock: opts.clock ?? systemClock,
    log,
  };
  return {
    engine,
    dispatch: createDispatch(COMMANDS),
    diagnoser: basicDiagnoser,
    async close() {
      stopMonitors();
      await engine.pool.closeAll();
      db.close();
    },
  };
}
