import { describe, expect, it } from "vitest";
import { TtlCache } from "./ttl-cache.js";

/** A loader whose answer the test releases by hand, counting its calls. */
function gatedLoader<V>() {
  const pending: { resolve: (v: V | undefined) => void; reject: (e: Error) => void }[] = [];
  const loader = () =>
    new Promise<V | undefined>((resolve, reject) => {
      pending.push({ resolve, reject });
    });
  return {
    loader,
    get calls() {
      return pending.length;
    },
    answer: (i: number, v: V | undefined) => pending[i]?.resolve(v),
    fail: (i: number, e: Error) => pending[i]?.reject(e),
  };
}

describe("TtlCache.load", () => {
  it("shares one load between concurrent misses on the same key, and caches its answer", async () => {
    const c = new TtlCache<string, number>(60_000);
    const g = gatedLoader<number>();
    const waiting = [c.load("k", g.loader), c.load("k", g.loader), c.load("k", g.loader)];
    expect(g.calls).toBe(1);
    g.answer(0, 7);
    expect(await Promise.all(waiting)).toEqual([7, 7, 7]);
    expect(c.get("k")).toBe(7);
    expect(await c.load("k", g.loader)).toBe(7);
    expect(g.calls).toBe(1);
  });

  it("loads different keys separately", async () => {
    const c = new TtlCache<string, string>(60_000);
    const g = gatedLoader<string>();
    const a = c.load("a", g.loader);
    const b = c.load("b", g.loader);
    expect(g.calls).toBe(2);
    g.answer(0, "A");
    g.answer(1, "B");
    expect([await a, await b]).toEqual(["A", "B"]);
  });

  it("does not store an answer that was loading when its key was dropped", async () => {
    const c = new TtlCache<string, string>(60_000);
    const g = gatedLoader<string>();
    const before = c.load("token", g.loader);
    c.delete("token"); // e.g. the token was revoked while its row was being read
    const after = c.load("token", g.loader);
    expect(g.calls).toBe(2); // a caller after the drop does not join the earlier load
    g.answer(0, "not revoked (read before the revoke)");
    g.answer(1, "revoked");
    expect(await before).toBe("not revoked (read before the revoke)");
    expect(await after).toBe("revoked");
    expect(c.get("token")).toBe("revoked");
  });

  it("does not store a load that was running across clear() or deleteWhere()", async () => {
    for (const drop of [
      (c: TtlCache<string, string>) => c.clear(),
      (c: TtlCache<string, string>) => c.deleteWhere(() => false),
    ]) {
      const c = new TtlCache<string, string>(60_000);
      const g = gatedLoader<string>();
      const p = c.load("k", g.loader);
      drop(c);
      g.answer(0, "stale");
      expect(await p).toBe("stale");
      expect(c.get("k")).toBeUndefined();
    }
  });

  it("stores nothing for an undefined answer or one `keep` refuses, and loads again next time", async () => {
    const c = new TtlCache<string, { uses: number }>(60_000);
    const g = gatedLoader<{ uses: number }>();
    const keep = (v: { uses: number }) => v.uses === 0;
    const none = c.load("gone", g.loader, keep);
    g.answer(0, undefined);
    expect(await none).toBeUndefined();
    const limited = c.load("limited", g.loader, keep);
    g.answer(1, { uses: 5 });
    expect(await limited).toEqual({ uses: 5 });
    expect(c.get("gone")).toBeUndefined();
    expect(c.get("limited")).toBeUndefined();
    const again = c.load("limited", g.loader, keep);
    expect(g.calls).toBe(3);
    g.answer(2, { uses: 5 });
    await again;
  });

  it("rejects every waiter when the loader fails, caches nothing and retries on the next call", async () => {
    const c = new TtlCache<string, number>(60_000);
    const g = gatedLoader<number>();
    const waiting = [c.load("k", g.loader), c.load("k", g.loader)];
    g.fail(0, new Error("database unavailable"));
    for (const w of waiting) await expect(w).rejects.toThrow("database unavailable");
    const retry = c.load("k", g.loader);
    expect(g.calls).toBe(2);
    g.answer(1, 3);
    expect(await retry).toBe(3);
    expect(c.get("k")).toBe(3);
  });

  it("answers a hit without calling the loader, and reloads once the entry has expired", async () => {
    const c = new TtlCache<string, number>(20);
    c.set("k", 1);
    const g = gatedLoader<number>();
    expect(await c.load("k", g.loader)).toBe(1);
    expect(g.calls).toBe(0);
    await new Promise((ok) => setTimeout(ok, 40));
    const p = c.load("k", g.loader);
    expect(g.calls).toBe(1);
    g.answer(0, 2);
    expect(await p).toBe(2);
  });
});
