// Part src/lifecycle: owns the attempt lifecycle: launch (src/lifecycle/launch.ts), follow, stop, probe, status,
//   reconcile, over two backends (direct, Slurm), with GPU leases, the hardware catalog and the host environment.
// May import: access, chat, clock.ts, config, errors.ts, findings, format, hosts, ledger, logger.ts, logs,
//   package-root.ts, profiles, redact.ts, single-flight.ts, templates.
//
// What the lifecycle needs, in one place: passed to every operation, built only by main.ts (or a test). A function
// that touches only some of it takes a Pick of it (HostContext below, or a named context next to the function), so
// its signature says what it uses; callers still pass the engine. test/house/imports.test.ts counts, per folder, the
// exported functions that take the whole Engine and lets that count only go down.
import type { View } from '../chat/types.ts';
import type { Clock } from '../clock.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { HostConfig } from '../config/schema.ts';
import { UserError } from '../errors.ts';
import type { FindingsIndex } from '../findings/index.ts';
import type { HostPool } from '../hosts/from-config.ts';
import type { RemoteHost } from '../hosts/types.ts';
import type { Attempt, AttemptStore } from '../ledger/attempts.ts';
import type { AuditLog } from '../ledger/audit.ts';
import type { LedgerTables } from '../ledger/index.ts';
import type { Outbox, OutboxItem } from '../ledger/outbox.ts';
import type { Logger } from '../logger.ts';
import type { DiagnoserFactory } from '../logs/diagnosis.ts';
import type { ProfileSet } from '../profiles/index.ts';
import type { LaunchEvent } from './launch/types.ts';

export interface Engine {
  loaded: LoadedConfig;
  pool: HostPool;
  /** The ledger's other tables (smoke, bench, schedule, alerts, ...): parts get repositories, never the connection. */
  ledger: LedgerTables;
  attempts: AttemptStore;
  audit: AuditLog;
  /** This face's outbox: every chat message goes through it. */
  outbox: Outbox;
  profiles: ProfileSet;
  clock: Clock;
  log: Logger;
  /** Prometheus metrics of a long-lived face (src/metrics/bot.ts); absent in one-shot commands. */
  metrics?: {
    /** A command finished (dispatch): its name, ok/failed/error/denied, and how long it took. */
    commandDone(command: string, result: string, ms: number): void;
    /** An outbox item reached the chat at `at`: a crash alert's latency is observed. */
    delivered(item: OutboxItem, at: number): void;
  };
  /** The crash classifier, for logs read after the fact (an attempt that ended while no bot watched). */
  diagnoser?: DiagnoserFactory;
  /** The team's knowledge bases, quoted in crash alerts and searched by `findings`. */
  findings?: FindingsIndex;
  /** Where attempt events go besides the command that caused them: chat messages and alerts (src/alerts). */
  notifier?: {
    onEvent(e: LaunchEvent): Promise<void>;
    idle(): Promise<void>;
    catchUp(): Promise<number>;
    openGroup(key: string, text: string): void;
    /** Re-renders a group's own message (an autopilot run's progress). */
    updateGroup(key: string, view: View): void;
    /** A line in a group's thread. */
    groupReply(key: string, text: string): void;
    /** A file in a group's thread. */
    groupUpload(key: string, file: { filename: string; title: string; content: string; encoding?: 'base64' }): void;
    /** `phase`: the load's stage (weights, kv_cache, ...); the thread hears of each once. */
    progress(a: Attempt, text: string, phase: string): void;
    /** Keeps loading attempts' elapsed time moving (and says when they make no progress). */
    tick(): void;
  };
}

/** Sends an event to the command's face and to the notifier. */
export function publish(
  engine: Pick<Engine, 'notifier' | 'log'>,
  emit: (e: LaunchEvent) => void,
  e: LaunchEvent,
): void {
  emit(e);
  engine.notifier?.onEvent(e).catch((err: Error) => engine.log.error({ err: err.message }, 'notifier failed'));
}

/** What resolving a host name touches: the config and the pool. */
export type HostContext = Pick<Engine, 'loaded' | 'pool'>;

export function hostOf(engine: HostContext, name: string): { host: RemoteHost; cfg: HostConfig } {
  const cfg = engine.loaded.config.hosts[name];
  if (!cfg) throw new UserError(`unknown host '${name}'`);
  return { host: engine.pool.get(name), cfg };
}
