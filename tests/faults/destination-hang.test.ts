import { afterAll, beforeAll, expect, it } from "vitest";
import {
  eventually,
  makeConnection,
  putSecrets,
  type SyncTarget,
  startTargets,
  targetEnv,
  waitForSync,
} from "../e2e/sync-harness.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";

/**
 * A destination that accepts connections and never answers. With SYNC_TIMEOUT_MS small, each call to it
 * times out and the run is retried; meanwhile a sync to a healthy destination completes, even though as
 * many hung syncs as the queue has workers were started first (without a timeout they would hold every
 * worker forever). When the destination answers again, the retried syncs converge.
 */
const HUNG_SYNCS = 4; // = the queue's worker count
const SOURCE = { DB_URL: "postgres://db/app", API_KEY: "hang-test-api-key" };

let t: TestApp;
let w: World;
let targets: Record<SyncTarget["slug"], SyncTarget>;

beforeAll(async () => {
  targets = await startTargets();
  t = await buildTestApp({ env: { ...targetEnv(targets), SYNC_TIMEOUT_MS: "400" } });
  w = await bootstrap(t.app);
}, 60_000);

afterAll(async () => {
  await t?.close();
  for (const target of Object.values(targets ?? {})) await target.fake.close();
});

async function createSync(target: SyncTarget, projectId: string, name: string, destinationConfig: Json) {
  // Connections are validated against the destination, so they are made before it starts hanging.
  const conn = await makeConnection(t.app, w.adminToken, target, name);
  return () =>
    ok(
      call(t.app, "POST", `/api/v1/secret-syncs/${target.slug}`, {
        token: w.adminToken,
        body: {
          name,
          projectId,
          connectionId: conn.id,
          environment: "dev",
          secretPath: "/",
          syncOptions: { initialSyncBehavior: "overwrite-destination" },
          destinationConfig,
        },
      }),
    ).then((j) => j.secretSync.id as string);
}

it("times out, retries, and does not starve a healthy sync", async () => {
  const vault = targets["hashicorp-vault"];
  const aws = targets["aws-parameter-store"];
  const project = await makeProject(t.app, w.adminToken, "Hang");
  await putSecrets(
    t.app,
    w.adminToken,
    { projectId: project.id, environment: "dev", secretPath: "/" },
    SOURCE,
  );

  const hungStarters = [];
  for (let i = 0; i < HUNG_SYNCS; i++)
    hungStarters.push(
      await createSync(vault, project.id, `hung-${i}`, { mount: "secret", path: `ferry/h${i}` }),
    );
  const healthyStart = await createSync(aws, project.id, "healthy", aws.destinationConfig);

  vault.fake.failNext(503, { hang: true, times: 100_000 });
  const hung = await Promise.all(hungStarters.map((start) => start()));
  // Every worker is now stuck on a destination call that will never be answered.
  await eventually(
    () => vault.fake.calls.filter((c) => c.status === 0).length >= HUNG_SYNCS,
    30_000,
    "hung calls",
  );

  const healthy = await healthyStart();
  const done = await waitForSync(
    t.app,
    w.adminToken,
    aws.slug,
    healthy,
    (s) => s.syncStatus !== "pending" && s.syncStatus !== "running",
  );
  expect(done.syncStatus).toBe("succeeded");
  expect(aws.fake.read(aws.scope)).toEqual(SOURCE);

  // The hung syncs have all started and are still going: `running` across timeouts and retries (not
  // failed, and not succeeded since every call they made so far hung).
  for (const id of hung) {
    const s = (
      await ok(call(t.app, "GET", `/api/v1/secret-syncs/${vault.slug}/${id}`, { token: w.adminToken }))
    ).secretSync;
    expect(s.syncStatus).toBe("running");
  }

  // The destination recovers: each hung sync's next retry converges (each was `running` with only hung
  // calls behind it, so its success proves the timeout fired and the run was retried).
  vault.fake.reset();
  for (const [i, id] of hung.entries()) {
    const s = await waitForSync(
      t.app,
      w.adminToken,
      vault.slug,
      id,
      (x) => x.syncStatus === "succeeded" || x.syncStatus === "failed",
      60_000,
    );
    expect(s.syncStatus).toBe("succeeded");
    expect(vault.fake.read(`secret/ferry/h${i}`)).toEqual(SOURCE);
  }
}, 120_000);
