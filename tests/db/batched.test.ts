import { describe, expect, it } from "vitest";
import { batched } from "../../src/db/batched.js";

/** `batched`: calls made in one event-loop turn share one `many` call; alone, a call runs `one`. */
describe("batched", () => {
  function recorder(opts: { manyFails?: boolean; oneFailsFor?: number } = {}) {
    const calls: { kind: "one" | "many"; keys: number[] }[] = [];
    const loader = batched<number, string>(
      async (k) => {
        calls.push({ kind: "one", keys: [k] });
        if (k === opts.oneFailsFor) throw new Error(`no ${k}`);
        return `one:${k}`;
      },
      async (ks) => {
        calls.push({ kind: "many", keys: [...ks] });
        if (opts.manyFails) throw new Error("batch failed");
        return ks.map((k) => `many:${k}`);
      },
      4,
    );
    return { calls, loader };
  }

  it("answers the calls of one turn with one `many` call, in call order", async () => {
    const { calls, loader } = recorder();
    const out = await Promise.all([3, 1, 2].map((k) => loader.load(k)));
    expect(out).toEqual(["many:3", "many:1", "many:2"]);
    expect(calls).toEqual([{ kind: "many", keys: [3, 1, 2] }]);
  });

  it("runs a call that is alone in its turn through `one`", async () => {
    const { calls, loader } = recorder();
    expect(await loader.load(7)).toBe("one:7");
    expect(await loader.load(8)).toBe("one:8");
    expect(calls).toEqual([
      { kind: "one", keys: [7] },
      { kind: "one", keys: [8] },
    ]);
  });

  it("collects calls made after awaits that settle within the same turn", async () => {
    const { calls, loader } = recorder();
    const later = async (k: number) => {
      await Promise.resolve();
      await null;
      return loader.load(k);
    };
    expect(await Promise.all([later(1), loader.load(2), later(3)])).toEqual(["many:1", "many:2", "many:3"]);
    expect(calls).toEqual([{ kind: "many", keys: [2, 1, 3] }]);
  });

  it("splits a turn's calls into batches of at most maxBatchSize", async () => {
    const { calls, loader } = recorder();
    const out = await Promise.all([1, 2, 3, 4, 5, 6].map((k) => loader.load(k)));
    expect(out).toEqual([1, 2, 3, 4, 5, 6].map((k) => `many:${k}`));
    expect(calls).toEqual([
      { kind: "many", keys: [1, 2, 3, 4] },
      { kind: "many", keys: [5, 6] },
    ]);
  });

  it("keeps separate turns apart", async () => {
    const { calls, loader } = recorder();
    const first = Promise.all([loader.load(1), loader.load(2)]);
    await new Promise((ok) => setImmediate(ok));
    const second = Promise.all([loader.load(3), loader.load(4)]);
    expect([...(await first), ...(await second)]).toEqual(["many:1", "many:2", "many:3", "many:4"]);
    expect(calls.map((c) => c.keys)).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it("when `many` fails, retries every call alone, so one call's error stays its own", async () => {
    const { calls, loader } = recorder({ manyFails: true, oneFailsFor: 2 });
    const out = await Promise.allSettled([1, 2, 3].map((k) => loader.load(k)));
    expect(out[0]).toEqual({ status: "fulfilled", value: "one:1" });
    expect(out[1]).toMatchObject({ status: "rejected", reason: { message: "no 2" } });
    expect(out[2]).toEqual({ status: "fulfilled", value: "one:3" });
    expect(calls).toEqual([
      { kind: "many", keys: [1, 2, 3] },
      { kind: "one", keys: [1] },
      { kind: "one", keys: [2] },
      { kind: "one", keys: [3] },
    ]);
  });

  it("never caches: the same key loaded twice reaches the source twice", async () => {
    const { calls, loader } = recorder();
    expect(await loader.load(5)).toBe("one:5");
    expect(await loader.load(5)).toBe("one:5");
    expect(calls).toHaveLength(2);
  });
});
