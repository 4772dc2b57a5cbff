// Launch, step 1: plan. Every launch passes here, whatever the face or command: what the asker's role may not set
// goes no further; then the host's backend renders exactly what would run (argv, env, GPUs, port, nodes, or a batch
// script), after checking the hosts' live attempts against their own records (a lease whose attempt ended while no
// bot watched must not hold the launch back). A dry run's plan takes nothing.
import { assertMayLaunch } from '../../access/operator.ts';
import type { Plan, ServerBackend } from '../backend.ts';
import { backendFor } from '../backends.ts';
import type { Engine } from '../engine.ts';
import { reconcile } from '../reconcile.ts';
import type { LaunchRequest } from './types.ts';

export interface Planned {
  backend: ServerBackend;
  plan: Plan;
}

export async function planLaunch(engine: Engine, req: LaunchRequest): Promise<Planned> {
  assertMayLaunch(engine, req.profile, req.role);
  const backend = backendFor(engine, req.hostName);
  const plan = await backend.plan(engine, req, (hosts) => reconcile(engine, hosts, { skipStarting: true }));
  return { backend, plan };
}
