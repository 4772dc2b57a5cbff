// Launch, step 3: open the attempt. The ledger gets the attempt with what it holds (GPU leases, its port), so two
// launches never take the same GPUs; from here on the attempt exists, whatever happens to its server.
import type { Opened } from '../backend.ts';
import type { Engine } from '../engine.ts';
import type { Planned } from './plan.ts';
import type { LaunchRequest } from './types.ts';

export function openAttempt(engine: Engine, req: LaunchRequest, { backend, plan }: Planned): Promise<Opened> {
  return backend.open(engine, req, plan);
}
