import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeVault } from "../fakes/hashicorp-vault.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { addMember, bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import { makeOtherOrg } from "../helpers/other-org.js";

/** The wire contract of the sync routes (api.md §2, seed-api.md): shapes, lookup order, statuses. */
let t: TestApp;
let w: World;
let vault: FakeVault;
let project: Json;
let connectionId: string;

const SEED_FIELDS = [
  "id",
  "name",
  "description",
  "isAutoSyncEnabled",
  "version",
  "projectId",
  "folderId",
  "connectionId",
  "createdAt",
  "updatedAt",
  "syncStatus",
  "lastSyncJobId",
  "lastSyncMessage",
  "lastSyncedAt",
  "importStatus",
  "lastImportJobId",
  "lastImportMessage",
  "lastImportedAt",
  "removeStatus",
  "lastRemoveJobId",
  "lastRemoveMessage",
  "lastRemovedAt",
  "syncOptions",
  "connection",
  "environment",
  "folder",
  "destination",
  "destinationConfig",
].sort();

beforeAll(async () => {
  vault = await new FakeVault().start();
  t = await buildTestApp();
  w = await bootstrap(t.app);
  project = await makeProject(t.app, w.adminToken, "Syncs");
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

const body = (name: string, over: Json = {}) => ({
  name,
  projectId: project.id,
  connectionId,
  environment: "dev",
  secretPath: "/",
  isAutoSyncEnabled: false,
  syncOptions: { initialSyncBehavior: "overwrite-destination" },
  destinationConfig: { mount: "secret", path: `ferry/${name}` },
  ...over,
});
const create = (name: string, over: Json = {}, token = w.adminToken) =>
  call(t.app, "POST", "/api/v1/secret-syncs/hashicorp-vault", { token, body: body(name, over) });

describe("happy", () => {
  it("lists exactly the four destinations as options, sorted by name", async () => {
    const j = await ok(call(t.app, "GET", "/api/v1/secret-syncs/options", { token: w.adminToken }));
    expect(j.secretSyncOptions).toEqual([
      {
        name: "AWS Parameter Store",
        destination: "aws-parameter-store",
        connection: "aws",
        canImportSecrets: true,
        canRemoveSecretsOnDeletion: true,
      },
      {
        name: "GitHub",
        destination: "github",
        connection: "github",
        canImportSecrets: false,
        canRemoveSecretsOnDeletion: true,
      },
      {
        name: "Hashicorp Vault",
        destination: "hashicorp-vault",
        connection: "hashicorp-vault",
        canImportSecrets: true,
        canRemoveSecretsOnDeletion: true,
      },
      {
        name: "Trigger.dev",
        destination: "trigger-dev",
        connection: "trigger-dev",
        canImportSecrets: false,
        canRemoveSecretsOnDeletion: true,
      },
    ]);
  });

  it("creates a sync whose response is exactly the seed's secretSync object", async () => {
    const j = await ok(create("shape"));
    const s = j.secretSync as Json;
    expect(Object.keys(s).sort()).toEqual(SEED_FIELDS);
    expect(s).toMatchObject({
      name: "shape",
      description: null,
      destination: "hashicorp-vault",
      isAutoSyncEnabled: false,
      version: 1,
      syncStatus: null,
      destinationConfig: { mount: "secret", path: "ferry/shape" },
      syncOptions: { initialSyncBehavior: "overwrite-destination" },
      connection: { app: "hashicorp-vault", name: "vault", id: connectionId },
      environment: { slug: "dev", name: "Development", id: expect.any(String) },
      folder: { id: s.folderId, path: "/" },
    });
    const byName = await ok(
      call(t.app, "GET", `/api/v1/secret-syncs/hashicorp-vault/sync-name/shape?projectId=${project.id}`, {
        token: w.adminToken,
      }),
    );
    expect(byName.secretSync.id).toBe(s.id);
    const list = await ok(
      call(t.app, "GET", `/api/v1/secret-syncs?projectId=${project.id}`, { token: w.adminToken }),
    );
    expect(list.secretSyncs.map((x: Json) => x.id)).toContain(s.id);
    const perDest = await ok(
      call(t.app, "GET", `/api/v1/secret-syncs/github?projectId=${project.id}`, { token: w.adminToken }),
    );
    expect(perDest.secretSyncs).toEqual([]);
  });

  it("patch bumps the version and queues a run when auto-sync is on; delete returns the row", async () => {
    const id = (await ok(create("patchme"))).secretSync.id;
    const p = await ok(
      call(t.app, "PATCH", `/api/v1/secret-syncs/hashicorp-vault/${id}`, {
        token: w.adminToken,
        body: { description: "hello", isAutoSyncEnabled: true },
      }),
    );
    expect(p.secretSync).toMatchObject({ description: "hello", version: 2, isAutoSyncEnabled: true });
    expect(["pending", "running", "succeeded"]).toContain(p.secretSync.syncStatus);
    const d = await ok(
      call(t.app, "DELETE", `/api/v1/secret-syncs/hashicorp-vault/${id}`, { token: w.adminToken }),
    );
    expect(d.secretSync.id).toBe(id);
    expect(
      (await call(t.app, "GET", `/api/v1/secret-syncs/hashicorp-vault/${id}`, { token: w.adminToken }))
        .status,
    ).toBe(404);
  });
});

describe("errors", () => {
  it("lookup order and messages: 422 non-uuid, 404 missing, 400 wrong destination", async () => {
    expect(
      (await call(t.app, "GET", "/api/v1/secret-syncs/hashicorp-vault/nope", { token: w.adminToken })).status,
    ).toBe(422);
    const missing = "3f1c2a7e-1111-4222-8333-444455556666";
    const m = await call(t.app, "GET", `/api/v1/secret-syncs/hashicorp-vault/${missing}`, {
      token: w.adminToken,
    });
    expect(m.status).toBe(404);
    expect(m.json.message).toBe(`Could not find Hashicorp Vault Sync with ID "${missing}"`);
    const id = (await ok(create("wrongdest"))).secretSync.id;
    const wrong = await call(t.app, "GET", `/api/v1/secret-syncs/github/${id}`, { token: w.adminToken });
    expect(wrong.status).toBe(400);
    expect(wrong.json.message).toBe(`Secret sync with ID "${id}" is not configured for GitHub`);
    const byName = await call(
      t.app,
      "GET",
      `/api/v1/secret-syncs/hashicorp-vault/sync-name/ghost?projectId=${project.id}`,
      {
        token: w.adminToken,
      },
    );
    expect(byName.status).toBe(404);
    expect(byName.json.message).toBe('Could not find Hashicorp Vault Sync with name "ghost"');
  });

  it("missing folder 400, duplicate name 400, bad options 422, removeSecrets enum 422, projectId required 422", async () => {
    const folder = await call(t.app, "POST", "/api/v1/secret-syncs/hashicorp-vault", {
      token: w.adminToken,
      body: body("nofolder", { secretPath: "/nowhere" }),
    });
    expect(folder.status).toBe(400);
    expect(folder.json.message).toBe(
      `Could not find folder with path "/nowhere" in environment "dev" for project with ID "${project.id}"`,
    );
    await ok(create("twice"));
    const dup = await create("twice");
    expect(dup.status).toBe(400);
    expect(dup.json.message).toBe(
      `A Secret Sync with the name "twice" already exists for the project with ID "${project.id}"`,
    );
    expect(
      (
        await create("badschema", {
          syncOptions: { initialSyncBehavior: "overwrite-destination", keySchema: "NO_PLACEHOLDER" },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await create("extra", {
          syncOptions: { initialSyncBehavior: "overwrite-destination", surprise: true },
        })
      ).status,
    ).toBe(422);
    expect((await create("nomount", { destinationConfig: { path: "x" } })).status).toBe(422);
    const id = (await ok(create("enum"))).secretSync.id;
    expect(
      (
        await call(t.app, "DELETE", `/api/v1/secret-syncs/hashicorp-vault/${id}?removeSecrets=maybe`, {
          token: w.adminToken,
        })
      ).status,
    ).toBe(422);
    expect((await call(t.app, "GET", "/api/v1/secret-syncs", { token: w.adminToken })).status).toBe(422);
  });

  it("destinations that cannot import: only overwrite-destination, and import-secrets is a 400", async () => {
    const trig = await call(t.app, "POST", "/api/v1/secret-syncs/trigger-dev", {
      token: w.adminToken,
      body: body("trig", {
        destinationConfig: { projectRef: "proj_x", environment: "dev" },
        syncOptions: { initialSyncBehavior: "import-prioritize-source" },
      }),
    });
    expect(trig.status).toBe(422);
    const r = await call(
      t.app,
      "POST",
      "/api/v1/secret-syncs/github/3f1c2a7e-1111-4222-8333-444455556666/import-secrets?importBehavior=prioritize-source",
      {
        token: w.adminToken,
      },
    );
    expect(r.status).toBe(400);
    expect(r.json.message).toBe("GitHub does not support importing secrets.");
  });

  it("a connection of another app cannot be used (400)", async () => {
    const r = await call(t.app, "POST", "/api/v1/secret-syncs/trigger-dev", {
      token: w.adminToken,
      body: body("mismatch", { destinationConfig: { projectRef: "proj_x", environment: "dev" } }),
    });
    expect(r.status).toBe(400);
    expect(r.json.message).toContain("cannot be used to connect to Trigger.dev");
  });
});

describe("permissions", () => {
  it("viewers read but cannot create or trigger; other orgs get 404", async () => {
    const id = (await ok(create("perm"))).secretSync.id;
    const viewer = await addMember(t.app, w, project.id, "sync-viewer", "viewer");
    expect(
      (await call(t.app, "GET", `/api/v1/secret-syncs/hashicorp-vault/${id}`, { token: viewer.token }))
        .status,
    ).toBe(200);
    expect((await create("viewer-made", {}, viewer.token)).status).toBe(403);
    expect(
      (
        await call(t.app, "POST", `/api/v1/secret-syncs/hashicorp-vault/${id}/sync-secrets`, {
          token: viewer.token,
        })
      ).status,
    ).toBe(403);
    const other = await makeOtherOrg(t);
    expect(
      (await call(t.app, "GET", `/api/v1/secret-syncs/hashicorp-vault/${id}`, { token: other.token })).status,
    ).toBe(404);
    expect(
      (await call(t.app, "GET", `/api/v1/secret-syncs?projectId=${project.id}`, { token: other.token }))
        .status,
    ).toBe(404);
  });
});
