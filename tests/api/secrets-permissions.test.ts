import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { addMember, bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import { createV3, getV3, makeFolder, makeRole } from "./secrets-helpers.js";

/** Issue 3, item 8 for secrets: every route checks the caller's rules, path conditions included. */
describe("secrets: permissions", () => {
  let t: TestApp;
  let w: World;
  let p: Json;
  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
    p = await makeProject(t.app, w.adminToken, "Perms");
    await makeFolder(t.app, w.adminToken, p.id, "dev", "/", "app");
    await makeFolder(t.app, w.adminToken, p.id, "dev", "/", "other");
    await createV3(t.app, w.adminToken, p.id, "ROOT_S", "root-value");
    await createV3(t.app, w.adminToken, p.id, "APP_S", "app-value", { secretPath: "/app" });
    await createV3(t.app, w.adminToken, p.id, "OTHER_S", "other-value", { secretPath: "/other" });
  });
  afterAll(async () => t.close());

  const writes = (token: string, path: string, key: string) => [
    call(t.app, "POST", `/api/v3/secrets/raw/NEW_${key}`, {
      token,
      body: { workspaceId: p.id, environment: "dev", secretPath: path, secretValue: "x" },
    }),
    call(t.app, "PATCH", `/api/v4/secrets/${key}`, {
      token,
      body: { projectId: p.id, environment: "dev", secretPath: path, secretValue: "y" },
    }),
    call(t.app, "DELETE", `/api/v3/secrets/raw/${key}`, {
      token,
      body: { workspaceId: p.id, environment: "dev", secretPath: path },
    }),
    call(t.app, "POST", "/api/v4/secrets/batch", {
      token,
      body: {
        projectId: p.id,
        environment: "dev",
        secretPath: path,
        secrets: [{ secretKey: `B_${key}`, secretValue: "x" }],
      },
    }),
    call(t.app, "PATCH", "/api/v3/secrets/batch/raw", {
      token,
      body: {
        workspaceId: p.id,
        environment: "dev",
        secretPath: path,
        secrets: [{ secretKey: key, secretValue: "z" }],
      },
    }),
    call(t.app, "DELETE", "/api/v4/secrets/batch", {
      token,
      body: { projectId: p.id, environment: "dev", secretPath: path, secrets: [{ secretKey: key }] },
    }),
  ];

  it("a viewer reads values but every write is 403 PermissionDenied", async () => {
    const viewer = await addMember(t.app, w, p.id, "viewer", "viewer");
    const list = await ok(
      call(t.app, "GET", `/api/v3/secrets/raw?workspaceId=${p.id}&environment=dev&recursive=true`, {
        token: viewer.token,
      }),
    );
    expect((list.secrets as Json[]).map((s) => s.secretValue).sort()).toEqual([
      "app-value",
      "other-value",
      "root-value",
    ]);
    expect((await getV3(t.app, viewer.token, p.id, "ROOT_S")).json.secret.secretValue).toBe("root-value");
    for (const r of await Promise.all(writes(viewer.token, "/", "ROOT_S"))) {
      expect(r.status, r.body).toBe(403);
      expect(r.json.error).toBe("PermissionDenied");
    }
    expect((await getV3(t.app, viewer.token, p.id, "ROOT_S")).json.secret.version).toBe(1);
  });

  it("a role limited to /app/** in dev works under /app and cannot touch /other", async () => {
    await makeRole(t.app, w.adminToken, p.id, "app-dev", [
      {
        subject: "secrets",
        action: ["describeSecret", "readValue", "create", "edit", "delete"],
        conditions: { environment: "dev", secretPath: { $glob: "/app/**" } },
      },
    ]);
    const scoped = await addMember(t.app, w, p.id, "scoped", "app-dev");
    for (const r of await Promise.all(writes(scoped.token, "/other", "OTHER_S"))) {
      expect(r.status, r.body).toBe(403);
    }
    const read = await call(
      t.app,
      "GET",
      `/api/v4/secrets/OTHER_S?projectId=${p.id}&environment=dev&secretPath=/other`,
      {
        token: scoped.token,
      },
    );
    expect(read.status).toBe(403);
    const otherList = await call(
      t.app,
      "GET",
      `/api/v4/secrets?projectId=${p.id}&environment=dev&secretPath=/other`,
      {
        token: scoped.token,
      },
    );
    expect(otherList.status).toBe(403);
    // Inside its subtree the role lists and edits normally.
    const app = await ok(
      call(t.app, "GET", `/api/v4/secrets?projectId=${p.id}&environment=dev&secretPath=/app`, {
        token: scoped.token,
      }),
    );
    expect((app.secrets as Json[]).map((s) => s.secretKey)).toEqual(["APP_S"]);
    const ok1 = await call(t.app, "PATCH", "/api/v4/secrets/APP_S", {
      token: scoped.token,
      body: { projectId: p.id, environment: "dev", secretPath: "/app", secretValue: "scoped-edit" },
    });
    expect(ok1.status).toBe(200);
    const prod = await call(t.app, "POST", "/api/v4/secrets/P", {
      token: scoped.token,
      body: { projectId: p.id, environment: "prod", secretValue: "x" },
    });
    expect(prod.status).toBe(403);
  });

  it("without readValue values are hidden in lists, and a value read by name is refused", async () => {
    await makeRole(t.app, w.adminToken, p.id, "describer", [
      { subject: "secrets", action: ["describeSecret"] },
    ]);
    const d = await addMember(t.app, w, p.id, "describer", "describer");
    const list = await ok(
      call(t.app, "GET", `/api/v4/secrets?projectId=${p.id}&environment=dev`, { token: d.token }),
    );
    expect(list.secrets[0]).toMatchObject({
      secretKey: "ROOT_S",
      secretValue: "<hidden-by-infisical>",
      secretValueHidden: true,
    });
    const get = await getV3(t.app, d.token, p.id, "ROOT_S");
    expect(get.status).toBe(403);
    expect(get.json.error).toBe("ForbiddenReadSecretError");
    const hidden = await getV3(t.app, d.token, p.id, "ROOT_S", "&viewSecretValue=false");
    expect(hidden.json.secret).toMatchObject({
      secretValue: "<hidden-by-infisical>",
      secretValueHidden: true,
    });
    const byId = await ok(
      call(t.app, "GET", `/api/v3/secrets/raw/id/${hidden.json.secret.id}`, { token: d.token }),
    );
    expect(byId.secret.secretValue).toBe("<hidden-by-infisical>");
  });

  it("a reference into a path the caller cannot read is refused", async () => {
    await createV3(t.app, w.adminToken, p.id, "REFS_OTHER", `\${dev.other.OTHER_S}`, { secretPath: "/app" });
    const scoped = await addMember(t.app, w, p.id, "scoped-ref", "app-dev");
    const r = await call(
      t.app,
      "GET",
      `/api/v3/secrets/raw?workspaceId=${p.id}&environment=dev&secretPath=/app`,
      {
        token: scoped.token,
      },
    );
    expect(r.status).toBe(403);
    const admin = await ok(
      call(t.app, "GET", `/api/v3/secrets/raw?workspaceId=${p.id}&environment=dev&secretPath=/app`, {
        token: w.adminToken,
      }),
    );
    expect((admin.secrets as Json[]).find((s) => s.secretKey === "REFS_OTHER")?.secretValue).toBe(
      "other-value",
    );
  });

  it("non-members get 403 and unknown or foreign projects 404", async () => {
    const outsider = await addMember(
      t.app,
      w,
      (await makeProject(t.app, w.adminToken, "Elsewhere")).id,
      "outsider",
      "admin",
    );
    const r = await call(t.app, "GET", `/api/v3/secrets/raw?workspaceId=${p.id}&environment=dev`, {
      token: outsider.token,
    });
    expect(r.status).toBe(403);
    const none = await call(
      t.app,
      "GET",
      "/api/v3/secrets/raw?workspaceId=00000000-0000-4000-8000-000000000009&environment=dev",
      {
        token: w.adminToken,
      },
    );
    expect(none.status).toBe(404);
    const anon = await call(t.app, "GET", `/api/v3/secrets/raw?workspaceId=${p.id}&environment=dev`);
    expect(anon.status).toBe(401);
  });
});
