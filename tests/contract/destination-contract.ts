import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DestinationError } from "../../src/destinations/errors.js";
import type { DestinationAdapter } from "../../src/destinations/types.js";
import type { ContractHarness, ContractTarget } from "./targets.js";

/**
 * The suite every registry entry must pass against its fake. Keys are upper-case so they are already in
 * every destination's canonical form (GitHub upper-cases names).
 */

/** Slugs the suite was registered for; the completeness test compares this with the registry. */
export const contractRuns = new Set<string>();

const INITIAL = { API_KEY: "key-one-value", DB_URL: "postgres://db.internal/app", TOKEN: "tok-3-value" };
const FOREIGN = { HAND_MADE: "someone-else's" };

async function rejection(p: Promise<unknown>): Promise<DestinationError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DestinationError);
  return err as DestinationError;
}

export function destinationContract(adapter: DestinationAdapter, target: ContractTarget): void {
  contractRuns.add(adapter.slug);

  describe(`${adapter.slug} contract`, () => {
    let h: ContractHarness;
    beforeAll(async () => {
      h = await target.start();
    });
    afterAll(async () => {
      await h.fake.close();
    });
    beforeEach(() => {
      h.fake.reset();
    });

    /** Seeds the foreign key, pushes INITIAL, and forgets the calls made so far. */
    async function pushed() {
      h.fake.seed(h.scope, FOREIGN);
      await adapter.apply(h.ctx(), { upsert: { ...INITIAL }, delete: [] });
      h.fake.clearCalls();
    }

    describe("happy", () => {
      it("has a valid fixture config and consistent capabilities", () => {
        expect(() => adapter.configSchema.parse(h.ctx().config)).not.toThrow();
        expect(adapter.capabilities.list).toBe(typeof adapter.list === "function");
        if (adapter.capabilities.listValues || adapter.capabilities.import)
          expect(adapter.capabilities.list).toBe(true);
        for (const k of Object.keys(INITIAL)) expect(adapter.normalizeKey?.(k) ?? k).toBe(k);
      });

      it("pushes a set of secrets, counting every write", async () => {
        const result = await adapter.apply(h.ctx(), { upsert: { ...INITIAL }, delete: [] });
        expect(h.fake.read(h.scope)).toEqual(INITIAL);
        expect(result.writes).toBe(h.fake.writes.length);
        expect(result.writes).toBeGreaterThan(0);
      });

      it("updates one key with exactly one write", async () => {
        await pushed();
        const result = await adapter.apply(h.ctx(), {
          upsert: { DB_URL: "postgres://db.internal/v2" },
          delete: [],
        });
        expect(h.fake.writes).toHaveLength(1);
        expect(result.writes).toBe(1);
        expect(h.fake.read(h.scope)).toEqual({ ...FOREIGN, ...INITIAL, DB_URL: "postgres://db.internal/v2" });
      });

      it("deletes one key with exactly one write and leaves foreign keys alone", async () => {
        await pushed();
        const result = await adapter.apply(h.ctx(), { upsert: {}, delete: ["TOKEN"] });
        expect(result.writes).toBe(1);
        expect(h.fake.writes).toHaveLength(1);
        const { TOKEN: _gone, ...rest } = INITIAL;
        expect(h.fake.read(h.scope)).toEqual({ ...FOREIGN, ...rest });
      });

      it("removes everything it pushed (remove-on-delete) and nothing else", async () => {
        await pushed();
        await adapter.apply(h.ctx(), { upsert: {}, delete: Object.keys(INITIAL) });
        expect(h.fake.read(h.scope)).toEqual(FOREIGN);
      });

      it("treats deleting a key that is already gone as success", async () => {
        await adapter.apply(h.ctx(), { upsert: {}, delete: ["NEVER_EXISTED"] });
        expect(h.fake.read(h.scope)).toEqual({});
      });

      it("lists what is there, with values where the API returns them", async () => {
        if (!adapter.list) return expect(adapter.capabilities.list).toBe(false);
        await pushed();
        const remote = await adapter.list(h.ctx());
        expect([...remote.keys()].sort()).toEqual(Object.keys({ ...FOREIGN, ...INITIAL }).sort());
        const expected = (v: string) => (adapter.capabilities.listValues ? v : null);
        expect(remote.get("API_KEY")).toBe(expected(INITIAL.API_KEY));
      });

      it("lists more than one page", async () => {
        if (!adapter.list) return;
        const n = target.pageSize * 2 + 3;
        const many = Object.fromEntries(
          Array.from({ length: n }, (_, i) => [`KEY_${String(i).padStart(4, "0")}`, `v${i}`]),
        );
        h.fake.seed(h.scope, many);
        const remote = await adapter.list(h.ctx());
        expect(remote.size).toBe(n);
        expect([...remote.keys()].sort()).toEqual(Object.keys(many).sort());
      });
    });

    describe("errors", () => {
      it("429: retryable with a retry delay, and the next attempt succeeds", async () => {
        h.fake.failNext(429, { retryAfter: "2" });
        const err = await rejection(adapter.apply(h.ctx(), { upsert: { ...INITIAL }, delete: [] }));
        expect(err.retryable).toBe(true);
        expect(err.code).toBe("RATE_LIMITED");
        expect(err.retryAfterMs).toBeGreaterThan(0);
        if (target.honoursRetryAfter) expect(err.retryAfterMs).toBe(2000);
        await adapter.apply(h.ctx(), { upsert: { ...INITIAL }, delete: [] });
        expect(h.fake.read(h.scope)).toEqual(INITIAL);
      });

      it("401: not retryable, readable, token-free, after exactly one attempt", async () => {
        h.fake.failNext(401);
        const err = await rejection(adapter.apply(h.ctx(), { upsert: { ...INITIAL }, delete: [] }));
        expect(err.retryable).toBe(false);
        expect(err.code).toBe("UNAUTHORIZED");
        expect(err.message.length).toBeGreaterThan(10);
        for (const s of [...h.secrets, ...Object.values(INITIAL)]) expect(err.message).not.toContain(s);
        expect(h.fake.calls).toHaveLength(1);
      });

      it("5xx: retryable", async () => {
        h.fake.failNext(503);
        const err = await rejection(adapter.apply(h.ctx(), { upsert: { ...INITIAL }, delete: [] }));
        expect(err.retryable).toBe(true);
        expect(err.code).toBe("UNAVAILABLE");
      });

      it("a hung destination: the per-request timeout fires and is retryable", async () => {
        h.fake.failNext(200, { hang: true });
        const err = await rejection(
          adapter.apply(h.ctx({ timeoutMs: 300 }), { upsert: { ...INITIAL }, delete: [] }),
        );
        expect(err.code).toBe("TIMEOUT");
        expect(err.retryable).toBe(true);
      });

      it("refuses a loopback destination unless internal destinations are allowed", async () => {
        if (!target.guarded) return;
        const err = await rejection(
          adapter.apply(h.ctx({ allowInternal: false }), { upsert: { ...INITIAL }, delete: [] }),
        );
        expect(err.code).toBe("BLOCKED_ADDRESS");
        expect(err.retryable).toBe(false);
        expect(err.message).toMatch(/private or internal address/);
        expect(h.fake.calls).toHaveLength(0);
      });
    });

    describe("connection", () => {
      it("validate passes with good credentials", async () => {
        await expect(
          adapter.connection.validate(h.goodCredentials as never, h.io()),
        ).resolves.toBeUndefined();
      });

      it("validate fails with bad credentials: not retryable, readable and token-free", async () => {
        const { credentials, secret } = h.badCredentials;
        const err = await rejection(adapter.connection.validate(credentials as never, h.io()));
        expect(err.retryable).toBe(false);
        expect(err.message).toMatch(/validate/i);
        expect(err.message).not.toContain(secret);
      });

      it("credentials schema accepts the fixture credentials", () => {
        const { method, ...fields } = h.goodCredentials;
        expect(adapter.connection.methods[method]?.safeParse(fields).success).toBe(true);
      });
    });
  });
}
