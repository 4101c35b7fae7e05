import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/build-test-app.js";
import { call, type Json, makeIdentity, makeProject, ok, type World } from "../helpers/fixtures.js";
import { permissionCases } from "../helpers/permission-cases.js";
import { projectWorld } from "../helpers/project-world.js";

describe("environments", () => {
  let t: TestApp;
  let w: World;
  let project: Json;
  let viewer: { token: string };
  let revokedToken: string;
  beforeAll(async () => {
    ({ t, w, project, viewer, revokedToken } = await projectWorld("Envs"));
  });
  afterAll(async () => t.close());

  const base = () => `/api/v1/projects/${project.id}/environments`;
  const create = (body: unknown, url = base()) => call(t.app, "POST", url, { token: w.adminToken, body });
  const slugs = async () =>
    (
      await ok(call(t.app, "GET", `/api/v1/projects/${project.id}`, { token: w.adminToken }))
    ).project.environments.map((e: Json) => e.slug);

  describe("happy", () => {
    it("creates an environment with its root folder and appends it", async () => {
      const r = await ok(create({ name: "QA", slug: "qa" }));
      expect(r).toEqual({
        message: "Successfully created new environment",
        projectId: project.id,
        environment: {
          id: expect.any(String),
          name: "QA",
          slug: "qa",
          position: 4,
          projectId: project.id,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        },
      });
      expect(await slugs()).toEqual(["dev", "staging", "prod", "qa"]);
      // The root folder exists: a folder can be created at "/" and listed there.
      await ok(
        call(t.app, "POST", "/api/v1/folders", {
          token: w.adminToken,
          body: { workspaceId: project.id, environment: "qa", name: "app" },
        }),
      );
      const listed = await ok(
        call(t.app, "GET", `/api/v1/folders?workspaceId=${project.id}&environment=qa`, {
          token: w.adminToken,
        }),
      );
      expect(listed.folders.map((f: Json) => f.name)).toEqual(["app"]);
    });

    it("inserting at a taken position shifts the others (deprecated workspace route, SDK shape)", async () => {
      const r = await ok(
        create(
          { name: "Sandbox", slug: "sandbox", position: 1, projectId: project.id },
          `/api/v1/workspace/${project.id}/environments`,
        ),
      );
      expect(r.workspace).toBe(project.id);
      expect(r).not.toHaveProperty("projectId");
      expect(r.environment.position).toBe(1);
      expect(await slugs()).toEqual(["sandbox", "dev", "staging", "prod", "qa"]);
    });

    it("updates name, slug and position, keeping positions dense", async () => {
      const env = (await ok(create({ name: "Perf", slug: "perf" }))).environment;
      const moved = await ok(
        call(t.app, "PATCH", `${base()}/${env.id}`, {
          token: w.adminToken,
          body: { name: "Performance", slug: "performance", position: 2 },
        }),
      );
      expect(moved).toMatchObject({
        message: "Successfully updated environment",
        environment: { id: env.id, name: "Performance", slug: "performance", position: 2 },
      });
      expect(await slugs()).toEqual(["sandbox", "performance", "dev", "staging", "prod", "qa"]);
      const back = await ok(
        call(t.app, "PATCH", `/api/v1/workspace/${project.id}/environments/${env.id}`, {
          token: w.adminToken,
          body: { position: 6 },
        }),
      );
      expect(back.workspace).toBe(project.id);
      expect(await slugs()).toEqual(["sandbox", "dev", "staging", "prod", "qa", "performance"]);
    });

    it("reads by id (all three spellings) and by slug", async () => {
      const env = (await ok(create({ name: "Read", slug: "read-me" }))).environment;
      for (const url of [
        `${base()}/${env.id}`,
        `/api/v1/workspace/${project.id}/environments/${env.id}`,
        `/api/v1/workspace/environments/${env.id}`,
        `${base()}/slug/read-me`,
      ]) {
        expect((await ok(call(t.app, "GET", url, { token: viewer.token }))).environment).toEqual(env);
      }
    });

    it("deletes an environment (Terraform sends a JSON body) and its folders go with it", async () => {
      const env = (await ok(create({ name: "Tmp", slug: "tmp" }))).environment;
      const del = await ok(
        call(t.app, "DELETE", `/api/v1/workspace/${project.id}/environments/${env.id}`, {
          token: w.adminToken,
          body: { workspaceId: project.id, id: env.id },
        }),
      );
      expect(del).toMatchObject({ message: "Successfully deleted environment", workspace: project.id });
      expect(del.environment.id).toBe(env.id);
      const after = await call(t.app, "GET", `${base()}/${env.id}`, { token: w.adminToken });
      expect(after.status).toBe(404);
      const folders = await call(t.app, "GET", `/api/v1/folders?workspaceId=${project.id}&environment=tmp`, {
        token: w.adminToken,
      });
      expect(folders.status).toBe(404);
      expect(await slugs()).not.toContain("tmp");
    });
  });

  describe("errors", () => {
    it("refuses a duplicate slug on create and on update", async () => {
      const dup = await create({ name: "Dev again", slug: "dev" });
      expect(dup.status).toBe(400);
      expect(dup.json).toMatchObject({
        error: "CreateEnvironment",
        message: "Environment with slug already exist",
      });
      const env = (await ok(create({ name: "Other", slug: "other" }))).environment;
      const clash = await call(t.app, "PATCH", `${base()}/${env.id}`, {
        token: w.adminToken,
        body: { slug: "dev" },
      });
      expect(clash.status).toBe(400);
      expect(clash.json.error).toBe("UpdateEnvironment");
    });

    it("validates bodies with 422", async () => {
      for (const body of [
        { name: "X", slug: "Bad Slug" },
        { slug: "no-name" },
        { name: "X", slug: "x", position: 0 },
        {},
      ]) {
        const r = await create(body);
        expect(r.status).toBe(422);
        expect(r.json.error).toBe("ValidationFailure");
        expect(Array.isArray(r.json.message)).toBe(true);
      }
    });

    it("unknown or malformed ids are 404, never 500", async () => {
      for (const id of ["00000000-0000-0000-0000-000000000000", "not-a-uuid"]) {
        const get = await call(t.app, "GET", `${base()}/${id}`, { token: w.adminToken });
        expect(get.status).toBe(404);
        expect(get.json.message).toBe(`Environment with ID '${id}' not found`);
        const patch = await call(t.app, "PATCH", `${base()}/${id}`, {
          token: w.adminToken,
          body: { name: "x" },
        });
        expect(patch.status).toBe(404);
        expect(patch.json.message).toBe(
          `Environment with id '${id}' in project with ID '${project.id}' not found`,
        );
        const del = await call(t.app, "DELETE", `${base()}/${id}`, { token: w.adminToken });
        expect(del.status).toBe(404);
        expect(del.json.error).toBe("DeleteEnvironment");
      }
      const slug = await call(t.app, "GET", `${base()}/slug/nope`, { token: w.adminToken });
      expect(slug.status).toBe(404);
      expect(slug.json.message).toBe(
        `Environment with slug 'nope' in project with ID '${project.id}' not found`,
      );
    });

    it("an environment of another project cannot be changed through this project's path", async () => {
      const other = await makeProject(t.app, w.adminToken, "Envs other");
      const foreign = other.environments[0];
      const r = await call(t.app, "PATCH", `${base()}/${foreign.id}`, {
        token: w.adminToken,
        body: { name: "x" },
      });
      expect(r.status).toBe(404);
    });
  });

  describe("permissions", () => {
    it("a viewer reads but cannot create, edit or delete", async () => {
      const env = project.environments[0];
      const denied = [
        await call(t.app, "POST", base(), { token: viewer.token, body: { name: "V", slug: "v" } }),
        await call(t.app, "PATCH", `${base()}/${env.id}`, { token: viewer.token, body: { name: "x" } }),
        await call(t.app, "DELETE", `${base()}/${env.id}`, { token: viewer.token }),
      ];
      expect(denied.map((r) => [r.status, r.json.error])).toEqual([
        [403, "PermissionDenied"],
        [403, "PermissionDenied"],
        [403, "PermissionDenied"],
      ]);
      expect(denied[0]?.json.message).toBe("You are not allowed to create on environments");
    });

    describe("shared cases (create)", () => {
      permissionCases(() => ({
        t,
        world: w,
        revokedToken,
        route: () => ({
          method: "POST",
          url: base(),
          body: { name: "P", slug: "p" },
          weakToken: viewer.token,
        }),
      }));
    });

    describe("shared cases (get by id)", () => {
      permissionCases(() => ({
        t,
        world: w,
        revokedToken,
        route: async () => {
          const outsider = await makeIdentity(t.app, w, `env-outsider-${Date.now()}`);
          return { method: "GET", url: `${base()}/${project.environments[0].id}`, weakToken: outsider.token };
        },
      }));
    });
  });
});
