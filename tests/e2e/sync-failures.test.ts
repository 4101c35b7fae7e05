import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/build-test-app.js";
import { call, makeProject, ok, type World } from "../helpers/fixtures.js";
import {
  makeConnection,
  putSecrets,
  type SyncTarget,
  startSyncWorld,
  stopSyncWorld,
  waitForSync,
} from "./sync-harness.js";

/** Retries: a 429-then-200 destination ends `succeeded`; a 401 destination fails once, readably. */
let t: TestApp;
let w: World;
let targets: Record<SyncTarget["slug"], SyncTarget>;

beforeAll(async () => {
  ({ t, w, targets } = await startSyncWorld());
}, 60_000);

afterAll(() => stopSyncWorld({ t, targets }));

const SOURCE = { API_KEY: "key-one-value", SECRET_TWO: "second-secret-value" };

async function setup(slug: SyncTarget["slug"], name: string) {
  const target = targets[slug];
  target.fake.reset();
  const project = await makeProject(t.app, w.adminToken, name);
  await putSecrets(
    t.app,
    w.adminToken,
    { projectId: project.id, environment: "dev", secretPath: "/" },
    SOURCE,
  );
  const conn = await makeConnection(t.app, w.adminToken, target, name);
  // The secrets just written trigger auto-sync lookups, collected for 100 ms. A sync created inside that
  // window is found by the lookup and runs a second time after its initial sync, which the call counts
  // below would read as a retry. Let the window close first.
  await new Promise((ok) => setTimeout(ok, 300));
  const create = () =>
    ok(
      call(t.app, "POST", `/api/v1/secret-syncs/${slug}`, {
        token: w.adminToken,
        body: {
          name,
          projectId: project.id,
          connectionId: conn.id,
          environment: "dev",
          secretPath: "/",
          syncOptions: { initialSyncBehavior: "overwrite-destination" },
          destinationConfig: target.destinationConfig,
        },
      }),
    );
  return { target, create };
}

describe.each(["hashicorp-vault", "trigger-dev", "github", "aws-parameter-store"] as const)(
  "%s failures",
  (slug) => {
    it("429 then 200: retried with backoff and ends succeeded", async () => {
      const { target, create } = await setup(slug, `rl-${slug}`);
      target.fake.clearCalls();
      target.fake.failNext(429, { retryAfter: "1" });
      const id = (await create()).secretSync.id as string;
      const done = await waitForSync(
        t.app,
        w.adminToken,
        slug,
        id,
        (s) => s.syncStatus === "succeeded" || s.syncStatus === "failed",
      );
      expect(done.syncStatus).toBe("succeeded");
      expect(done.lastSyncMessage).toBeNull();
      // The first request was throttled (AWS answers 400 ThrottlingException, the others 429).
      expect(target.fake.calls[0]?.status).toBeGreaterThanOrEqual(400);
      expect(target.fake.read(target.scope)).toEqual(SOURCE);
    }, 60_000);

    it("401: fails after one attempt with a readable, token-free message and no retry storm", async () => {
      const { target, create } = await setup(slug, `auth-${slug}`);
      target.fake.clearCalls();
      target.fake.failNext(401, { times: 1000 });
      const id = (await create()).secretSync.id as string;
      const done = await waitForSync(
        t.app,
        w.adminToken,
        slug,
        id,
        (s) => s.syncStatus === "failed" || s.syncStatus === "succeeded",
      );
      expect(done.syncStatus).toBe("failed");
      expect(typeof done.lastSyncMessage).toBe("string");
      expect(done.lastSyncMessage.length).toBeGreaterThan(10);
      expect(done.lastSyncMessage.length).toBeLessThanOrEqual(1024);
      expect(done.lastSyncedAt).toBeNull();
      for (const v of [...Object.values(SOURCE), ...Object.values(target.connection.credentials)]) {
        if (typeof v === "string" && v.length > 8 && !v.startsWith("http"))
          expect(done.lastSyncMessage).not.toContain(v);
      }
      // One attempt: the first request was refused (AWS: 400 UnrecognizedClientException) and nothing followed.
      expect(target.fake.calls).toHaveLength(1);
      expect(target.fake.calls[0]?.status).toBeGreaterThanOrEqual(400);
    }, 60_000);
  },
);
