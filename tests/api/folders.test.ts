import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/build-test-app.js";
import { addMember, call, type Json, ok, type World } from "../helpers/fixtures.js";
import { permissionCases } from "../helpers/permission-cases.js";
import { projectWorld } from "../helpers/project-world.js";

describe("folders", () => {
  let t: TestApp;
  let w: World;
  let project: Json;
  let viewer: { token: string };
  let revokedToken: string;
  beforeAll(async () => {
    ({ t, w, project, viewer, revokedToken } = await projectWorld("Folders"));
  });
  afterAll(async () => t.close());

  const create = (body: Json, token = w.adminToken) =>
    call(t.app, "POST", "/api/v1/folders", {
      token,
      body: { workspaceId: project.id, environment: "dev", ...body },
    });
  const list = async (query: string, token = w.adminToken) =>
    (
      await ok(
        call(t.app, "GET", `/api/v1/folders?workspaceId=${project.id}&environment=dev&${query}`, { token }),
      )
    ).folders as Json[];

  describe("happy", () => {
    it("creates missing intermediate folders and is idempotent", async () => {
      const c = await ok(create({ name: "db", path: "/app/backend/", description: "database" }));
      expect(c.folder).toEqual({
        id: expect.any(String),
        name: "db",
        path: "/app/backend/db",
        version: 1,
        envId: project.environments[0].id,
        parentId: expect.any(String),
        isReserved: false,
        description: "database",
        lastSecretModified: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect((await list("path=/app")).map((f) => f.name)).toEqual(["backend"]);
      expect((await list("path=/app/backend")).map((f) => f.id)).toEqual([c.folder.id]);
      const again = await ok(create({ name: "db", path: "app/backend" }));
      expect(again.folder).toEqual(c.folder);
    });

    it("concurrent creates of one path make one folder", async () => {
      const all = await Promise.all(
        Array.from({ length: 6 }, () => ok(create({ name: "race", path: "/para/llel" }))),
      );
      expect(new Set(all.map((r) => r.folder.id)).size).toBe(1);
      expect((await list("path=/para")).map((f) => f.name)).toEqual(["llel"]);
    });

    it("v2 takes projectId, and the CLI's `directory` works on v1", async () => {
      const v2 = await ok(
        call(t.app, "POST", "/api/v2/folders", {
          token: w.adminToken,
          body: { projectId: project.id, environment: "dev", name: "v2", path: "/" },
        }),
      );
      expect(v2.folder.path).toBe("/v2");
      const cli = await ok(create({ name: "cli", directory: "/v2" }));
      expect(cli.folder.path).toBe("/v2/cli");
      const listed = await ok(
        call(t.app, "GET", `/api/v2/folders?projectId=${project.id}&environment=dev&path=/v2`, {
          token: w.adminToken,
        }),
      );
      expect(listed.folders.map((f: Json) => f.name)).toEqual(["cli"]);
      expect((await list("directory=/v2")).map((f) => f.name)).toEqual(["cli"]);
    });

    it("lists recursively with relativePath; a missing path is an empty list", async () => {
      await ok(create({ name: "deep", path: "/tree/a/b" }));
      const all = await list("path=/tree&recursive=true");
      expect(all.map((f) => f.relativePath)).toEqual(["/tree/a", "/tree/a/b", "/tree/a/b/deep"]);
      expect(all[0]).not.toHaveProperty("path");
      expect(await list("path=/does/not/exist")).toEqual([]);
      expect((await list("recursive=true")).every((f) => f.name !== "root")).toBe(true);
    });

    it("reads by id and, for Terraform, by project/environment/escaped path", async () => {
      const f = (await ok(create({ name: "byid", path: "/read" }))).folder;
      const expected = {
        ...f,
        projectId: project.id,
        environment: { envId: project.environments[0].id, envName: "Development", envSlug: "dev" },
      };
      expect(
        (await ok(call(t.app, "GET", `/api/v1/folders/${f.id}`, { token: viewer.token }))).folder,
      ).toEqual(expected);
      expect(
        (await ok(call(t.app, "GET", `/api/v2/folders/${f.id}`, { token: viewer.token }))).folder,
      ).toEqual(expected);
      const byPath = await ok(
        call(t.app, "GET", `/api/v1/folders/${project.id}/dev/${encodeURIComponent("/read/byid")}`, {
          token: viewer.token,
        }),
      );
      expect(byPath.folder).toEqual(expected);
      const missing = await call(
        t.app,
        "GET",
        `/api/v1/folders/${project.id}/dev/${encodeURIComponent("/read/nope")}`,
        {
          token: viewer.token,
        },
      );
      expect(missing.status).toBe(404);
    });

    it("renames by id or by name, and the subtree follows", async () => {
      const top = (await ok(create({ name: "old", path: "/ren" }))).folder;
      await ok(create({ name: "leaf", path: "/ren/old/mid" }));
      const renamed = await ok(
        call(t.app, "PATCH", `/api/v1/folders/${top.id}`, {
          token: w.adminToken,
          body: {
            workspaceId: project.id,
            environment: "dev",
            path: "/ren",
            name: "new",
            description: "moved",
          },
        }),
      );
      expect(renamed.folder).toMatchObject({
        id: top.id,
        name: "new",
        path: "/ren/new",
        description: "moved",
        version: 2,
      });
      expect((await list("path=/ren/new/mid")).map((f) => f.name)).toEqual(["leaf"]);
      expect(await list("path=/ren/old/mid")).toEqual([]);
      const byName = await ok(
        call(t.app, "PATCH", "/api/v2/folders/new", {
          token: w.adminToken,
          body: { projectId: project.id, environment: "dev", path: "/ren", name: "newer" },
        }),
      );
      expect(byName.folder).toMatchObject({ id: top.id, path: "/ren/newer", description: "moved" });
    });

    it("deletes by name (CLI) or id (Terraform, v2) with the subtree", async () => {
      const a = (await ok(create({ name: "a", path: "/del" }))).folder;
      const inner = (await ok(create({ name: "inner", path: "/del/a" }))).folder;
      const b = (await ok(create({ name: "b", path: "/del" }))).folder;
      const byName = await ok(
        call(t.app, "DELETE", "/api/v1/folders/a", {
          token: w.adminToken,
          body: { workspaceId: project.id, environment: "dev", directory: "/del", folderName: "a" },
        }),
      );
      expect(byName.folder).toMatchObject({ id: a.id, name: "a" });
      expect(byName.folder).not.toHaveProperty("path");
      expect((await call(t.app, "GET", `/api/v1/folders/${inner.id}`, { token: w.adminToken })).status).toBe(
        404,
      );
      await ok(
        call(t.app, "DELETE", `/api/v2/folders/${b.id}`, {
          token: w.adminToken,
          body: { projectId: project.id, environment: "dev", path: "/del" },
        }),
      );
      expect(await list("path=/del")).toEqual([]);
    });
  });

  describe("errors", () => {
    it("validates names (422) and paths (400)", async () => {
      const badName = await create({ name: "has space" });
      expect(badName.status).toBe(422);
      expect(JSON.stringify(badName.json.message)).toContain("Invalid folder name");
      for (const path of ["/a/../b", "/a//b", "/é"]) {
        const r = await create({ name: "x", path });
        expect(r.status).toBe(400);
        expect(r.json.error).toBe("BadRequest");
      }
      const noProject = await call(t.app, "POST", "/api/v1/folders", {
        token: w.adminToken,
        body: { environment: "dev", name: "x" },
      });
      expect(noProject.status).toBe(422);
      expect(noProject.json.message[0]).toMatchObject({ path: ["workspaceId"], message: "Required" });
    });

    it("a missing environment is 404 on create and list", async () => {
      const c = await create({ environment: "nope", name: "x" });
      expect(c.status).toBe(404);
      expect(c.json.message).toBe(
        `Environment with slug 'nope' in project with ID '${project.id}' not found`,
      );
      const l = await call(t.app, "GET", `/api/v1/folders?workspaceId=${project.id}&environment=nope`, {
        token: w.adminToken,
      });
      expect(l.status).toBe(404);
    });

    it("rename clashes are 400; unknown folders and parents are 404", async () => {
      await ok(create({ name: "one", path: "/clash" }));
      const two = (await ok(create({ name: "two", path: "/clash" }))).folder;
      const patch = (id: string, body: Json) =>
        call(t.app, "PATCH", `/api/v1/folders/${id}`, {
          token: w.adminToken,
          body: { workspaceId: project.id, environment: "dev", ...body },
        });
      const clash = await patch(two.id, { path: "/clash", name: "one" });
      expect(clash.status).toBe(400);
      expect(clash.json).toMatchObject({
        error: "UpdateFolder",
        message: "Folder with specified name already exists",
      });
      const unknown = await patch("00000000-0000-0000-0000-000000000000", { path: "/clash", name: "z" });
      expect(unknown.status).toBe(404);
      expect(unknown.json.error).toBe("UpdateFolder");
      const noParent = await patch(two.id, { path: "/nowhere", name: "z" });
      expect(noParent.status).toBe(404);
      const del = await call(t.app, "DELETE", "/api/v1/folders/ghost", {
        token: w.adminToken,
        body: { workspaceId: project.id, environment: "dev", path: "/clash" },
      });
      expect(del.status).toBe(404);
      expect(del.json.message).toBe("Folder with ID 'ghost' not found");
      for (const id of ["not-a-uuid", "00000000-0000-0000-0000-000000000000"]) {
        expect((await call(t.app, "GET", `/api/v1/folders/${id}`, { token: w.adminToken })).status).toBe(404);
      }
    });

    it("the root folder cannot be renamed or deleted", async () => {
      const root = await call(t.app, "DELETE", "/api/v1/folders/root", {
        token: w.adminToken,
        body: { workspaceId: project.id, environment: "dev", path: "/" },
      });
      expect(root.status).toBe(404);
      expect(await list("path=/")).not.toEqual([]);
    });
  });

  describe("permissions", () => {
    it("a viewer lists and reads but cannot write", async () => {
      expect(Array.isArray(await list("path=/", viewer.token))).toBe(true);
      const r = await create({ name: "nope" }, viewer.token);
      expect(r.status).toBe(403);
      expect(r.json).toMatchObject({
        error: "PermissionDenied",
        message: "You are not allowed to create on secret-folders",
      });
    });

    it("folder rules are scoped by environment and parent path", async () => {
      const role = await ok(
        call(t.app, "POST", `/api/v1/projects/${project.id}/roles`, {
          token: w.adminToken,
          body: {
            slug: "folder-builder",
            permissions: [
              {
                subject: "secret-folders",
                action: ["create"],
                conditions: { environment: "staging", secretPath: { $glob: "/team/**" } },
              },
            ],
          },
        }),
      );
      const builder = await addMember(t.app, w, project.id, "folder-builder", role.role.slug);
      const mk = (environment: string, path: string) =>
        call(t.app, "POST", "/api/v1/folders", {
          token: builder.token,
          body: { workspaceId: project.id, environment, path, name: "x" },
        });
      expect((await mk("staging", "/team")).status).toBe(200);
      expect((await mk("staging", "/team/a")).status).toBe(200);
      expect((await mk("staging", "/other")).status).toBe(403);
      expect((await mk("prod", "/team")).status).toBe(403);
    });

    describe("shared cases (create)", () => {
      permissionCases(() => ({
        t,
        world: w,
        revokedToken,
        route: () => ({
          method: "POST",
          url: "/api/v1/folders",
          body: { workspaceId: project.id, environment: "dev", name: "pc" },
          weakToken: viewer.token,
        }),
      }));
    });
  });
});
