// The one place real implementations are wired together: config, hosts, ledger, profiles, logger, commands.
import { dirname, isAbsolute, join } from 'node:path';
import { COMMANDS } from '../commands/index.ts';
import { createNotifier } from './alerts/notifier.ts';
import { stopAutopilots } from './autopilot/loops.ts';
import { createDelivery, type Delivery } from './chat/delivery.ts';
import type { ChatAdapter, Excerpt } from './chat/types.ts';
import { type Clock, systemClock } from './clock.ts';
import { type LoadedConfig, loadConfig } from './config/load.ts';
import { knownUpstream } from './corpus/similar.ts';
import { createFindingsIndex, sourcesFromConfig } from './findings/index.ts';
import { createHostPool } from './hosts/from-config.ts';
import { openLedger } from './ledger/index.ts';
import type { Outbox } from './ledger/outbox.ts';
import { catalogDiagnoser, catalogFromConfig, nextStepsFrom } from './lifecycle/classifier.ts';
import type { Engine } from './lifecycle/engine.ts';
import { beginClosing, stopMonitors } from './lifecycle/watching.ts';
import { createLogger, type Logger } from './logger.ts';
import type { Catalog } from './logs/classify/index.ts';
import type { DiagnoserFactory, Diagnosis } from './logs/diagnosis.ts';
import { loadProfiles, type ProfileSet } from './profiles/index.ts';
import { createDispatch, type Dispatch } from './runtime/registry.ts';

export interface App {
  engine: Engine;
  dispatch: Dispatch;
  diagnoser: DiagnoserFactory;
  outbox: Outbox;
  delivery?: Delivery;
  /**
   * Reads the profiles and the signature catalog now (long-lived faces: their problems show at start), and builds the
   * index of known upstream crashes, so the first crash alert after start does not wait for it (about half a second
   * of YAML parsing over the shipped corpus).
   */
  preload(): void;
  /**
   * Starts closing: every follower ends now (`interrupted`, its attempt left for the next bot), so what waits on one
   * (a scheduled launch, a smoke) ends too. close() does this first; a face that waits for other work before it
   * closes (its scheduler's jobs) calls it before that wait.
   */
  beginClose(): void;
  close(): Promise<void>;
}

export interface ChatWiring {
  /** Which face's messages this bot sends (faces sharing a ledger never send each other's). Default terminal. */
  face?: string;
  adapter: ChatAdapter;
  channel: string;
  parentMessages: boolean;
  milestonesInThread: boolean;
  /** At most one update per message this often (Slack's chat.update is Tier 3); default 3 s. */
  updateIntervalMs?: number;
  /** Longest wait between retries of an undeliverable message; default 60 s. */
  maxBackoffMs?: number;
}

export interface AppOptions {
  env?: NodeJS.ProcessEnv;
  loaded?: LoadedConfig;
  log?: Logger;
  clock?: Clock;
  chat?: ChatWiring;
  diagnoser?: DiagnoserFactory;
  excerptsFor?: (d: Diagnosis, flags: Record<string, string>) => Excerpt[] | Promise<Excerpt[]>;
  nextSteps?: (d: Diagnosis) => string[];
}

