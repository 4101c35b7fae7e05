import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/build-test-app.js";
import { call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import {
  eventually,
  makeConnection,
  putSecrets,
  type SyncTarget,
  startSyncWorld,
  stopSyncWorld,
  waitForSync,
} from "./sync-harness.js";

/**
 * The "must show", through the HTTP API against each destination's fake: create with auto-sync,
 * update one secret (exactly that key written), delete one (removed), a foreign key never touched, and
 * delete with removeSecrets=true leaves the destination clean.
 */
let t: TestApp;
let w: World;
let targets: Record<SyncTarget["slug"], SyncTarget>;

beforeAll(async () => {
  ({ t, w, targets } = await startSyncWorld());
}, 60_000);

afterAll(() => stopSyncWorld({ t, targets }));

const SOURCE = { API_KEY: "key-one-value", DB_URL: "postgres://db.internal/app", TOKEN: "tok-3-value" };
const FOREIGN = { HAND_MADE: "someone-elses" };

describe.each(["hashicorp-vault", "trigger-dev", "github", "aws-parameter-store"] as const)(
  "%s end to end",
  (slug) => {
    it("keeps the destination equal to the source, writes only what changed, never touches foreign keys", async () => {
      const target = targets[slug];
      const { fake, scope } = target;
      fake.reset();
      fake.seed(scope, FOREIGN);
      const project = await makeProject(t.app, w.adminToken, `p-${slug}`);
      const where = { projectId: project.id as string, environment: "dev", secretPath: "/" };
      await putSecrets(t.app, w.adminToken, where, SOURCE);
      const conn = await makeConnection(t.app, w.adminToken, target, `conn-${slug}`);

      // 1. create with auto-sync: the destination then holds exactly the source (plus the foreign key).
      const created = await ok(
        call(t.app, "POST", `/api/v1/secret-syncs/${slug}`, {
          token: w.adminToken,
          body: {
            name: `sync-${slug}`,
            projectId: project.id,
            connectionId: conn.id,
            environment: "dev",
            secretPath: "/",
            syncOptions: { initialSyncBehavior: "overwrite-destination" },
            destinationConfig: target.destinationConfig,
          },
        }),
      );
      const id = created.secretSync.id as string;
      expect(created.secretSync.syncStatus).toBe("pending");
      const first = await waitForSync(t.app, w.adminToken, slug, id, (s) => s.syncStatus === "succeeded");
      expect(first.lastSyncMessage).toBeNull();
      expect(first.lastSyncJobId).toEqual(expect.any(String));
      expect(first.lastSyncedAt).not.toBeNull();
      expect(fake.read(scope)).toEqual({ ...FOREIGN, ...SOURCE });

      // 2. update one secret: exactly that key is written (Vault: one KV write of the one entry).
      fake.clearCalls();
      await ok(
        call(t.app, "PATCH", "/api/v4/secrets/DB_URL", {
          token: w.adminToken,
          body: { ...where, secretValue: "postgres://db.internal/v2" },
        }),
      );
      await eventually(
        () => fake.read(scope).DB_URL === "postgres://db.internal/v2",
        30_000,
        "update to arrive",
      );
      await waitForSync(t.app, w.adminToken, slug, id, (s) => s.syncStatus === "succeeded");
      expect(fake.writes).toHaveLength(1);
      expect(JSON.stringify(fake.writes[0])).toContain("DB_URL");
      expect(fake.read(scope)).toEqual({ ...FOREIGN, ...SOURCE, DB_URL: "postgres://db.internal/v2" });

      // 3. delete one secret: it is removed, the foreign key stays.
      fake.clearCalls();
      await ok(call(t.app, "DELETE", "/api/v4/secrets/TOKEN", { token: w.adminToken, body: where }));
      await eventually(() => !("TOKEN" in fake.read(scope)), 30_000, "delete to arrive");
      await waitForSync(t.app, w.adminToken, slug, id, (s) => s.syncStatus === "succeeded");
      expect(fake.writes).toHaveLength(1);
      expect(fake.read(scope)).toEqual({
        ...FOREIGN,
        API_KEY: SOURCE.API_KEY,
        DB_URL: "postgres://db.internal/v2",
      });

      // Preview after convergence: nothing to do, the foreign key is reported and left alone.
      const preview = (
        await ok(call(t.app, "POST", `/api/v1/secret-syncs/${slug}/${id}/preview`, { token: w.adminToken }))
      ).preview as Json;
      expect(preview).toEqual({
        create: [],
        update: [],
        delete: [],
        unchanged: ["API_KEY", "DB_URL"],
        foreign: ["HAND_MADE"],
      });

      // 4. delete with removeSecrets=true: the destination is clean (only the foreign key remains).
      const del = await ok(
        call(t.app, "DELETE", `/api/v1/secret-syncs/${slug}/${id}?removeSecrets=true`, {
          token: w.adminToken,
        }),
      );
      expect(del.secretSync.removeStatus).toBe("pending");
      const gone = await waitForSync(t.app, w.adminToken, slug, id, () => false, 30_000).catch((e: Error) => {
        throw e;
      });
      expect(gone).toEqual({ gone: true });
      expect(fake.read(scope)).toEqual(FOREIGN);
    }, 120_000);
  },
);
