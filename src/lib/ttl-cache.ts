/**
 * A small bounded map with per-entry expiry, for token and permission lookups on the hot path.
 * Entries are dropped explicitly on the writes that change them (revoke, role change…); the TTL only
 * bounds staleness for changes made by *other* instances when no Redis invalidation channel is set.
 * Insertion order doubles as age order, so eviction of the oldest entry is O(1).
 *
 * `load` is the way to fill it: concurrent misses on one key share one load (when an entry expires under
 * load, one query rebuilds it instead of one per waiting request), and a load that was already running
 * when an entry was dropped does not store its answer, since it may have read the row before the change
 * that dropped it committed (a revoked token must not come back for a TTL).
 */
export class TtlCache<K, V> {
  private readonly map = new Map<K, { v: V; exp: number }>();
  private readonly loading = new Map<K, Promise<V | undefined>>();
  /** Bumped by every drop: a load that started in an earlier epoch does not store its answer. */
  private epoch = 0;
  constructor(
    private readonly ttlMs: number,
    private readonly max = 10_000,
  ) {}

  get(k: K): V | undefined {
    const e = this.map.get(k);
    if (!e) return undefined;
    if (e.exp < Date.now()) {
      this.map.delete(k);
      return undefined;
    }
    return e.v;
  }

  set(k: K, v: V): void {
    this.map.delete(k);
    if (this.map.size >= this.max) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(k, { v, exp: Date.now() + this.ttlMs });
  }

  /**
   * The cached value, else the answer of `loader` (shared with every concurrent caller for `k`). The
   * answer is stored when it is defined, `keep` accepts it and nothing was dropped while it loaded. A
   * loader that throws rejects every caller waiting on it and stores nothing.
   */
  load(
    k: K,
    loader: () => Promise<V | undefined>,
    keep: (v: V) => boolean = () => true,
  ): Promise<V | undefined> {
    const hit = this.get(k);
    if (hit !== undefined) return Promise.resolve(hit);
    const running = this.loading.get(k);
    if (running) return running;
    const epoch = this.epoch;
    const p = loader().then(
      (v) => {
        if (this.loading.get(k) === p) this.loading.delete(k);
        if (v !== undefined && epoch === this.epoch && keep(v)) this.set(k, v);
        return v;
      },
      (err: unknown) => {
        if (this.loading.get(k) === p) this.loading.delete(k);
        throw err;
      },
    );
    this.loading.set(k, p);
    return p;
  }

  delete(k: K): void {
    this.dropped();
    this.map.delete(k);
  }

  /** Drops every entry whose value matches (e.g. all tokens of a deleted identity). */
  deleteWhere(pred: (v: V, k: K) => boolean): void {
    this.dropped();
    for (const [k, e] of this.map) if (pred(e.v, k)) this.map.delete(k);
  }

  clear(): void {
    this.dropped();
    this.map.clear();
  }

  /** Loads already running may have read what was just changed: later callers start their own. */
  private dropped(): void {
    this.epoch++;
    this.loading.clear();
  }
}
