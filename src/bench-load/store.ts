// Bench runs as the bench part reads them: the ledger's table (src/ledger/bench.ts) with each level's figures typed.
import type { BenchRow as Row } from '../ledger/bench.ts';
import type { LedgerTables } from '../ledger/index.ts';
import type { LevelMetrics } from './metrics.ts';

export type { BenchParams } from '../ledger/bench.ts';
export type BenchRow = Row<LevelMetrics>;

export function createBenchStore(ledger: Pick<LedgerTables, 'bench'>) {
  return ledger.bench<LevelMetrics>();
}
