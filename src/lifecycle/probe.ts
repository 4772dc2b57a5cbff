// Probe: one report on a host's server: process alive, /health, /server_info, /v1/models, last milestone, uptime,
// GPU memory. Every part is best-effort: one failing check does not hide the others.
import { z } from 'zod';
import type { Attempt } from '../ledger/attempts.ts';
import { singleFlight } from '../single-flight.ts';
import { serverAuth, statusText } from './api-key.ts';
import { backendFor } from './backends.ts';
import { type Engine, type HostContext, hostOf } from './engine.ts';
import { type GpuReport, readGpus } from './host-info.ts';
import { nodesOf } from './nodes.ts';
import { reconcile } from './reconcile.ts';
import { type RemoteState, readRemoteState, runIdFor } from './remote-state.ts';
import { readHealth } from './serving-check.ts';
import { readServerMetrics, type ServerMetrics } from './sglang-metrics.ts';

// GPU memory moves slowly; process state must be current, so only concurrent reads share it.
const sharedGpus = singleFlight<GpuReport>({ ttlMs: 1000 });
const sharedState = singleFlight<RemoteState>();

const ServerInfo = z
  .object({
    version: z.string().optional(),
    model_path: z.string().optional(),
    tp_size: z.number().optional(),
    simulated: z.boolean().optional(),
  })
  .passthrough();
const Models = z.object({
  data: z.array(z.object({ id: z.string(), max_model_len: z.number().optional() }).passthrough()),
});

export interface ProbeReport {
  host: string;
  attempt: Attempt | null;
  process: RemoteState | { state: 'unreachable'; error: string };
  health: { status: number | null; error?: string | undefined };
  serverInfo: {
    version?: string;
    modelPath?: string;
    tp?: number;
    simulated?: boolean;
    endpoint?: string;
    error?: string;
  };
  models: string[] | { error: string };
  /** SGLang's own /metrics (with --enable-metrics). */
  serverMetrics: ServerMetrics | { error: string };
  lastMilestone: string | null;
  uptimeS: number | null;
  gpu: GpuReport | { error: string };
  /** Which attempt holds which GPU on the probed host. */
  leases: Array<{ gpu: number; attemptId: number }>;
  /** A multi-node attempt's workers: each one's process as its own host records it. */
  workers: Array<{ rank: number; host: string; state: string; error?: string }>;
  /** A cluster's attempt: its job as Slurm records it (the process table of a compute node is not the bot's). */
  job: { id: string; state: string; text: string } | null;
}

/** Probes the attempt named, else the newest live attempt on the host (a multi-node one is probed on its head). */
export async function probe(engine: Engine, hostGiven: string, attemptId?: number): Promise<ProbeReport> {
  // The attempt's state as its host has it now, before reporting it.
  await reconcile(engine, attemptId !== undefined ? undefined : [hostGiven], {
    attemptIds: attemptId !== undefined ? [attemptId] : undefined,
    skipStarting: true,
  }).catch(() => []);
  const attempt =
    (attemptId !== undefined ? engine.attempts.get(attemptId) : engine.attempts.activeOn(hostGiven)) ?? null;
  const hostName = attempt?.host ?? hostGiven;
  const { host, cfg } = hostOf(engine, hostName);
  const port = attempt?.port ?? 30000;
  const runId = attempt ? runIdFor(attempt) : undefined;
  const noRun = async (): Promise<RemoteState> => ({ state: 'none' });
  const cluster = attempt !== null && backendFor(engine, hostName).kind === 'slurm';
  // A job's server listens on its compute node, reached through the login node.
  const address = attempt?.serverAddr ?? undefined;
  // /health is open on a server started with --api-key; the rest needs the profile's key.
  const auth = await serverAuth(engine, attempt);
  // The parts are independent: ask them all at once.
  const [proc, health, serverInfo, models, gpu, workers, metrics] = await Promise.all([
    (runId && !cluster ? sharedState(`${hostName}/${runId}`, () => readRemoteState(host, cfg, runId)) : noRun()).catch(
      (e: Error) => ({
        state: 'unreachable' as const,
        error: e.message,
      }),
    ),
    readHealth(host, port, address, 25_000),
    readServerInfo(engine, hostName, port, auth, address),
    host
      .http(port, { method: 'GET', path: '/v1/models', headers: auth, timeoutMs: 5000, address })
      .then((r) => {
        if (r.status !== 200) throw new Error(`/v1/models answered ${statusText(r.status, r.body)}`);
        return Models.parse(JSON.parse(r.body)).data.map((m) => m.id);
      })
      .catch((e: Error) => ({ error: e.message })),
    cluster
      ? Promise.resolve({ error: "on the job's compute node (Slurm holds its GPUs)" })
      : sharedGpus(hostName, () => readGpus(host, cfg)).catch((e: Error) => ({ error: e.message })),
    readWorkers(engine, attempt),
    readServerMetrics(host, port, address),
  ]);
  const job =
    cluster && attempt
      ? await backendFor(engine, hostName)
          .state(engine, attempt)
          .then((st) => ({ id: attempt.jobId ?? '-', state: st.state, text: st.text }))
          .catch((e: Error) => ({ id: attempt.jobId ?? '-', state: 'unreachable', text: e.message }))
      : null;
  const ours = 'runId' in proc && attempt && proc.runId === runIdFor(attempt);
  return {
    host: hostName,
    attempt,
    process: proc,
    health,
    serverInfo,
    models,
    serverMetrics: metrics,
    lastMilestone: attempt?.lastMilestone ?? null,
    uptimeS: ours && 'uptimeS' in proc ? proc.uptimeS : null,
    gpu,
    leases: engine.attempts.leasesOn(hostName),
    workers,
    job,
  };
}

/** Each worker node's process, as its own host records it (none for a one-node attempt). */
function readWorkers(
  engine: HostContext & Pick<Engine, 'attempts'>,
  attempt: Attempt | null,
): Promise<ProbeReport['workers']> {
  if (!attempt) return Promise.resolve([]);
  const workers = nodesOf(engine, attempt).filter((n) => n.rank > 0);
  return Promise.all(
    workers.map(async (n) => {
      try {
        const h = hostOf(engine, n.host);
        return { rank: n.rank, host: n.host, state: (await readRemoteState(h.host, h.cfg, n.runId)).state as string };
      } catch (e) {
        return { rank: n.rank, host: n.host, state: 'unreachable', error: (e as Error).message };
      }
    }),
  );
}

async function readServerInfo(
  engine: HostContext,
  hostName: string,
  port: number,
  headers: Record<string, string>,
  address?: string,
): Promise<ProbeReport['serverInfo']> {
  const { host } = hostOf(engine, hostName);
  // /server_info is the current name; releases before it only have /get_server_info.
  for (const path of ['/server_info', '/get_server_info']) {
    try {
      const r = await host.http(port, { method: 'GET', path, headers, timeoutMs: 5000, address });
      if (r.status === 404) continue;
      if (r.status !== 200) return { error: `${path} answered ${statusText(r.status, r.body)}` };
      const info = ServerInfo.parse(JSON.parse(r.body));
      return {
        version: info.version,
        modelPath: info.model_path,
        tp: info.tp_size,
        simulated: info.simulated,
        endpoint: path,
      };
    } catch (e) {
      return { error: (e as Error).message };
    }
  }
  return { error: 'neither /server_info nor /get_server_info exists' };
}
