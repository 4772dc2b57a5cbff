// Which backend runs a host's servers: a host with `slurm:` in the config is a cluster's login node.
import type { ServerBackend } from './backend.ts';
import { directBackend } from './direct.ts';
import type { Engine } from './engine.ts';
import { slurmBackend } from './slurm/backend.ts';

export function backendFor(engine: Pick<Engine, 'loaded'>, hostName: string): ServerBackend {
  return engine.loaded.config.hosts[hostName]?.slurm ? slurmBackend : directBackend;
}
