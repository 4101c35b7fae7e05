/**
 * A small bounded map with per-entry expiry, for token and permission lookups on the hot path.
 * Entries are dropped explicitly on the writes that change them (revoke, role change…); the TTL only
 * bounds staleness for changes made by *other* instances when no Redis invalidation channel is set.
 * Insertion order doubles as age order, so eviction of the oldest entry is O(1).
 */
export class TtlCache<K, V> {
  private readonly map = new Map<K, { v: V; exp: number }>();
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

  delete(k: K): void {
    this.map.delete(k);
  }

  /** Drops every entry whose value matches (e.g. all tokens of a deleted identity). */
  deleteWhere(pred: (v: V, k: K) => boolean): void {
    for (const [k, e] of this.map) if (pred(e.v, k)) this.map.delete(k);
  }

  clear(): void {
    this.map.clear();
  }
}
