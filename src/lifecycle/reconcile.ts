import type { Reconciled } from './backend.ts';
import { backendFor } from './backends.ts';
import type { Engine } from './engine.ts';

export async function reconcile(
  engine: Engine,
  hostNames?: string[],
  opts: { skipStarting?: boolean; attemptIds?: number[] } = {},
): Promise<Reconciled[]> {
  const live = engine.attempts.allActive().filter((a) => {
    const nodeHosts = a.nodeHosts.length > 0 ? a.nodeHosts : [a.host];
    if (hostNames && !nodeHosts.some((h) => hostNames.includes(h))) return false;
    if (opts.attemptIds && !opts.attemptIds.includes(a.id)) return false;
    // A launch in flight in this process has no record on the host yet: it is not stale.
    return !(opts.skipStarting && a.status === 'starting' && !a.pgid);
  });
  // Every attempt at once (each host over its own pooled connection): status over 64 hosts costs about what it costs
  // over one, not 64 round trips in a row; the hosts not connected yet are resolved (ssh -G) all at once first.
  await engine.pool.prepare([...new Set(live.flatMap((a) => (a.nodeHosts.length > 0 ? a.nodeHosts : [a.host])))]);
  const results = await Promise.all(
    live.map(async (a): Promise<Reconciled | undefined> => {
      try {
        return (await backendFor(engine, a.host).reconcile(engine, a, opts)) ?? undefined;
      } catch (e) {
        return { attempt: a, state: 'unreachable', note: (e as Error).message };
      }
    }),
  );
  return results.filter((r): r is Reconciled => r !== undefined);
}
