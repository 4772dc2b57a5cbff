// The catalog-driven classifier (src/logs/classify) as the lifecycle's Diagnoser, plus the catalog's advice for an
// alert. The catalog is loaded once, with the config's own signatures merged in.

import type { Clock } from '../clock.ts';
import { type Catalog, createClassifier, loadCatalog } from '../logs/classify/index.ts';
import type { DiagnoserFactory, Diagnosis } from '../logs/diagnosis.ts';

export function catalogFromConfig(signatures: readonly unknown[]): Catalog {
  return loadCatalog(signatures, { extraPath: 'signatures' });
}

/** `catalog` may be a function: the catalog is then loaded by the first diagnoser made, not before. */
export function catalogDiagnoser(catalog: Catalog | (() => Catalog), clock: Clock, stallMs?: number): DiagnoserFactory {
  const get = typeof catalog === 'function' ? catalog : () => catalog;
  return (opts = {}) => {
    const stall =
      stallMs === undefined
        ? undefined
        : {
            startup: stallMs,
            weight_load: stallMs,
            kv_alloc: stallMs,
            cuda_graph_capture: stallMs,
            warmup: stallMs,
            unknown: stallMs,
          };
    const c = createClassifier({
      catalog: get(),
      clock: () => clock.now(),
      stallMs: stall,
      ...(opts.serving !== undefined && { serving: opts.serving }),
    });
    return {
      push: (line, lineNo) => c.push(line, lineNo),
      crashed: () => c.crashed(),
      result: () => {
        const d = c.diagnosis();
        return {
          ...d.classification,
          reason: d.reason,
          ...(d.survivable && { survivable: d.survivable }),
          ...(d.stopped && { stopped: d.stopped }),
        };
      },
      stalled: (now) => (c.checkStall(now) ? { ...c.result(), reason: c.diagnosis().reason } : null),
    };
  };
}

/** The catalog entry behind a classification (its id is the dedup key's middle part). */
export function nextStepsFrom(catalog: Catalog | (() => Catalog)) {
  const get = typeof catalog === 'function' ? catalog : () => catalog;
  return (d: Diagnosis): string[] => {
    const id = d.dedupKey.split('/')[1];
    if (!id) return [];
    const c = get();
    return c.byId.get(id)?.nextSteps ?? c.exceptionRules.find((r) => r.id === id)?.nextSteps ?? [];
  };
}
