import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOST_JOB_MESSAGE } from "../../src/features/syncs/stale-sweep.js";
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

/** No status stays `running` forever: a run whose job is gone is failed by the sweep, readably. */
let t: TestApp;
let w: World;
let targets: Record<SyncTarget["slug"], SyncTarget>;

beforeAll(async () => {
  ({ t, w, targets } = await startSyncWorld());
}, 60_000);

afterAll(() => stopSyncWorld({ t, targets }));

describe("stale status sweep", () => {
  it("fails a `running` status whose job is gone, only after seeing it stuck twice", async () => {
    const target = targets["hashicorp-vault"];
    const project = await makeProject(t.app, w.adminToken, "Stale");
    await putSecrets(
      t.app,
      w.adminToken,
      { projectId: project.id, environment: "dev", secretPath: "/" },
      { K: "v" },
    );
    const conn = await makeConnection(t.app, w.adminToken, target, "stale");
    const created = await ok(
      call(t.app, "POST", "/api/v1/secret-syncs/hashicorp-vault", {
        token: w.adminToken,
        body: {
          name: "stale",
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
    await waitForSync(t.app, w.adminToken, "hashicorp-vault", id, (s) => s.syncStatus === "succeeded");

    // Auto-sync may still have a debounced job queued from the writes above: wait until the queue is idle.
    const liveJobs = async () =>
      (
        await t.services.dbh.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'secret-sync' AND state IN ('created', 'retry', 'active')",
        )
      ).rows[0]?.n;
    const deadline = Date.now() + 30_000;
    while ((await liveJobs()) !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await liveJobs()).toBe(0);
    await waitForSync(t.app, w.adminToken, "hashicorp-vault", id, (s) => s.syncStatus === "succeeded");

    // Simulate a worker that died after its retries ran out: the row says running, no job exists.
    await t.services.dbh.query("UPDATE secret_syncs SET sync_status = 'running' WHERE id = $1", [id]);
    const sweep = t.services.syncStatusSweep;
    expect(await sweep.sweep()).toBe(0); // first sighting: only a suspect
    const still = await ok(
      call(t.app, "GET", `/api/v1/secret-syncs/hashicorp-vault/${id}`, { token: w.adminToken }),
    );
    expect(still.secretSync.syncStatus).toBe("running");
    expect(await sweep.sweep()).toBe(1);
    const after = await ok(
      call(t.app, "GET", `/api/v1/secret-syncs/hashicorp-vault/${id}`, { token: w.adminToken }),
    );
    expect(after.secretSync).toMatchObject({ syncStatus: "failed", lastSyncMessage: LOST_JOB_MESSAGE });

    // A run triggered again starts cleanly.
    await ok(
      call(t.app, "POST", `/api/v1/secret-syncs/hashicorp-vault/${id}/sync-secrets`, { token: w.adminToken }),
    );
    await waitForSync(t.app, w.adminToken, "hashicorp-vault", id, (s) => s.syncStatus === "succeeded");
  });
});
