import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowsOf } from "../../src/db/client.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { addMember, bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import { createV3, makeFolder, makeRole, makeUser, SEED_SECRET_FIELDS } from "./secrets-helpers.js";

/** The seed endpoint `DELETE /api/v4/secrets/{secretName}` (seed-api.md, api.md §4.3). */
describe("DELETE /api/v4/secrets/{secretName}", () => {
  let t: TestApp;
  let w: World;
  let p: Json;
  const del = (name: string, token: string, body: Json | undefined) =>
    call(t.app, "DELETE", `/api/v4/secrets/${encodeURIComponent(name)}`, { token, body });

  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
    p = await makeProject(t.app, w.adminToken, "Delete v4");
    await makeFolder(t.app, w.adminToken, p.id, "dev", "/", "app");
    await makeFolder(t.app, w.adminToken, p.id, "dev", "/", "other");
  });
  afterAll(async () => t.close());

  describe("happy", () => {
    it("returns {secret} with every field of the seed's secret table, value decrypted", async () => {
      const made = await createV3(t.app, w.adminToken, p.id, "SEED_FIELDS", "v4-delete-value", {
        secretComment: "a comment",
        secretReminderNote: "rotate me",
        secretReminderRepeatDays: 30,
        skipMultilineEncoding: true,
      });
      const r = await del("SEED_FIELDS", w.adminToken, { projectId: p.id, environment: "dev" });
      expect(r.status).toBe(200);
      const s = r.json.secret as Json;
      for (const f of SEED_SECRET_FIELDS) expect(s, f).toHaveProperty(f);
      expect(s).toMatchObject({
        id: made.id,
        _id: made.id,
        workspace: p.id,
        environment: "dev",
        version: 1,
        type: "shared",
        secretKey: "SEED_FIELDS",
        secretValue: "v4-delete-value",
        secretComment: "a comment",
        secretValueHidden: false,
        secretReminderNote: "rotate me",
        secretReminderRepeatDays: 30,
        skipMultilineEncoding: true,
        isRotatedSecret: false,
        rotationId: null,
      });
      expect(s.actor).toMatchObject({ actorType: "identity", actorId: expect.any(String), groupId: null });
      expect(s.actor.membershipId).toEqual(expect.any(String));
      expect(new Date(s.createdAt).toISOString()).toBe(s.createdAt);
      expect(new Date(s.updatedAt).toISOString()).toBe(s.updatedAt);
      // Per api.md §4.1 the delete response carries no tags or path.
      expect(s).not.toHaveProperty("tags");
      expect(s).not.toHaveProperty("secretPath");
      const gone = await call(t.app, "GET", `/api/v4/secrets/SEED_FIELDS?projectId=${p.id}&environment=dev`, {
        token: w.adminToken,
      });
      expect(gone.status).toBe(404);
    });

    it("defaults secretPath to / and type to shared, trims a trailing slash, ignores unknown fields", async () => {
      await createV3(t.app, w.adminToken, p.id, "IN_APP", "x", { secretPath: "/app" });
      const r = await del("IN_APP", w.adminToken, {
        projectId: p.id,
        environment: "dev",
        secretPath: "/app/",
        secretId: "ignored",
        unknown: true,
      });
      expect(r.status).toBe(200);
      expect(r.json.secret).toMatchObject({ secretKey: "IN_APP", type: "shared" });
    });

    it("quotes, backslashes and unicode in names and paths are data, not SQL", async () => {
      const name = `O'Brien\\'); DROP TABLE secrets; --é`;
      await createV3(t.app, w.adminToken, p.id, name, "quoted");
      const got = await call(
        t.app,
        "GET",
        `/api/v3/secrets/raw/${encodeURIComponent(name)}?workspaceId=${p.id}&environment=dev`,
        {
          token: w.adminToken,
        },
      );
      expect(got.json.secret?.secretKey).toBe(name);
      const r = await del(name, w.adminToken, { projectId: p.id, environment: `dev'--` });
      expect(r.status).toBe(404);
      const ok2 = await ok(del(name, w.adminToken, { projectId: p.id, environment: "dev" }));
      expect(ok2.secret.secretValue).toBe("quoted");
    });

    it("records the deletion in the audit log with the same statement", async () => {
      await createV3(t.app, w.adminToken, p.id, "AUDITED", "x");
      const s = (await ok(del("AUDITED", w.adminToken, { projectId: p.id, environment: "dev" })))
        .secret as Json;
      const rows = await rowsOf<{ resource: Json }>(
        sql`SELECT resource FROM audit_logs WHERE event_type = 'delete-secret' AND project_id = ${p.id}`,
        t.services.db,
      );
      const hit = rows.find((r) => r.resource.secretName === "AUDITED");
      expect(hit?.resource).toMatchObject({
        environment: "dev",
        secretPath: "/",
        secretId: s.id,
        secretVersion: s.version,
      });
      expect(JSON.stringify(rows)).not.toContain('x"');
    });
  });

  describe("shared vs personal", () => {
    it("deleting a shared secret removes every user's override; personal removes only the caller's", async () => {
      const alice = await makeUser(t.app, w, "alice@example.com", p.id);
      const bob = await makeUser(t.app, w, "bob@example.com", p.id);
      await createV3(t.app, w.adminToken, p.id, "DB_URL", "shared-value");
      await createV3(t.app, alice.token, p.id, "DB_URL", "alice-value", { type: "personal" });
      await createV3(t.app, bob.token, p.id, "DB_URL", "bob-value", { type: "personal" });

      // Alice removes her override: Bob's and the shared one stay.
      const mine = await del("DB_URL", alice.token, {
        projectId: p.id,
        environment: "dev",
        type: "personal",
      });
      expect(mine.status).toBe(200);
      expect(mine.json.secret).toMatchObject({ type: "personal", secretValue: "alice-value" });
      const again = await del("DB_URL", alice.token, {
        projectId: p.id,
        environment: "dev",
        type: "personal",
      });
      expect(again.status).toBe(404);
      const bobList = await ok(
        call(t.app, "GET", `/api/v4/secrets?projectId=${p.id}&environment=dev`, { token: bob.token }),
      );
      const bobs = (bobList.secrets as Json[]).filter((s) => s.secretKey === "DB_URL");
      expect(bobs.map((s) => [s.type, s.secretValue]).sort()).toEqual([
        ["personal", "bob-value"],
        ["shared", "shared-value"],
      ]);

      // A shared delete takes Bob's override with it.
      const shared = await del("DB_URL", w.adminToken, { projectId: p.id, environment: "dev" });
      expect(shared.json.secret).toMatchObject({ type: "shared", secretValue: "shared-value" });
      const after = await ok(
        call(t.app, "GET", `/api/v4/secrets?projectId=${p.id}&environment=dev`, { token: bob.token }),
      );
      expect((after.secrets as Json[]).filter((s) => s.secretKey === "DB_URL")).toEqual([]);

      // One audit record per delete: Alice's names her override, the shared one the shared secret.
      const records = await rowsOf<{ resource: Json }>(
        sql`SELECT resource FROM audit_logs WHERE event_type = 'delete-secret' AND project_id = ${p.id}
          AND resource->>'secretName' = 'DB_URL' ORDER BY created_at`,
        t.services.db,
      );
      expect(records.map((r) => [r.resource.type, r.resource.secretId])).toEqual([
        ["personal", mine.json.secret.id],
        ["shared", shared.json.secret.id],
      ]);
    });

    it("an identity deleting a personal secret gets 400", async () => {
      await createV3(t.app, w.adminToken, p.id, "ID_PERSONAL", "x");
      const r = await del("ID_PERSONAL", w.adminToken, {
        projectId: p.id,
        environment: "dev",
        type: "personal",
      });
      expect(r.status).toBe(400);
      expect(r.json).toMatchObject({
        error: "BadRequest",
        message: "Must be user to delete personal secret",
      });
    });
  });

  describe("errors", () => {
    it("missing folder or environment → 404 DeleteSecret", async () => {
      for (const [env, path] of [
        ["dev", "/nope"],
        ["nope", "/"],
      ] as const) {
        const r = await del("X", w.adminToken, { projectId: p.id, environment: env, secretPath: path });
        expect(r.status).toBe(404);
        expect(r.json).toMatchObject({
          error: "DeleteSecret",
          message: `Folder with path '${path}' in environment with slug '${env}' not found`,
        });
      }
    });

    it("missing secret → 404 Secret not found", async () => {
      const r = await del("NOT_THERE", w.adminToken, { projectId: p.id, environment: "dev" });
      expect(r.status).toBe(404);
      expect(r.json).toMatchObject({ error: "NotFound", message: "Secret not found" });
    });

    it("validation: 422 for a missing body, projectId, environment or a bad type; 400 for a bad path", async () => {
      const cases: (Json | undefined)[] = [
        undefined,
        { environment: "dev" },
        { projectId: p.id },
        { projectId: p.id, environment: "dev", type: "team" },
      ];
      for (const body of cases) {
        const r = await del("X", w.adminToken, body);
        expect(r.status, JSON.stringify(body)).toBe(422);
        expect(r.json.error).toBe("ValidationFailure");
      }
      const bad = await del("X", w.adminToken, {
        projectId: p.id,
        environment: "dev",
        secretPath: "/a/../b",
      });
      expect(bad.status).toBe(400);
    });

    it("unknown project → 404; no token → 401", async () => {
      const r = await del("X", w.adminToken, {
        projectId: "2b1e1c3a-0000-4000-8000-000000000000",
        environment: "dev",
      });
      expect(r.status).toBe(404);
      const anon = await call(t.app, "DELETE", "/api/v4/secrets/X", {
        body: { projectId: p.id, environment: "dev" },
      });
      expect(anon.status).toBe(401);
    });
  });

  describe("permissions", () => {
    it("a viewer gets 403 PermissionDenied and the secret survives", async () => {
      const viewer = await addMember(t.app, w, p.id, "viewer-del", "viewer");
      await createV3(t.app, w.adminToken, p.id, "KEEP", "x");
      const r = await del("KEEP", viewer.token, { projectId: p.id, environment: "dev" });
      expect(r.status).toBe(403);
      expect(r.json).toMatchObject({
        error: "PermissionDenied",
        message: "You are not allowed to delete on secrets",
      });
      const still = await call(t.app, "GET", `/api/v4/secrets/KEEP?projectId=${p.id}&environment=dev`, {
        token: w.adminToken,
      });
      expect(still.status).toBe(200);
    });

    it("a role limited to /app/** in dev deletes under /app but not in /other or in prod", async () => {
      await makeRole(t.app, w.adminToken, p.id, "app-only", [
        {
          subject: "secrets",
          action: ["describeSecret", "readValue", "create", "edit", "delete"],
          conditions: { environment: "dev", secretPath: { $glob: "/app/**" } },
        },
      ]);
      const scoped = await addMember(t.app, w, p.id, "scoped-del", "app-only");
      await createV3(t.app, w.adminToken, p.id, "SCOPED", "a", { secretPath: "/app" });
      await createV3(t.app, w.adminToken, p.id, "SCOPED", "o", { secretPath: "/other" });
      await createV3(t.app, w.adminToken, p.id, "SCOPED", "p", { environment: "prod" });
      const other = await del("SCOPED", scoped.token, {
        projectId: p.id,
        environment: "dev",
        secretPath: "/other",
      });
      expect(other.status).toBe(403);
      expect(other.json.error).toBe("PermissionDenied");
      const prod = await del("SCOPED", scoped.token, { projectId: p.id, environment: "prod" });
      expect(prod.status).toBe(403);
      const app = await del("SCOPED", scoped.token, {
        projectId: p.id,
        environment: "dev",
        secretPath: "/app",
      });
      expect(app.status).toBe(200);
      expect(app.json.secret.secretValue).toBe("a");
    });

    it("a role without readValue deletes but sees the value hidden", async () => {
      await makeRole(t.app, w.adminToken, p.id, "blind-deleter", [
        { subject: "secrets", action: ["describeSecret", "delete"] },
      ]);
      const blind = await addMember(t.app, w, p.id, "blind-del", "blind-deleter");
      await createV3(t.app, w.adminToken, p.id, "BLIND", "secret-value");
      const r = await ok(del("BLIND", blind.token, { projectId: p.id, environment: "dev" }));
      expect(r.secret).toMatchObject({ secretValue: "<hidden-by-infisical>", secretValueHidden: true });
    });

    it("another organisation's project is a 404", async () => {
      const r = await del("X", w.adminToken, {
        projectId: "00000000-0000-4000-8000-000000000001",
        environment: "dev",
      });
      expect(r.status).toBe(404);
    });
  });
});
