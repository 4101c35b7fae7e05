import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  change,
  delivered,
  licenseEnv,
  listen,
  type SseStream,
  subscribe,
  waitFor,
} from "../events/sse-client.js";
import { buildTestApp, createTestDatabase, type TestApp } from "../helpers/build-test-app.js";
import { addMember, bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";

/**
 * Two instances on one PostgreSQL and one Redis: a write on either reaches the streams of both, exactly
 * once. CI sets TEST_DATABASE_URL and TEST_REDIS_URL; each run uses its own database and Redis channel.
 */
describe.runIf(Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL))(
  "event subscriptions across instances (Redis)",
  () => {
    let a: TestApp;
    let b: TestApp;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    let w: World;
    let project: Json;
    let baseA: string;
    let baseB: string;
    const open: SseStream[] = [];

    beforeAll(async () => {
      db = await createTestDatabase();
      const env = {
        ...(await licenseEnv()),
        REDIS_URL: process.env.TEST_REDIS_URL ?? "",
        SSE_REDIS_CHANNEL: `ferry:test-events:${randomUUID()}`,
        // Both instances must share keys, as in a real deployment.
        ENCRYPTION_KEY: randomBytes(32).toString("hex"),
        AUTH_SECRET: randomBytes(32).toString("hex"),
      };
      a = await buildTestApp({ dbUrl: db?.url, env });
      b = await buildTestApp({ dbUrl: db?.url, env });
      await Promise.all([a.services.events.ready(), b.services.events.ready()]);
      w = await bootstrap(a.app);
      project = await makeProject(a.app, w.adminToken);
      [baseA, baseB] = [await listen(a.app), await listen(b.app)];
    });
    afterAll(async () => {
      for (const s of open) s.close();
      await a?.close();
      await b?.close();
      await db?.drop();
    });

    it("a subscriber on A sees a write made on B exactly once, and no instance echoes its own", async () => {
      const body = { projectId: project.id, register: [{ event: "secret:create" }] };
      const onA = await subscribe(baseA, w.adminToken, body);
      const onB = await subscribe(baseB, w.adminToken, body);
      open.push(onA, onB);
      expect([onA.status, onB.status]).toEqual([200, 200]);

      b.services.changes.publish(change(project.id, { keys: ["FROM_B"] }));
      a.services.changes.publish(change(project.id, { keys: ["FROM_A"] }));
      const has = (s: SseStream, keys: string[]) => {
        for (const k of keys) expect(delivered(s)).toContain(`secret:create dev / ${k}`);
      };
      for (const s of [onA, onB]) await waitFor(() => has(s, ["FROM_A", "FROM_B"]));
      // A second round from both sides: Redis delivers in order, so once these markers have arrived any
      // duplicate or echo of the first round would have arrived before them.
      a.services.changes.publish(change(project.id, { keys: ["MARKER_A"] }));
      b.services.changes.publish(change(project.id, { keys: ["MARKER_B"] }));
      for (const s of [onA, onB]) {
        await waitFor(() => has(s, ["MARKER_A", "MARKER_B"]));
        expect(delivered(s).sort()).toEqual(
          ["FROM_A", "FROM_B", "MARKER_A", "MARKER_B"].map((k) => `secret:create dev / ${k}`),
        );
      }
    });

    it("revoking a token on B closes its stream on A", async () => {
      const member = await addMember(a.app, w, project.id, "cross-revoke", "member");
      const s = await subscribe(baseA, member.token, {
        projectId: project.id,
        register: [{ event: "secret:create" }],
      });
      open.push(s);
      expect(s.status).toBe(200);
      await ok(call(b.app, "POST", "/api/v1/auth/token/revoke", { body: { accessToken: member.token } }));
      await s.done;
      expect(s.raw()).toContain('event: error\ndata: {"message":"Permission denied or refresh failed"}');
    });
  },
);
