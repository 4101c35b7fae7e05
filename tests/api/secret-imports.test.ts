import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SecretChange } from "../../src/features/events/change-bus.js";
import type { TestApp } from "../helpers/build-test-app.js";
import { addMember, call, type Json, ok, type World } from "../helpers/fixtures.js";
import { permissionCases } from "../helpers/permission-cases.js";
import { projectWorld } from "../helpers/project-world.js";

describe("secret imports", () => {
  let t: TestApp;
  let w: World;
  let project: Json;
  let viewer: { token: string };
  let revokedToken: string;
  const seen: SecretChange[] = [];
  let unsubscribe: () => void = () => {};
  beforeAll(async () => {
    ({ t, w, project, viewer, revokedToken } = await projectWorld("Imports"));
    unsubscribe = t.services.changes.subscribe((c) => seen.push(c));
    for (const [environment, path, name] of [
      ["dev", "/", "app"],
      ["dev", "/", "shared"],
      ["dev", "/", "consumer"],
      ["prod", "/", "app"],
    ]) {
      await ok(
        call(t.app, "POST", "/api/v1/folders", {
          token: w.adminToken,
          body: { workspaceId: project.id, environment, path, name },
        }),
      );
    }
  });
  afterEach(() => {
    seen.length = 0;
  });
  afterAll(async () => {
    unsubscribe();
    await t.close();
  });

  const v1 = "/api/v1/secret-imports";
  const create = (path: string, from: { environment: string; path: string }, token = w.adminToken) =>
    call(t.app, "POST", v1, {
      token,
      body: { workspaceId: project.id, environment: "dev", path, import: from },
    });
  const list = async (path: string, token = w.adminToken) =>
    (await ok(call(t.app, "GET", `${v1}?workspaceId=${project.id}&environment=dev&path=${path}`, { token })))
      .secretImports as Json[];
  const envOf = (slug: string) => {
    const e = project.environments.find((x: Json) => x.slug === slug);
    return { id: e.id, name: e.name, slug: e.slug };
  };

  describe("happy", () => {
    it("creates imports at the next position and lists them in order", async () => {
      const a = await ok(create("/app", { environment: "dev", path: "/shared" }));
      expect(a).toEqual({
        message: "Successfully created secret import",
        secretImport: {
          id: expect.any(String),
          version: 1,
          importPath: "/shared",
          importEnv: envOf("dev"),
          position: 1,
          folderId: expect.any(String),
          isReplication: false,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        },
      });
      const b = await ok(
        call(t.app, "POST", "/api/v2/secret-imports", {
          token: w.adminToken,
          body: {
            projectId: project.id,
            environment: "dev",
            path: "/app/",
            import: { environment: "prod", path: "app" },
          },
        }),
      );
      expect(b.secretImport).toMatchObject({ position: 2, importPath: "/app", importEnv: envOf("prod") });
      const listed = await list("/app");
      expect(listed.map((i) => [i.position, i.importEnv.slug, i.importPath])).toEqual([
        [1, "dev", "/shared"],
        [2, "prod", "/app"],
      ]);
      const v2 = await ok(
        call(t.app, "GET", `/api/v2/secret-imports?projectId=${project.id}&environment=dev&path=/app`, {
          token: viewer.token,
        }),
      );
      expect(v2).toEqual({ message: "Successfully fetched secret imports", secretImports: listed });
    });

    it("reads one import by id with its folder's place", async () => {
      const [first] = await list("/app");
      const r = await ok(call(t.app, "GET", `/api/v2/secret-imports/${first?.id}`, { token: viewer.token }));
      expect(r.secretImport).toEqual({
        ...first,
        projectId: project.id,
        secretPath: "/app",
        environment: envOf("dev"),
      });
    });

    it("moves an import to another position and re-points it", async () => {
      const [first, second] = await list("/app");
      const moved = await ok(
        call(t.app, "PATCH", `${v1}/${second?.id}`, {
          token: w.adminToken,
          body: { workspaceId: project.id, environment: "dev", path: "/app", import: { position: 1 } },
        }),
      );
      expect(moved).toMatchObject({
        message: "Successfully updated secret import",
        secretImport: { position: 1, version: 2 },
      });
      expect((await list("/app")).map((i) => i.id)).toEqual([second?.id, first?.id]);
      const repointed = await ok(
        call(t.app, "PATCH", `${v1}/${first?.id}`, {
          token: w.adminToken,
          body: {
            workspaceId: project.id,
            environment: "dev",
            path: "/app",
            import: { environment: "prod", path: "/", position: 99 },
          },
        }),
      );
      expect(repointed.secretImport).toMatchObject({
        importEnv: envOf("prod"),
        importPath: "/",
        position: 2,
      });
    });

    it("deletes an import and closes the gap", async () => {
      await ok(create("/consumer", { environment: "dev", path: "/shared" }));
      const mid = (await ok(create("/consumer", { environment: "prod", path: "/" }))).secretImport;
      await ok(create("/consumer", { environment: "staging", path: "/" }));
      const del = await ok(
        call(t.app, "DELETE", `${v1}/${mid.id}`, {
          token: w.adminToken,
          body: { workspaceId: project.id, environment: "dev", path: "/consumer" },
        }),
      );
      expect(del).toMatchObject({
        message: "Successfully deleted secret import",
        secretImport: { id: mid.id },
      });
      expect((await list("/consumer")).map((i) => [i.position, i.importEnv.slug])).toEqual([
        [1, "dev"],
        [2, "staging"],
      ]);
    });

    it("concurrent creates keep positions dense", async () => {
      await ok(
        call(t.app, "POST", "/api/v1/folders", {
          token: w.adminToken,
          body: { workspaceId: project.id, environment: "dev", name: "busy" },
        }),
      );
      const sources = ["/a", "/b", "/c", "/d", "/e"];
      await Promise.all(sources.map((path) => ok(create("/busy", { environment: "prod", path }))));
      expect((await list("/busy")).map((i) => i.position)).toEqual([1, 2, 3, 4, 5]);
    });

    it("notifies the importing folder and the folders importing it", async () => {
      // /consumer imports dev:/shared (previous test); now /shared imports prod:/app.
      await ok(create("/shared", { environment: "prod", path: "/app" }));
      const changed = seen.map((c) => [c.kind, c.environment, c.secretPath, c.keys.length]);
      expect(changed).toEqual(
        expect.arrayContaining([
          ["import-changed", "dev", "/shared", 0],
          ["import-changed", "dev", "/consumer", 0],
        ]),
      );
      expect(changed).toHaveLength(2);
    });

    it("imported secrets show up in the importing folder's secret list", async () => {
      await ok(
        call(t.app, "POST", "/api/v4/secrets/FROM_PROD", {
          token: w.adminToken,
          body: { projectId: project.id, environment: "prod", secretPath: "/app", secretValue: "p" },
        }),
      );
      const r = await ok(
        call(
          t.app,
          "GET",
          `/api/v4/secrets?projectId=${project.id}&environment=dev&secretPath=/shared&include_imports=true`,
          {
            token: w.adminToken,
          },
        ),
      );
      const imported = (r.imports as Json[]).find((i) => i.environment === "prod" && i.secretPath === "/app");
      expect(imported?.secrets.map((s: Json) => s.secretKey)).toEqual(["FROM_PROD"]);
    });
  });

  describe("errors", () => {
    it("missing folder or source environment is 404; cycles and replication are 400", async () => {
      const noFolder = await create("/nowhere", { environment: "dev", path: "/shared" });
      expect(noFolder.status).toBe(404);
      expect(noFolder.json.message).toBe(
        "Folder with path '/nowhere' in environment with slug 'dev' not found",
      );
      const noEnv = await create("/app", { environment: "qa", path: "/" });
      expect(noEnv.status).toBe(404);
      expect(noEnv.json.message).toBe(
        `Imported environment with slug 'qa' in project with ID '${project.id}' not found`,
      );
      const self = await create("/app", { environment: "dev", path: "/app" });
      expect(self.status).toBe(400);
      expect(self.json.message).toBe("Cyclic import not allowed");
      // /consumer imports /shared, so /shared importing /consumer closes a loop.
      const reverse = await create("/shared", { environment: "dev", path: "/consumer" });
      expect(reverse.status).toBe(400);
      const replication = await call(t.app, "POST", v1, {
        token: w.adminToken,
        body: {
          workspaceId: project.id,
          environment: "dev",
          path: "/app",
          import: { environment: "prod", path: "/" },
          isReplication: true,
        },
      });
      expect(replication.status).toBe(400);
      expect(replication.json.message).toMatch(/plan restriction/);
    });

    it("bad paths are 400 and bad bodies 422", async () => {
      expect((await create("/app", { environment: "dev", path: "/../etc" })).status).toBe(400);
      const noImport = await call(t.app, "POST", v1, {
        token: w.adminToken,
        body: { workspaceId: project.id, environment: "dev", path: "/app" },
      });
      expect(noImport.status).toBe(422);
      const noProject = await call(t.app, "GET", `${v1}?environment=dev`, { token: w.adminToken });
      expect(noProject.status).toBe(422);
      expect(noProject.json.message[0]).toMatchObject({ path: ["workspaceId"] });
    });

    it("unknown ids: update is 400 (as Infisical, which Terraform relies on), get and delete are 404", async () => {
      const scope = { workspaceId: project.id, environment: "dev", path: "/app" };
      for (const id of ["00000000-0000-0000-0000-000000000000", "not-a-uuid"]) {
        const u = await call(t.app, "PATCH", `${v1}/${id}`, {
          token: w.adminToken,
          body: { ...scope, import: {} },
        });
        expect([u.status, u.json.message]).toEqual([400, "Secret import not found"]);
        const d = await call(t.app, "DELETE", `${v1}/${id}`, { token: w.adminToken, body: scope });
        expect(d.status).toBe(404);
        const g = await call(t.app, "GET", `${v1}/${id}`, { token: w.adminToken });
        expect(g.status).toBe(404);
      }
    });
  });

  describe("permissions", () => {
    it("a viewer lists but cannot create", async () => {
      expect((await list("/app", viewer.token)).length).toBeGreaterThan(0);
      const r = await create("/app", { environment: "prod", path: "/" }, viewer.token);
      expect(r.status).toBe(403);
      expect(r.json.message).toBe("You are not allowed to create on secret-imports");
    });

    it("importing needs describe access to the source's secrets", async () => {
      const role = await ok(
        call(t.app, "POST", `/api/v1/projects/${project.id}/roles`, {
          token: w.adminToken,
          body: {
            slug: "importer",
            permissions: [
              { subject: "secret-imports", action: ["create", "read"] },
              { subject: "secrets", action: ["describeSecret"], conditions: { environment: "dev" } },
            ],
          },
        }),
      );
      const importer = await addMember(t.app, w, project.id, "importer", role.role.slug);
      expect((await create("/app", { environment: "dev", path: "/consumer/x" }, importer.token)).status).toBe(
        200,
      );
      const denied = await create("/app", { environment: "prod", path: "/" }, importer.token);
      expect(denied.status).toBe(403);
      expect(denied.json.message).toBe("You are not allowed to describeSecret on secrets");
    });

    describe("shared cases (create)", () => {
      permissionCases(() => ({
        t,
        world: w,
        revokedToken,
        route: () => ({
          method: "POST",
          url: v1,
          body: {
            workspaceId: project.id,
            environment: "dev",
            path: "/app",
            import: { environment: "prod", path: "/" },
          },
          weakToken: viewer.token,
        }),
      }));
    });
  });
});
