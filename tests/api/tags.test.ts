import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/build-test-app.js";
import { addMember, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import { makeOtherOrg } from "../helpers/other-org.js";
import { permissionCases } from "../helpers/permission-cases.js";
import { projectWorld } from "../helpers/project-world.js";

describe("tags", () => {
  let t: TestApp;
  let w: World;
  let project: Json;
  let viewer: { token: string };
  let revokedToken: string;
  beforeAll(async () => {
    ({ t, w, project, viewer, revokedToken } = await projectWorld("Tags"));
  });
  afterAll(async () => t.close());

  const base = () => `/api/v1/projects/${project.id}/tags`;
  const ws = () => `/api/v1/workspace/${project.id}/tags`;
  const create = (body: Json, token = w.adminToken) => call(t.app, "POST", base(), { token, body });

  describe("happy", () => {
    it("creates, reads (with name = slug), lists, updates and deletes", async () => {
      const created = (await ok(create({ slug: "backend", color: "#ff0000" }))).tag;
      expect(created).toEqual({
        id: expect.any(String),
        slug: "backend",
        color: "#ff0000",
        projectId: project.id,
        createdBy: expect.stringMatching(/^[0-9a-f-]{36}$/),
        createdByActorType: "identity",
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const byId = await ok(call(t.app, "GET", `${base()}/${created.id}`, { token: viewer.token }));
      expect(byId.tag).toEqual({ ...created, name: "backend" });
      const bySlug = await ok(call(t.app, "GET", `${base()}/slug/backend`, { token: viewer.token }));
      expect(bySlug.tag).toEqual(byId.tag);
      await ok(create({ slug: "frontend", color: "" }));
      const listed = await ok(call(t.app, "GET", base(), { token: viewer.token }));
      expect(listed.tags.map((x: Json) => x.slug)).toEqual(["backend", "frontend"]);
      const updated = await ok(
        call(t.app, "PATCH", `${base()}/${created.id}`, {
          token: w.adminToken,
          body: { slug: "api", color: "blue" },
        }),
      );
      expect(updated.tag).toMatchObject({ id: created.id, slug: "api", color: "blue" });
      const deleted = await ok(call(t.app, "DELETE", `${base()}/${created.id}`, { token: w.adminToken }));
      expect(deleted.tag).toMatchObject({ id: created.id, slug: "api" });
      expect(deleted.tag).not.toHaveProperty("name");
      expect((await call(t.app, "GET", `${base()}/${created.id}`, { token: w.adminToken })).status).toBe(404);
    });

    it("the deprecated workspace routes answer with workspaceTag(s) (Terraform's delete sends a body)", async () => {
      const c = await ok(
        call(t.app, "POST", ws(), {
          token: w.adminToken,
          body: { name: "tf", slug: "tf", color: "", projectId: project.id },
        }),
      );
      expect(c.workspaceTag).toMatchObject({ slug: "tf", color: "" });
      const listed = await ok(call(t.app, "GET", ws(), { token: w.adminToken }));
      expect(listed.workspaceTags.map((x: Json) => x.slug)).toContain("tf");
      const one = await ok(call(t.app, "GET", `${ws()}/${c.workspaceTag.id}`, { token: w.adminToken }));
      expect(one.workspaceTag.name).toBe("tf");
      const del = await ok(
        call(t.app, "DELETE", `${ws()}/${c.workspaceTag.id}`, {
          token: w.adminToken,
          body: { projectId: project.id, tagId: c.workspaceTag.id },
        }),
      );
      expect(del.workspaceTag.id).toBe(c.workspaceTag.id);
    });

    it("the CLI flow: slug lookup 404, then create with only slug and color", async () => {
      const miss = await call(t.app, "GET", `${base()}/slug/cli-made`, { token: w.adminToken });
      expect(miss.status).toBe(404);
      expect(miss.json.message).toBe("Tag with slug 'cli-made' not found");
      await ok(create({ slug: "cli-made", color: "" }));
      expect(
        (await ok(call(t.app, "GET", `${base()}/slug/cli-made`, { token: w.adminToken }))).tag.name,
      ).toBe("cli-made");
    });

    it("by-id routes authorise against the tag's own project, not the path's", async () => {
      const tag = (await ok(create({ slug: "owned", color: "" }))).tag;
      const other = await makeProject(t.app, w.adminToken, "Tags other");
      const viaOther = await ok(
        call(t.app, "GET", `/api/v1/projects/${other.id}/tags/${tag.id}`, { token: w.adminToken }),
      );
      expect(viaOther.tag.projectId).toBe(project.id);
      // A member of the other project only cannot reach it through that project's path.
      const outsider = await addMember(t.app, w, other.id, "tag-outsider", "admin");
      const denied = await call(t.app, "DELETE", `/api/v1/projects/${other.id}/tags/${tag.id}`, {
        token: outsider.token,
      });
      expect(denied.status).toBe(403);
      expect(denied.json.error).toBe("You are not member of this project");
    });

    it("deleting a tag detaches it from secrets", async () => {
      const tag = (await ok(create({ slug: "attached", color: "" }))).tag;
      await ok(
        call(t.app, "POST", "/api/v4/secrets/TAGGED", {
          token: w.adminToken,
          body: { projectId: project.id, environment: "dev", secretValue: "v", tagIds: [tag.id] },
        }),
      );
      const read = async () =>
        (
          await ok(
            call(t.app, "GET", `/api/v4/secrets/TAGGED?projectId=${project.id}&environment=dev`, {
              token: w.adminToken,
            }),
          )
        ).secret;
      expect((await read()).tags.map((x: Json) => x.slug)).toEqual(["attached"]);
      await ok(call(t.app, "DELETE", `${base()}/${tag.id}`, { token: w.adminToken }));
      expect(await read()).toMatchObject({ secretKey: "TAGGED", tags: [] });
    });
  });

  describe("errors", () => {
    it("duplicate slugs are 400 on create and update", async () => {
      await ok(create({ slug: "dup", color: "" }));
      const again = await create({ slug: "dup", color: "red" });
      expect(again.status).toBe(400);
      expect(again.json).toMatchObject({ error: "BadRequest", message: "Tag already exists" });
      const other = (await ok(create({ slug: "dup-2", color: "" }))).tag;
      const clash = await call(t.app, "PATCH", `${base()}/${other.id}`, {
        token: w.adminToken,
        body: { slug: "dup", color: "" },
      });
      expect(clash.status).toBe(400);
      expect(clash.json.message).toBe("Tag already exists");
    });

    it("validates bodies with 422 (color is required, slugs are lowercase)", async () => {
      for (const body of [
        { slug: "no-color" },
        { slug: "Upper", color: "" },
        { color: "" },
        { slug: "a b", color: "" },
      ]) {
        const r = await create(body);
        expect(r.status).toBe(422);
        expect(r.json.error).toBe("ValidationFailure");
      }
    });

    it("unknown and malformed tag ids are 404, never 500", async () => {
      for (const id of ["00000000-0000-0000-0000-000000000000", "not-a-uuid"]) {
        for (const [method, body] of [
          ["GET", undefined],
          ["PATCH", { slug: "x", color: "" }],
          ["DELETE", undefined],
        ] as const) {
          const r = await call(t.app, method, `${base()}/${id}`, { token: w.adminToken, body });
          expect(r.status).toBe(404);
          expect(r.json.message).toBe(`Tag with ID '${id}' not found`);
        }
      }
    });

    it("another organisation's tag is a 404 even by id", async () => {
      const tag = (await ok(create({ slug: "private", color: "" }))).tag;
      const intruder = await makeOtherOrg(t);
      const r = await call(t.app, "DELETE", `/api/v1/projects/${project.id}/tags/${tag.id}`, {
        token: intruder.token,
      });
      expect(r.status).toBe(404);
      expect(r.json.message).toBe(`Tag with ID '${tag.id}' not found`);
    });
  });

  describe("permissions", () => {
    it("a viewer reads but cannot create, edit or delete", async () => {
      const tag = (await ok(create({ slug: "ro", color: "" }))).tag;
      const r = await create({ slug: "nope", color: "" }, viewer.token);
      expect(r.status).toBe(403);
      expect(r.json.message).toBe("You are not allowed to create on tags");
      const p = await call(t.app, "PATCH", `${base()}/${tag.id}`, {
        token: viewer.token,
        body: { slug: "x", color: "" },
      });
      expect(p.status).toBe(403);
      const d = await call(t.app, "DELETE", `${base()}/${tag.id}`, { token: viewer.token });
      expect(d.status).toBe(403);
      expect(d.json.message).toBe("You are not allowed to delete on tags");
    });

    describe("shared cases (delete)", () => {
      let tagId = "";
      beforeAll(async () => {
        tagId = (await ok(create({ slug: "shared-case", color: "" }))).tag.id;
      });
      permissionCases(() => ({
        t,
        world: w,
        revokedToken,
        route: () => ({ method: "DELETE", url: `${base()}/${tagId}`, weakToken: viewer.token }),
      }));
    });
  });
});
