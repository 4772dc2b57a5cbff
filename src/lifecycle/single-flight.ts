// Concurrent identical reads of a host share one remote command (fifty people probing at once cost one
// nvidia-smi), and a result stays fresh for `ttlMs`.
export function singleFlight<T>(ttlMs: number) {
  const entries = new Map<string, { at: number; value?: T; pending?: Promise<T> }>();
  return (key: string, read: () => Promise<T>): Promise<T> => {
    const e = entries.get(key);
    if (e?.pending) return e.pending;
    if (e && e.value !== undefined && Date.now() - e.at < ttlMs) return Promise.resolve(e.value);
    const pending = read().then(
      (value) => {
        entries.set(key, { at: Date.now(), value });
        return value;
      },
      (err) => {
        entries.delete(key);
        throw err;
      },
    );
    entries.set(key, { at: Date.now(), pending });
    return pending;
  };
}
