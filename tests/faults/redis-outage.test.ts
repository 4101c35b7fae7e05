import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { delivered, licenseEnv, listen, type SseStream, subscribe, waitFor } from "../events/sse-client.js";
import { buildTestApp, createTestDatabase, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import {
  faultTestsEnabled,
  hasRedisServer,
  type PrivatePostgres,
  type PrivateRedis,
  pgBinDir,
  startPrivatePostgres,
  startPrivateRedis,
} from "../helpers/private-services.js";
import { until } from "./fault-http.js";

/**
 * Redis goes away under two instances that share a PostgreSQL database and a PRIVATE redis-server, each
 * with an event subscriber. While Redis is down, writes still succeed and each instance's own subscribers
 * still get its events (local delivery); once Redis is back the cross-instance bridge recovers on its
 * own, in both directions, and nothing is delivered twice.
 */
describe.runIf(faultTestsEnabled && hasRedisServer() && Boolean(process.env.TEST_DATABASE_URL || pgBinDir()))(
  "Redis stopped under two instances",
  () => {
    let redis: PrivateRedis;
    let privatePg: PrivatePostgres | undefined;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let a: TestApp;
    let b: TestApp;
    let w: World;
    let project: Json;
    const open: SseStream[] = [];

    beforeAll(async () => {
      redis = await startPrivateRedis();
      db = await createTestDatabase();
      if (!db) privatePg = await startPrivatePostgres();
      const dbUrl = db?.url ?? (await (privatePg as PrivatePostgres).createDatabase("redis_outage"));
      const env = {
        ...(await licenseEnv()),
        REDIS_URL: redis.url,
        ENCRYPTION_KEY: randomBytes(32).toString("hex"),
        AUTH_SECRET: randomBytes(32).toString("hex"),
      };
      a = await buildTestApp({ dbUrl, env });
      b = await buildTestApp({ dbUrl, env });
      await Promise.all([a.services.events.ready(), b.services.events.ready()]);
      w = await bootstrap(a.app);
      project = await makeProject(a.app, w.adminToken, "RedisOutage");
    }, 60_000);
    afterAll(async () => {
      for (const s of open) s.close();
      await a?.close();
      await b?.close();
      await db?.drop();
      await redis?.stop();
      await privatePg?.destroy();
    });

    const write = (t: TestApp, key: string) =>
      ok(
        call(t.app, "POST", `/api/v3/secrets/raw/${key}`, {
          token: w.adminToken,
          body: { workspaceId: project.id, environment: "dev", secretPath: "/", secretValue: `v-${key}` },
        }),
      );
    const keysOf = (s: SseStream) => delivered(s).map((d) => d.split(" ").at(-1) as string);

    it("keeps local delivery during the outage and the bridge recovers after it", async () => {
      const body = { projectId: project.id, register: [{ event: "secret:create" }] };
      const onA = await subscribe(await listen(a.app), w.adminToken, body);
      const onB = await subscribe(await listen(b.app), w.adminToken, body);
      open.push(onA, onB);
      expect([onA.status, onB.status]).toEqual([200, 200]);

      await write(a, "BEFORE");
      for (const s of [onA, onB]) await waitFor(() => expect(keysOf(s)).toContain("BEFORE"));

      await redis.stop();
      // Writes still succeed (Redis is not on the write path) and reach the writer's own subscribers.
      await write(a, "DURING_A");
      await write(b, "DURING_B");
      await waitFor(() => expect(keysOf(onA)).toContain("DURING_A"));
      await waitFor(() => expect(keysOf(onB)).toContain("DURING_B"));

      await redis.start();
      // ioredis reconnects with backoff and re-subscribes by itself: keep writing fresh keys on each side
      // until one reaches the other instance.
      let n = 0;
      for (const [from, to, tag] of [
        [b, onA, "B2A"],
        [a, onB, "A2B"],
      ] as const) {
        await until(`${tag} delivery after Redis is back`, 30_000, async () => {
          await write(from, `${tag}_${n++}`);
          await new Promise((r) => setTimeout(r, 200));
          return keysOf(to).some((k) => k.startsWith(tag)) ? true : undefined;
        });
      }
      // A marker from each side, then check: nothing delivered twice, and local events never lost.
      await write(a, "MARK_A");
      await write(b, "MARK_B");
      for (const s of [onA, onB]) {
        await waitFor(() => expect(keysOf(s)).toEqual(expect.arrayContaining(["MARK_A", "MARK_B"])));
        expect(new Set(keysOf(s)).size, keysOf(s).join(",")).toBe(keysOf(s).length);
      }
      expect(keysOf(onA)).toContain("DURING_A");
      expect(keysOf(onB)).toContain("DURING_B");
    }, 90_000);
  },
);
