import { afterAll, beforeAll, expect, it } from "vitest";
import { FakeVault } from "../fakes/hashicorp-vault.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import { eventually, putSecrets, waitForSync } from "./sync-harness.js";

/** Key schema + ownership, initial import (prioritize destination), disableSecretDeletion, import-secrets. */
let t: TestApp;
let w: World;
let vault: FakeVault;
let connectionId: string;

beforeAll(async () => {
  vault = await new FakeVault().start();
  t = await buildTestApp();
  w = await bootstrap(t.app);
  connectionId = (
    await ok(
      call(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
        token: w.adminToken,
        body: {
          name: "vault",
          method: "access-token",
          credentials: { instanceUrl: vault.url, accessToken: vault.token },
        },
      }),
    )
  ).appConnection.id;
}, 60_000);

afterAll(async () => {
  await t?.close();
  await vault?.close();
});

async function listSecrets(projectId: string): Promise<Record<string, string>> {
  const j = await ok(
    call(t.app, "GET", `/api/v3/secrets/raw?workspaceId=${projectId}&environment=dev&secretPath=/`, {
      token: w.adminToken,
    }),
  );
  return Object.fromEntries(j.secrets.map((s: Json) => [s.secretKey, s.secretValue]));
}

it("imports first, then owns only what it wrote under its key schema", async () => {
  const project = await makeProject(t.app, w.adminToken, "Semantics");
  const where = { projectId: project.id as string, environment: "dev", secretPath: "/" };
  await putSecrets(t.app, w.adminToken, where, { SHARED: "from-ferry", ONLY_FERRY: "f" });
  // FERRY_SHARED and FERRY_REMOTE match the schema; LEGACY does not. FERRY_STALE matches but was never written by us.
  vault.seed("secret/ferry/sem", { FERRY_SHARED: "from-vault", FERRY_REMOTE: "r", LEGACY: "keep-me" });

  const created = await ok(
    call(t.app, "POST", "/api/v1/secret-syncs/hashicorp-vault", {
      token: w.adminToken,
      body: {
        name: "sem",
        projectId: project.id,
        connectionId,
        environment: "dev",
        secretPath: "/",
        syncOptions: {
          initialSyncBehavior: "import-prioritize-destination",
          keySchema: "FERRY_{{secretKey}}",
        },
        destinationConfig: { mount: "secret", path: "ferry/sem" },
      },
    }),
  );
  const id = created.secretSync.id as string;
  await waitForSync(t.app, w.adminToken, "hashicorp-vault", id, (s) => s.syncStatus === "succeeded");
  // Import took the destination's values (prioritize destination), then the push wrote the rest.
  expect(await listSecrets(project.id)).toEqual({ SHARED: "from-vault", ONLY_FERRY: "f", REMOTE: "r" });
  await eventually(() => vault.read("secret/ferry/sem").FERRY_ONLY_FERRY === "f");
  expect(vault.read("secret/ferry/sem")).toEqual({
    FERRY_SHARED: "from-vault",
    FERRY_REMOTE: "r",
    FERRY_ONLY_FERRY: "f",
    LEGACY: "keep-me",
  });

  // A key matching the schema that the sync never wrote is not deleted; one it wrote is.
  vault.seed("secret/ferry/sem", { ...vault.read("secret/ferry/sem"), FERRY_STALE: "hand-made" });
  await ok(call(t.app, "DELETE", "/api/v4/secrets/ONLY_FERRY", { token: w.adminToken, body: where }));
  await eventually(
    () => !("FERRY_ONLY_FERRY" in vault.read("secret/ferry/sem")),
    30_000,
    "owned key removed",
  );
  expect(vault.read("secret/ferry/sem").FERRY_STALE).toBe("hand-made");
  expect(vault.read("secret/ferry/sem").LEGACY).toBe("keep-me");

  // disableSecretDeletion: deleting in the source leaves the destination key in place.
  await ok(
    call(t.app, "PATCH", `/api/v1/secret-syncs/hashicorp-vault/${id}`, {
      token: w.adminToken,
      body: {
        syncOptions: {
          initialSyncBehavior: "import-prioritize-destination",
          keySchema: "FERRY_{{secretKey}}",
          disableSecretDeletion: true,
        },
      },
    }),
  );
  const before = await waitForSync(
    t.app,
    w.adminToken,
    "hashicorp-vault",
    id,
    (s) => s.syncStatus === "succeeded",
  );
  await ok(call(t.app, "DELETE", "/api/v4/secrets/REMOTE", { token: w.adminToken, body: where }));
  // The auto-sync run that follows the delete: a later successful run.
  const after = await waitForSync(
    t.app,
    w.adminToken,
    "hashicorp-vault",
    id,
    (s) => s.syncStatus === "succeeded" && s.lastSyncedAt > before.lastSyncedAt,
  );
  expect(after.lastSyncMessage).toBeNull();
  expect(vault.read("secret/ferry/sem").FERRY_REMOTE).toBe("r");

  // Manual import (prioritize source) adds destination-only keys and keeps source values.
  vault.seed("secret/ferry/sem", {
    ...vault.read("secret/ferry/sem"),
    FERRY_NEW_REMOTE: "n",
    FERRY_SHARED: "changed",
  });
  await ok(
    call(
      t.app,
      "POST",
      `/api/v1/secret-syncs/hashicorp-vault/${id}/import-secrets?importBehavior=prioritize-source`,
      {
        token: w.adminToken,
      },
    ),
  );
  await waitForSync(t.app, w.adminToken, "hashicorp-vault", id, (s) => s.importStatus === "succeeded");
  const s = await listSecrets(project.id);
  expect(s.NEW_REMOTE).toBe("n");
  expect(s.SHARED).toBe("from-vault");
}, 120_000);