export function createApp(opts: AppOptions = {}): App {
  const env = opts.env ?? process.env;
  const loaded = opts.loaded ?? loadConfig(env);
  const log = opts.log ?? createLogger();
  const ledger = openLedger(join(loaded.dataDir, 'ledger.sqlite'), opts.chat?.face ?? 'terminal');
  // Profiles and the signature catalog are read on first use: a one-shot `glm help` or `glm status` needs neither
  // (the long-lived faces touch both at start, so a bad profile or signature still shows up there at once).
  let profiles: ProfileSet | undefined;
  let catalog: Catalog | undefined;
  const catalogNow = () => {
    catalog ??= catalogFromConfig(loaded.config.signatures);
    return catalog;
  };
  const engine: Engine = {
    outbox: ledger.outbox,
    loaded,
    pool: createHostPool(loaded, env, (host, text) => log.warn({ host }, text)),
    ledger: ledger.tables,
    attempts: ledger.attempts,
    audit: ledger.audit,
    get profiles() {
      profiles ??= loadProfiles(loaded.profilesDir);
      return profiles;
    },
    clock: opts.clock ?? systemClock,
    log,
  };
  engine.findings = createFindingsIndex(
    sourcesFromConfig(loaded.config.findings, (name) => engine.pool.get(name)),
    // A relative local path starts at the config file's directory (as the config's file checks read it).
    { clock: engine.clock, ...(isAbsolute(loaded.source) && { baseDir: dirname(loaded.source) }) },
  );
  const excerptsFor =
    opts.excerptsFor ?? ((d: Diagnosis, flags: Record<string, string>) => engine.findings!.excerptsFor(d, flags));
  const stall = loaded.config.timeouts.stall_s;
  const diagnoser =
    opts.diagnoser ?? catalogDiagnoser(catalogNow, engine.clock, stall === undefined ? undefined : stall * 1000);
  engine.diagnoser = diagnoser;
  const nextSteps = opts.nextSteps ?? nextStepsFrom(catalogNow);
  const knownFor = (d: Diagnosis) => {
    const root = d.evidence[0]?.text;
    return root ? knownUpstream().similar(root) : [];
  };
  const outbox = engine.outbox;
  let delivery: Delivery | undefined;
  let ticker: NodeJS.Timeout | undefined;
  if (opts.chat) {
    const chat = opts.chat;
    delivery = createDelivery({
      outbox,
      adapter: chat.adapter,
      clock: engine.clock,
      log: log.child({ part: 'delivery' }),
      updateIntervalMs: chat.updateIntervalMs,
      maxBackoffMs: chat.maxBackoffMs,
      onSent: (item, at) => engine.metrics?.delivered(item, at),
    });
    engine.notifier = createNotifier(
      {
        alerts: ledger.tables.alerts,
        outbox,
        delivery,
        clock: engine.clock,
        sources: { attempts: engine.attempts, excerptsFor, nextSteps, knownUpstream: knownFor },
      },
      {
        channel: chat.channel,
        parentMessages: chat.parentMessages,
        milestonesInThread: chat.milestonesInThread,
        simulated: (h) => (loaded.config.hosts[h]?.python ?? '').includes('standin'),
      },
    );
    delivery.start();
    // A stuck load prints nothing: the clock, not a log line, moves its message's elapsed time.
    ticker = setInterval(() => engine.notifier?.tick(), 15_000);
    ticker.unref();
  }
  const dispatch = createDispatch(COMMANDS);
  return {
    engine,
    dispatch,
    diagnoser,
    outbox,
    delivery,
    preload() {
      void engine.profiles;
      catalogNow();
      knownUpstream();
    },
    beginClose() {
      beginClosing(engine);
    },
    async close() {
      clearInterval(ticker);
      // Followers end first wherever they run (a launch, an autopilot's trial, a bisection's step): each leaves its
      // attempt as the ledger has it, for the next bot to follow on.
      beginClosing(engine);
      // Autopilot runs first: they stop where they are (interrupted in the ledger) and the next start resumes them.
      await stopAutopilots(engine);
      // Watchers next: a follower still reading its log writes to the ledger (offsets, events) until it stops.
      await stopMonitors(engine);
      // Commands still running (a launch whose follower just ended, a stop in its grace period) write their audit
      // rows before the ledger closes; bounded, as the monitors are.
      if (!(await dispatch.settled(10_000)))
        log.warn('commands still running after 10 s; closing the ledger under them');
      await engine.notifier?.idle();
      await delivery?.flush(5000);
      await delivery?.stop();
      await engine.pool.closeAll();
      ledger.close();
    },
  };
}
