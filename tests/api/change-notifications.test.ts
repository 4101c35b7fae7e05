import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { rowsOf } from "../../src/db/client.js";
import type { SecretChange } from "../../src/features/events/change-bus.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import { createV3, makeFolder, makeUser } from "./secrets-helpers.js";

/**
 * Issue 3, item 7: every secret mutation publishes one SecretChange per affected folder, after commit;
 * a rolled-back write publishes nothing; importing folders get one `import-changed` each.
 */
describe("secret change notifications", () => {
  let t: TestApp;
  let w: World;
  let p: Json;
  let seen: SecretChange[] = [];
  /** For each notification: the version of secret A1 that another connection read when it arrived. */
  let versionsAtPublish: Promise<number | undefined>[] = [];

  const versionOf = async (key: string, path: string) => {
    const rows = await rowsOf<{ version: number }>(
      sql`SELECT s.version FROM secrets s JOIN folders f ON f.id = s.folder_id JOIN environments e ON e.id = f.env_id
        WHERE e.project_id = ${p.id} AND e.slug = 'dev' AND f.path = ${path} AND s.key = ${key}`,
      t.services.db,
    );
    return rows[0]?.version;
  };

  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
    p = await makeProject(t.app, w.adminToken, "Notify");
    await makeFolder(t.app, w.adminToken, p.id, "dev", "/", "a");
    await makeFolder(t.app, w.adminToken, p.id, "dev", "/", "b");
    await makeFolder(t.app, w.adminToken, p.id, "dev", "/", "c");
    await createV3(t.app, w.adminToken, p.id, "A1", "1", { secretPath: "/a" });
    await createV3(t.app, w.adminToken, p.id, "A2", "1", { secretPath: "/a" });
    await createV3(t.app, w.adminToken, p.id, "B1", "1", { secretPath: "/b" });
    await createV3(t.app, w.adminToken, p.id, "TAKEN", "1", { secretPath: "/b" });
    t.services.changes.subscribe((c) => {
      seen.push(c);
      // Read through the pool (another connection on PostgreSQL): a publish before commit would see
      // the old version here.
      versionsAtPublish.push(versionOf("A1", "/a"));
    });
  });
  beforeEach(() => {
    seen = [];
    versionsAtPublish = [];
  });
  afterAll(async () => t.close());

  const batchUpdate = (secrets: Json[]) =>
    call(t.app, "PATCH", "/api/v4/secrets/batch", {
      token: w.adminToken,
      body: { projectId: p.id, environment: "dev", secretPath: "/", secrets },
    });

  it("one batch update across two folders emits exactly one notification per folder, after commit", async () => {
    const before = await versionOf("A1", "/a");
    await ok(
      batchUpdate([
        { secretKey: "A1", secretValue: "2", secretPath: "/a" },
        { secretKey: "A2", secretValue: "2", secretPath: "/a" },
        { secretKey: "B1", secretValue: "2", secretPath: "/b" },
      ]),
    );
    expect(seen).toHaveLength(2);
    const byPath = Object.fromEntries(seen.map((c) => [c.secretPath, c]));
    expect(byPath["/a"]).toMatchObject({
      projectId: p.id,
      environment: "dev",
      kind: "updated",
      personal: false,
    });
    expect(byPath["/a"]?.keys.sort()).toEqual(["A1", "A2"]);
    expect(byPath["/b"]).toMatchObject({ kind: "updated", keys: ["B1"], personal: false });
    expect(byPath["/a"]?.environmentId).toEqual(expect.any(String));
    expect(byPath["/a"]?.folderId).not.toBe(byPath["/b"]?.folderId);
    // Both listeners ran after the write was visible to other connections.
    for (const v of await Promise.all(versionsAtPublish)) expect(v).toBe((before ?? 0) + 1);
  });

  it("a rolled-back batch (a later item fails inside the transaction) publishes nothing", async () => {
    const before = await versionOf("A1", "/a");
    const r = await batchUpdate([
      { secretKey: "A1", secretValue: "never", secretPath: "/a" },
      { secretKey: "B1", newSecretName: "TAKEN", secretPath: "/b" },
    ]);
    expect(r.status).toBe(400);
    expect(seen).toEqual([]);
    expect(await versionOf("A1", "/a")).toBe(before); // A1's update was rolled back too

    const dup = await call(t.app, "POST", "/api/v3/secrets/batch/raw", {
      token: w.adminToken,
      body: {
        workspaceId: p.id,
        environment: "dev",
        secretPath: "/c",
        secrets: [
          { secretKey: "NEW1", secretValue: "x" },
          { secretKey: "NEW1", secretValue: "y" },
        ],
      },
    });
    expect(dup.status).toBe(400);
    expect(seen).toEqual([]);
  });

  it("single writes on every route publish one notification each with the right kind", async () => {
    await createV3(t.app, w.adminToken, p.id, "S1", "x", { secretPath: "/c" });
    await ok(
      call(t.app, "PATCH", "/api/v4/secrets/S1", {
        token: w.adminToken,
        body: { projectId: p.id, environment: "dev", secretPath: "/c", secretValue: "y" },
      }),
    );
    await ok(
      call(t.app, "DELETE", "/api/v3/secrets/raw/S1", {
        token: w.adminToken,
        body: { workspaceId: p.id, environment: "dev", secretPath: "/c" },
      }),
    );
    await ok(
      call(t.app, "POST", "/api/v4/secrets/S2", {
        token: w.adminToken,
        body: { projectId: p.id, environment: "dev", secretPath: "/c", secretValue: "z" },
      }),
    );
    await ok(
      call(t.app, "DELETE", "/api/v4/secrets/S2", {
        token: w.adminToken,
        body: { projectId: p.id, environment: "dev", secretPath: "/c" },
      }),
    );
    expect(seen.map((c) => [c.kind, c.keys, c.secretPath])).toEqual([
      ["created", ["S1"], "/c"],
      ["updated", ["S1"], "/c"],
      ["deleted", ["S1"], "/c"],
      ["created", ["S2"], "/c"],
      ["deleted", ["S2"], "/c"],
    ]);
    // Failed writes publish nothing.
    seen = [];
    const missing = await call(t.app, "DELETE", "/api/v4/secrets/S2", {
      token: w.adminToken,
      body: { projectId: p.id, environment: "dev", secretPath: "/c" },
    });
    expect(missing.status).toBe(404);
    expect(seen).toEqual([]);
  });

  it("personal overrides are marked personal", async () => {
    const u = await makeUser(t.app, w, "notify-user@example.com", p.id);
    seen = [];
    await createV3(t.app, u.token, p.id, "A1", "mine", { secretPath: "/a", type: "personal" });
    await ok(
      call(t.app, "DELETE", "/api/v4/secrets/A1", {
        token: u.token,
        body: { projectId: p.id, environment: "dev", secretPath: "/a", type: "personal" },
      }),
    );
    expect(seen.map((c) => [c.kind, c.personal])).toEqual([
      ["created", true],
      ["deleted", true],
    ]);
  });

  it("folders importing a changed folder get exactly one import-changed each", async () => {
    // /c imports /a; prod root imports /c (two hops).
    for (const [env, path, from] of [
      ["dev", "/c", "/a"],
      ["prod", "/", "/c"],
    ] as const) {
      await ok(
        call(t.app, "POST", "/api/v1/secret-imports", {
          token: w.adminToken,
          body: { workspaceId: p.id, environment: env, path, import: { environment: "dev", path: from } },
        }),
      );
    }
    seen = [];
    await ok(batchUpdate([{ secretKey: "A1", secretValue: "3", secretPath: "/a" }]));
    expect(seen.map((c) => [c.kind, c.environment, c.secretPath]).sort()).toEqual([
      ["import-changed", "dev", "/c"],
      ["import-changed", "prod", "/"],
      ["updated", "dev", "/a"],
    ]);
    seen = [];
    await ok(
      call(t.app, "DELETE", "/api/v4/secrets/A2", {
        token: w.adminToken,
        body: { projectId: p.id, environment: "dev", secretPath: "/a" },
      }),
    );
    expect(seen.map((c) => [c.kind, c.environment, c.secretPath]).sort()).toEqual([
      ["deleted", "dev", "/a"],
      ["import-changed", "dev", "/c"],
      ["import-changed", "prod", "/"],
    ]);
  });
});
