import DataLoader from "dataloader";

/**
 * Runs the hot statements of concurrent requests together: every call made during one event-loop turn
 * is answered by ONE statement (`many`), or by the single-request statement (`one`) when it was alone.
 * Under load the server reads many requests per turn, and each statement costs the database a round
 * trip, an executor start and (for writes) a commit whatever its size; alone, a request waits for
 * nothing (the batch goes out at the end of the same turn).
 *
 * `many` answers in call order. If it fails, every call is retried alone, so one request's error (or a
 * deadlock between two batches) is never another's. DataLoader does the collecting; its cache is off,
 * since these are reads and writes that must reach the database each time.
 */
export function batched<K, V>(
  one: (key: K) => Promise<V>,
  many: (keys: readonly K[]) => Promise<V[]>,
  maxBatchSize = 64,
): DataLoader<K, V, K> {
  return new DataLoader<K, V, K>(
    async (keys) => {
      if (keys.length === 1) return [await one(keys[0] as K)];
      try {
        return await many(keys);
      } catch {
        return Promise.all(keys.map((k) => one(k).catch((err: unknown) => toError(err))));
      }
    },
    { cache: false, batchScheduleFn: (run) => setImmediate(run), maxBatchSize },
  );
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
