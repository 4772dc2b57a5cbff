// Autopilot runs and their trials as the autopilot reads them: the ledger's tables (src/ledger/autopilot.ts) with the
// run's parameters, its state and a trial's knobs typed. The GPUs a run holds between trials are rows of gpu_holds.
import type { Role } from '../access/roles.ts';
import type { AutopilotRun as RunRow, Trial as TrialRow } from '../ledger/autopilot.ts';
import type { LedgerTables } from '../ledger/index.ts';
import type { KnobValues } from './search.ts';
import type { SloTerm } from './slo.ts';

export type { RunStatus } from '../ledger/autopilot.ts';

export interface AutopilotParams {
  attempts: number;
  hours: number;
  slo: SloTerm[];
  concurrency: number;
  inputLen: number;
  outputLen: number;
  requests: number;
  knobs: string[];
  allowKnownCrash: boolean;
  keep: boolean;
  port?: number;
  /** The asker's role: every launch of the run is checked against it (src/access/operator.ts). */
  role: Role;
}

/** Where a run is, rewritten after every trial. */
export interface AutopilotState {
  /** Find phase: the profile to launch next (a profile or saved variant name). */
  nextProfile?: string;
  /** Profiles launched or skipped in the find phase, in order. */
  tried: string[];
  /** Tune phase: the working profile every trial extends, and its knobs as the server reported them. */
  working?: string;
  base?: KnobValues;
  bisected?: boolean;
}

export type AutopilotRun = RunRow<AutopilotParams, AutopilotState>;
export type Trial = TrialRow<KnobValues>;

export function autopilotStore(ledger: Pick<LedgerTables, 'autopilot'>) {
  return ledger.autopilot<AutopilotParams, AutopilotState, KnobValues>();
}

export type AutopilotStore = ReturnType<typeof autopilotStore>;
