import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { dumpAllTables } from "../helpers/db-dump.js";
import { bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import { createV3, getV3, makeFolder, makeUser } from "./secrets-helpers.js";

/** v3 raw and v4 secret CRUD, fields and envelopes (api.md §4, real-clients.md §4). */
describe("secrets: v3 raw and v4", () => {
  let t: TestApp;
  let w: World;
  let p: Json;
  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
    p = await makeProject(t.app, w.adminToken, "Secrets");
    await makeFolder(t.app, w.adminToken, p.id, "dev", "/", "app");
    await makeFolder(t.app, w.adminToken, p.id, "dev", "/app", "db");
  });
  afterAll(async () => t.close());

  describe("happy", () => {
    it("create → get → update (version +1, rename) → delete on v3 raw", async () => {
      const made = await createV3(t.app, w.adminToken, p.id, "API_KEY", "  first\n", { secretComment: "c1" });
      expect(made).toMatchObject({
        _id: made.id,
        workspace: p.id,
        environment: "dev",
        version: 1,
        type: "shared",
        secretKey: "API_KEY",
        secretValue: "first\n", // trimmed, one trailing newline kept
        secretComment: "c1",
        skipMultilineEncoding: false,
      });
      expect(made).not.toHaveProperty("secretPath");

      const got = await getV3(t.app, w.adminToken, p.id, "API_KEY", "&includeImports=true&type=shared");
      expect(got.status).toBe(200);
      expect(got.json.secret).toMatchObject({
        secretPath: "/",
        tags: [],
        secretValueHidden: false,
        version: 1,
      });

      const upd = await ok(
        call(t.app, "PATCH", "/api/v3/secrets/raw/API_KEY", {
          token: w.adminToken,
          body: { workspaceId: p.id, environment: "dev", secretValue: "second", unknownField: 1 },
        }),
      );
      expect(upd.secret).toMatchObject({
        version: 2,
        secretValue: "second",
        secretComment: "c1",
        secretValueHidden: false,
      });

      const renamed = await ok(
        call(t.app, "PATCH", "/api/v3/secrets/raw/API_KEY", {
          token: w.adminToken,
          body: { workspaceId: p.id, environment: "dev", newSecretName: "API_TOKEN" },
        }),
      );
      expect(renamed.secret).toMatchObject({ secretKey: "API_TOKEN", version: 3, secretValue: "second" });
      expect((await getV3(t.app, w.adminToken, p.id, "API_KEY")).status).toBe(404);

      const del = await ok(
        call(t.app, "DELETE", "/api/v3/secrets/raw/API_TOKEN", {
          token: w.adminToken,
          body: { workspaceId: p.id, environment: "dev" },
        }),
      );
      expect(del.secret).toMatchObject({ secretKey: "API_TOKEN", secretValue: "second" });
    });

    it("v4 create/get/list/update with projectId, in a sub-folder, and get by id (Terraform)", async () => {
      const c = await ok(
        call(t.app, "POST", "/api/v4/secrets/DB_PASS", {
          token: w.adminToken,
          body: {
            projectId: p.id,
            environment: "dev",
            secretPath: "/app/db/",
            secretValue: "pw",
            secretMetadata: [
              { key: "owner", value: "team-a" },
              { key: "hint", value: "sensitive-hint", isEncrypted: true },
            ],
            secretReminderRepeatDays: 0,
            tagIds: null,
          },
        }),
      );
      const q = `projectId=${p.id}&environment=dev&secretPath=/app/db`;
      const got = await ok(call(t.app, "GET", `/api/v4/secrets/DB_PASS?${q}`, { token: w.adminToken }));
      expect(got.secret).toMatchObject({
        secretPath: "/app/db",
        secretValue: "pw",
        secretReminderRepeatDays: null,
        secretMetadata: [
          { key: "owner", value: "team-a", isEncrypted: false },
          { key: "hint", value: "sensitive-hint", isEncrypted: true },
        ],
      });
      const byId = await ok(
        call(t.app, "GET", `/api/v3/secrets/raw/id/${c.secret.id}`, { token: w.adminToken }),
      );
      expect(byId.secret).toMatchObject({
        id: c.secret.id,
        secretPath: "/app/db",
        environment: "dev",
        secretKey: "DB_PASS",
      });
      for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
        expect((await call(t.app, "GET", `/api/v4/secrets/id/${id}`, { token: w.adminToken })).status).toBe(
          404,
        );
      }

      await createV3(t.app, w.adminToken, p.id, "ROOT_ONE", "r");
      const flat = await ok(
        call(t.app, "GET", `/api/v4/secrets?projectId=${p.id}&environment=dev`, { token: w.adminToken }),
      );
      expect((flat.secrets as Json[]).map((s) => s.secretKey)).not.toContain("DB_PASS");
      const deep = await ok(
        call(t.app, "GET", `/api/v4/secrets?projectId=${p.id}&environment=dev&recursive=true`, {
          token: w.adminToken,
        }),
      );
      const dbPass = (deep.secrets as Json[]).find((s) => s.secretKey === "DB_PASS");
      expect(dbPass).toMatchObject({ secretPath: "/app/db", _id: c.secret.id, workspace: p.id, version: 1 });

      const upd = await ok(
        call(t.app, "PATCH", "/api/v4/secrets/DB_PASS", {
          token: w.adminToken,
          body: {
            projectId: p.id,
            environment: "dev",
            secretPath: "/app/db",
            secretValue: "pw2",
            skipMultilineEncoding: "true",
          },
        }),
      );
      expect(upd.secret).toMatchObject({ version: 2, secretValue: "pw2", skipMultilineEncoding: true });
    });

    it("batch create / update / delete on v3 raw and v4", async () => {
      const made = await ok(
        call(t.app, "POST", "/api/v3/secrets/batch/raw", {
          token: w.adminToken,
          body: {
            workspaceId: p.id,
            environment: "staging",
            secretPath: "/",
            secrets: [
              { secretKey: "B1", secretValue: "1" },
              { secretKey: "B2", secretValue: "2", secretComment: "two" },
            ],
          },
        }),
      );
      expect((made.secrets as Json[]).map((s) => [s.secretKey, s.version])).toEqual([
        ["B1", 1],
        ["B2", 1],
      ]);
      const upd = await ok(
        call(t.app, "PATCH", "/api/v4/secrets/batch", {
          token: w.adminToken,
          body: {
            projectId: p.id,
            environment: "staging",
            secrets: [{ secretKey: "B1", secretValue: "11" }],
          },
        }),
      );
      expect(upd.secrets[0]).toMatchObject({ secretKey: "B1", secretValue: "11", version: 2 });
      const del = await ok(
        call(t.app, "DELETE", "/api/v4/secrets/batch", {
          token: w.adminToken,
          body: {
            projectId: p.id,
            environment: "staging",
            secrets: [{ secretKey: "B1" }, { secretKey: "B2" }],
          },
        }),
      );
      expect(del.secrets).toHaveLength(2);
      const dup = await call(t.app, "POST", "/api/v4/secrets/batch", {
        token: w.adminToken,
        body: {
          projectId: p.id,
          environment: "staging",
          secrets: [
            { secretKey: "D", secretValue: "1" },
            { secretKey: "D", secretValue: "2" },
          ],
        },
      });
      expect(dup.status).toBe(400);
      const after = await ok(
        call(t.app, "GET", `/api/v4/secrets?projectId=${p.id}&environment=staging`, { token: w.adminToken }),
      );
      expect(after.secrets).toEqual([]); // the whole batch rolled back
    });

    it("ETag on list and get; If-None-Match answers 304 with an empty body", async () => {
      await createV3(t.app, w.adminToken, p.id, "ETAGGED", "e");
      const url = `/api/v3/secrets/raw?workspaceId=${p.id}&environment=dev`;
      const first = await call(t.app, "GET", url, { token: w.adminToken });
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^".+"$/);
      const again = await call(t.app, "GET", url, {
        token: w.adminToken,
        headers: { "if-none-match": etag },
      });
      expect(again.status).toBe(304);
      expect(again.body).toBe("");
      const one = await getV3(t.app, w.adminToken, p.id, "ETAGGED");
      const cached = await call(
        t.app,
        "GET",
        `/api/v3/secrets/raw/ETAGGED?workspaceId=${p.id}&environment=dev`,
        {
          token: w.adminToken,
          headers: { "if-none-match": one.headers.etag as string },
        },
      );
      expect(cached.status).toBe(304);
      await ok(
        call(t.app, "PATCH", "/api/v3/secrets/raw/ETAGGED", {
          token: w.adminToken,
          body: { workspaceId: p.id, environment: "dev", secretValue: "changed" },
        }),
      );
      const changed = await call(t.app, "GET", url, {
        token: w.adminToken,
        headers: { "if-none-match": etag },
      });
      expect(changed.status).toBe(200);
      expect(changed.headers.etag).not.toBe(etag);
    });

    it(`expands \${KEY} and \${env.path.KEY} references, survives cycles, v4 leaves them by default`, async () => {
      await createV3(t.app, w.adminToken, p.id, "HOST", "db.internal", { environment: "prod" });
      await createV3(t.app, w.adminToken, p.id, "PORT", "5432", { secretPath: "/app/db" });
      await createV3(t.app, w.adminToken, p.id, "USER", "svc");
      await createV3(
        t.app,
        w.adminToken,
        p.id,
        "URL",
        `pg://\${USER}@\${prod.HOST}:\${dev.app.db.PORT}/\${MISSING}x`,
      );
      await createV3(t.app, w.adminToken, p.id, "LOOP_A", `a\${LOOP_B}`);
      await createV3(t.app, w.adminToken, p.id, "LOOP_B", `b\${LOOP_A}`);
      const list = await ok(
        call(t.app, "GET", `/api/v3/secrets/raw?workspaceId=${p.id}&environment=dev`, {
          token: w.adminToken,
        }),
      );
      const by = (k: string) => (list.secrets as Json[]).find((s) => s.secretKey === k)?.secretValue;
      expect(by("URL")).toBe("pg://svc@db.internal:5432/x");
      expect(by("LOOP_A")).toBe(`ab\${LOOP_A}`); // the cycle back to LOOP_A is left as written
      const v4 = await ok(
        call(t.app, "GET", `/api/v4/secrets/URL?projectId=${p.id}&environment=dev`, { token: w.adminToken }),
      );
      expect(v4.secret.secretValue).toContain(`\${USER}`);
      const expanded = await getV3(t.app, w.adminToken, p.id, "URL", "&expandSecretReferences=true");
      expect(expanded.json.secret.secretValue).toBe("pg://svc@db.internal:5432/x");
    });

    it("personal overrides: list shows shared plus only the caller's own", async () => {
      const carol = await makeUser(t.app, w, "carol@example.com", p.id);
      const dan = await makeUser(t.app, w, "dan@example.com", p.id);
      await createV3(t.app, w.adminToken, p.id, "FLAG", "shared");
      const noShared = await call(t.app, "POST", "/api/v3/secrets/raw/NO_SHARED", {
        token: carol.token,
        body: { workspaceId: p.id, environment: "dev", secretValue: "x", type: "personal" },
      });
      expect(noShared.status).toBe(400);
      const mine = await createV3(t.app, carol.token, p.id, "FLAG", "carol", { type: "personal" });
      expect(mine).toMatchObject({ type: "personal", secretValue: "carol" });
      const idPersonal = await call(t.app, "POST", "/api/v3/secrets/raw/FLAG", {
        token: w.adminToken,
        body: { workspaceId: p.id, environment: "dev", secretValue: "x", type: "personal" },
      });
      expect(idPersonal.json).toMatchObject({
        statusCode: 400,
        message: "Must be user to create personal secret",
      });
      const listOf = async (token: string) =>
        (
          (await ok(call(t.app, "GET", `/api/v4/secrets?projectId=${p.id}&environment=dev`, { token })))
            .secrets as Json[]
        )
          .filter((s) => s.secretKey === "FLAG")
          .map((s) => `${s.type}:${s.secretValue}`)
          .sort();
      expect(await listOf(carol.token)).toEqual(["personal:carol", "shared:shared"]);
      expect(await listOf(dan.token)).toEqual(["shared:shared"]);
      const personalGet = await getV3(t.app, carol.token, p.id, "FLAG", "&type=personal");
      expect(personalGet.json.secret.secretValue).toBe("carol");
      expect((await getV3(t.app, dan.token, p.id, "FLAG", "&type=personal")).status).toBe(404);
    });

    it("batch create across folders with tags and metadata; errors as the first failing item alone gives", async () => {
      const bp = await makeProject(t.app, w.adminToken, "Batch");
      await makeFolder(t.app, w.adminToken, bp.id, "dev", "/", "app");
      const tag = (
        await ok(
          call(t.app, "POST", `/api/v1/projects/${bp.id}/tags`, {
            token: w.adminToken,
            body: { slug: "batch", color: "#0f0" },
          }),
        )
      ).tag as Json;
      const batch = (secrets: Json[]) =>
        call(t.app, "POST", "/api/v4/secrets/batch", {
          token: w.adminToken,
          body: { projectId: bp.id, environment: "dev", secretPath: "/", secrets },
        });
      // 1,200 items: more than one INSERT chunk, two folders, tags and metadata on some.
      const items = Array.from({ length: 1200 }, (_, i) => ({
        secretKey: `BULK_${i}`,
        secretValue: `value-${i}`,
        ...(i % 2 ? { secretPath: "/app" } : {}),
        ...(i % 100 === 0
          ? { tagIds: [tag.id], secretComment: `c${i}`, secretMetadata: [{ key: "k", value: `m${i}` }] }
          : {}),
      }));
      const made = (await ok(batch(items))).secrets as Json[];
      expect(made.map((s) => [s.secretKey, s.secretValue])).toEqual(
        items.map((it) => [it.secretKey, it.secretValue]),
      );
      const q = (path: string) =>
        `/api/v4/secrets?projectId=${bp.id}&environment=dev&secretPath=${encodeURIComponent(path)}`;
      const root = (await ok(call(t.app, "GET", q("/"), { token: w.adminToken }))).secrets as Json[];
      const app = (await ok(call(t.app, "GET", q("/app"), { token: w.adminToken }))).secrets as Json[];
      expect([root.length, app.length]).toEqual([600, 600]);
      expect(root.find((s) => s.secretKey === "BULK_100")).toMatchObject({
        secretValue: "value-100",
        secretComment: "c100",
        tags: [{ id: tag.id, slug: "batch" }],
        secretMetadata: [{ key: "k", value: "m100", isEncrypted: false }],
      });

      // An existing key before a missing folder: "already exists"; a missing folder first: its 404.
      const exists = await batch([
        { secretKey: "NEW_A", secretValue: "a" },
        { secretKey: "BULK_0", secretValue: "x" },
        { secretKey: "NEW_B", secretValue: "b", secretPath: "/nope" },
      ]);
      expect([exists.status, exists.json.message]).toEqual([400, "Secret already exists"]);
      const missing = await batch([
        { secretKey: "NEW_C", secretValue: "c", secretPath: "/nope" },
        { secretKey: "BULK_0", secretValue: "x" },
      ]);
      expect(missing.status).toBe(404);
      expect(missing.json.message).toContain("Folder with path '/nope'");
      const badName = await batch([
        { secretKey: "NEW_D", secretValue: "d" },
        { secretKey: "A:B", secretValue: "x" },
      ]);
      expect(badName.status).toBe(422); // a colon is refused by the request schema
      // None of the failed batches left anything behind.
      const after = (await ok(call(t.app, "GET", q("/"), { token: w.adminToken }))).secrets as Json[];
      expect(after.filter((s) => String(s.secretKey).startsWith("NEW_"))).toEqual([]);
    });

    it("tags by tagIds, tagSlugs filter, unknown tag 404", async () => {
      const tag = (
        await ok(
          call(t.app, "POST", `/api/v1/projects/${p.id}/tags`, {
            token: w.adminToken,
            body: { slug: "infra", color: "#f00" },
          }),
        )
      ).tag as Json;
      await createV3(t.app, w.adminToken, p.id, "TAGGED", "t", { environment: "staging", tagIds: [tag.id] });
      await createV3(t.app, w.adminToken, p.id, "UNTAGGED", "u", { environment: "staging" });
      const list = await ok(
        call(t.app, "GET", `/api/v3/secrets/raw?workspaceId=${p.id}&environment=staging&tagSlugs=infra`, {
          token: w.adminToken,
        }),
      );
      expect((list.secrets as Json[]).map((s) => s.secretKey)).toEqual(["TAGGED"]);
      expect(list.secrets[0].tags).toEqual([{ id: tag.id, slug: "infra", color: "#f00", name: "infra" }]);
      const bad = await call(t.app, "POST", "/api/v3/secrets/raw/BADTAG", {
        token: w.adminToken,
        body: { workspaceId: p.id, environment: "staging", secretValue: "x", tagIds: ["nope"] },
      });
      expect(bad.status).toBe(404);
      // Replacing tags with [] detaches them.
      const cleared = await ok(
        call(t.app, "PATCH", "/api/v3/secrets/raw/TAGGED", {
          token: w.adminToken,
          body: { workspaceId: p.id, environment: "staging", tagIds: [] },
        }),
      );
      expect(cleared.secret.version).toBe(2);
      const none = await ok(
        call(t.app, "GET", `/api/v3/secrets/raw?workspaceId=${p.id}&environment=staging&tagSlugs=infra`, {
          token: w.adminToken,
        }),
      );
      expect(none.secrets).toEqual([]);
    });

    it("lists imported secrets under imports", async () => {
      await createV3(t.app, w.adminToken, p.id, "SHARED_CONF", "from-prod", {
        environment: "prod",
        secretPath: "/",
      });
      await ok(
        call(t.app, "POST", "/api/v1/secret-imports", {
          token: w.adminToken,
          body: {
            workspaceId: p.id,
            environment: "dev",
            path: "/app",
            import: { environment: "prod", path: "/" },
          },
        }),
      );
      const list = await ok(
        call(
          t.app,
          "GET",
          `/api/v3/secrets/raw?workspaceId=${p.id}&environment=dev&secretPath=/app&include_imports=true`,
          {
            token: w.adminToken,
          },
        ),
      );
      expect(list.imports).toHaveLength(1);
      expect(list.imports[0]).toMatchObject({
        secretPath: "/",
        environment: "prod",
        folderId: expect.any(String),
      });
      expect(
        (list.imports[0].secrets as Json[]).find((s) => s.secretKey === "SHARED_CONF")?.secretValue,
      ).toBe("from-prod");
      const one = await getV3(
        t.app,
        w.adminToken,
        p.id,
        "SHARED_CONF",
        "&secretPath=/app&includeImports=true",
      );
      expect(one.json.secret?.secretValue).toBe("from-prod");
    });
  });

  describe("errors and tolerance", () => {
    it("validates names and paths with 4xx, never 500", async () => {
      const post = (name: string, body: Json) =>
        call(t.app, "POST", `/api/v3/secrets/raw/${encodeURIComponent(name)}`, {
          token: w.adminToken,
          body: { workspaceId: p.id, environment: "dev", secretValue: "x", ...body },
        });
      expect((await post("a:b", {})).status).toBe(422);
      expect((await post("a/b", {})).status).toBe(422); // an encoded slash reaches the name check
      expect((await post("OK_NAME", { secretPath: "/a/../b" })).status).toBe(400);
      expect((await post("OK_NAME", { secretPath: "/a//b" })).status).toBe(400);
      expect((await post("OK_NAME", { secretValue: 5 })).status).toBe(422);
      const missing = await post("OK_NAME", { secretPath: "/missing" });
      expect(missing.json).toMatchObject({ statusCode: 404, error: "CreateSecret" });
      await createV3(t.app, w.adminToken, p.id, "TWICE", "1");
      const twice = await post("TWICE", {});
      expect(twice.json).toMatchObject({ statusCode: 400, message: "Secret already exists" });
      const noProject = await call(t.app, "GET", "/api/v3/secrets/raw?environment=dev", {
        token: w.adminToken,
      });
      expect(noProject.json).toMatchObject({
        statusCode: 400,
        message: "You must provide projectSlug or workspaceId",
      });
      const noEnv = await call(t.app, "GET", `/api/v4/secrets?projectId=${p.id}`, { token: w.adminToken });
      expect(noEnv.status).toBe(400);
      const noFolder = await call(
        t.app,
        "GET",
        `/api/v4/secrets?projectId=${p.id}&environment=dev&secretPath=/zzz`,
        {
          token: w.adminToken,
        },
      );
      expect(noFolder.json).toMatchObject({ statusCode: 404, error: "SecretPathNotFound" });
      const notFound = await getV3(t.app, w.adminToken, p.id, "NOPE");
      expect(notFound.json).toMatchObject({ statusCode: 404, message: "Secret with name 'NOPE' not found" });
    });

    it("tolerates the Go SDK's empty workspaceSlug and string booleans, and resolves a project slug", async () => {
      const r = await call(
        t.app,
        "GET",
        `/api/v3/secrets/raw?workspaceId=${p.id}&workspaceSlug=&environment=dev&recursive=false&include_imports=false&expandSecretReferences=false`,
        { token: w.adminToken },
      );
      expect(r.status).toBe(200);
      const bySlug = await call(t.app, "GET", `/api/v3/secrets/raw?workspaceSlug=${p.slug}&environment=dev`, {
        token: w.adminToken,
      });
      expect(bySlug.status).toBe(200);
      const bad = await call(
        t.app,
        "GET",
        `/api/v3/secrets/raw?workspaceId=${p.id}&environment=dev&recursive=maybe`,
        {
          token: w.adminToken,
        },
      );
      expect(bad.status).toBe(422);
    });
  });

  describe("encryption at rest", () => {
    it("no plaintext value, comment, reminder note or encrypted metadata anywhere in the database", async () => {
      const canaries = {
        value: "VALUE-CANARY-7f3a91",
        comment: "COMMENT-CANARY-2b8e44",
        note: "NOTE-CANARY-91c0de",
        meta: "META-CANARY-55aa12",
        batch: "BATCH-CANARY-0d9e7b",
      };
      await createV3(t.app, w.adminToken, p.id, "CANARY", canaries.value, {
        secretComment: canaries.comment,
        secretReminderNote: canaries.note,
        secretMetadata: [{ key: "m", value: canaries.meta, isEncrypted: true }],
      });
      await ok(
        call(t.app, "POST", "/api/v4/secrets/batch", {
          token: w.adminToken,
          body: {
            projectId: p.id,
            environment: "dev",
            secrets: [{ secretKey: "CANARY_B", secretValue: canaries.batch }],
          },
        }),
      );
      await ok(
        call(t.app, "PATCH", "/api/v3/secrets/raw/CANARY", {
          token: w.adminToken,
          body: { workspaceId: p.id, environment: "dev", secretValue: `${canaries.value}-2` },
        }),
      );
      await t.services.audit.flush();
      const dump = await dumpAllTables(t.services.dbh);
      expect(dump).toContain("CANARY_B"); // keys are stored, so the dump covers the secrets table
      for (const c of Object.values(canaries)) expect(dump).not.toContain(c);
    });
  });
});
