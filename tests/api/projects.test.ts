import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import {
  addMember,
  bootstrap,
  call,
  type Json,
  makeIdentity,
  makeProject,
  ok,
  type World,
} from "../helpers/fixtures.js";
import { makeOtherOrg } from "../helpers/other-org.js";
import { permissionCases } from "../helpers/permission-cases.js";

describe("projects, memberships and roles", () => {
  let t: TestApp;
  let w: World;
  let project: Json;
  let viewer: Awaited<ReturnType<typeof addMember>>;
  let revokedToken: string;

  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
    project = await makeProject(t.app, w.adminToken, "Payments");
    viewer = await addMember(t.app, w, project.id, "viewer-bot", "viewer");
    const r = await makeIdentity(t.app, w, "revoked-bot");
    await ok(call(t.app, "POST", "/api/v1/auth/token/revoke", { body: { accessToken: r.token } }));
    revokedToken = r.token;
  });
  afterAll(async () => t.close());

  describe("happy", () => {
    it("creates, gets (v1 and workspace), lists, updates and deletes projects", async () => {
      const p = await makeProject(t.app, w.adminToken, "Temp Project");
      expect(p).toMatchObject({ name: "Temp Project", type: "secret-manager", version: 3, orgId: w.orgId });
      expect(p.slug).toMatch(/^temp-project-[a-z0-9]{4}$/);
      expect(
        (await ok(call(t.app, "GET", `/api/v1/projects/${p.id}`, { token: w.adminToken }))).project.id,
      ).toBe(p.id);
      expect(
        (await ok(call(t.app, "GET", `/api/v1/workspace/${p.id}`, { token: w.adminToken }))).workspace.id,
      ).toBe(p.id);
      expect((await ok(call(t.app, "GET", `/api/v2/workspace/${p.slug}`, { token: w.adminToken }))).id).toBe(
        p.id,
      );
      const list = await ok(call(t.app, "GET", "/api/v1/projects", { token: w.adminToken }));
      expect(list.projects.map((x: Json) => x.id)).toContain(p.id);
      const upd = await ok(
        call(t.app, "PATCH", `/api/v1/projects/${p.id}`, { token: w.adminToken, body: { name: "Renamed" } }),
      );
      expect(upd.project.name).toBe("Renamed");
      const del = await ok(call(t.app, "DELETE", `/api/v1/workspace/${p.id}`, { token: w.adminToken }));
      expect(del.workspace.id).toBe(p.id);
      expect((await call(t.app, "GET", `/api/v1/projects/${p.id}`, { token: w.adminToken })).status).toBe(
        404,
      );
    });

    it("refuses duplicate slugs and honours delete protection", async () => {
      await ok(
        call(t.app, "POST", "/api/v1/projects", {
          token: w.adminToken,
          body: { projectName: "A", slug: "fixed-slug" },
        }),
      );
      const dupe = await call(t.app, "POST", "/api/v1/projects", {
        token: w.adminToken,
        body: { projectName: "B", slug: "fixed-slug" },
      });
      expect(dupe.status).toBe(400);
      expect(dupe.json.message).toContain('A project with the slug "fixed-slug" already exists');
      const p = await makeProject(t.app, w.adminToken, "Protected");
      await ok(
        call(t.app, "PATCH", `/api/v1/projects/${p.id}`, {
          token: w.adminToken,
          body: { hasDeleteProtection: true },
        }),
      );
      const del = await call(t.app, "DELETE", `/api/v1/projects/${p.id}`, { token: w.adminToken });
      expect(del.status).toBe(403);
      expect(del.json.message).toBe("Project delete protection is enabled");
    });

    it("manages identity memberships", async () => {
      const bot = await makeIdentity(t.app, w, "member-bot");
      const base = `/api/v2/workspace/${project.id}/identity-memberships`;
      const add = await ok(
        call(t.app, "POST", `${base}/${bot.id}`, {
          token: w.adminToken,
          body: { roles: [{ role: "member" }] },
        }),
      );
      expect(add.identityMembership).toMatchObject({ identityId: bot.id, projectId: project.id });
      const list = await ok(call(t.app, "GET", base, { token: w.adminToken }));
      expect(list.identityMemberships.map((m: Json) => m.identityId)).toContain(bot.id);
      const upd = await ok(
        call(t.app, "PATCH", `${base}/${bot.id}`, { token: w.adminToken, body: { role: "viewer" } }),
      );
      expect(upd.roles[0].role).toBe("viewer");
      // The role change takes effect at once: the viewer can no longer create environments' members.
      const denied = await call(t.app, "POST", `${base}/${viewer.id}`, {
        token: bot.token,
        body: { role: "admin" },
      });
      expect(denied.status).toBe(403);
      await ok(call(t.app, "DELETE", `${base}/${bot.id}`, { token: w.adminToken }));
      const gone = await call(t.app, "GET", `/api/v1/projects/${project.id}`, { token: bot.token });
      expect(gone.status).toBe(403);
      expect(gone.json.error).toBe("You are not member of this project");
    });

    it("creates custom roles with conditions and assigns them", async () => {
      const role = await ok(
        call(t.app, "POST", `/api/v1/projects/${project.id}/roles`, {
          token: w.adminToken,
          body: {
            slug: "app-dev-only",
            name: "App (dev)",
            permissions: [
              {
                subject: "secrets",
                action: ["read", "create"],
                conditions: { environment: { $eq: "dev" }, secretPath: { $glob: "/app/**" } },
              },
            ],
          },
        }),
      );
      expect(role.role.slug).toBe("app-dev-only");
      const bot = await addMember(t.app, w, project.id, "custom-bot", "app-dev-only");
      const m = await ok(
        call(t.app, "GET", `/api/v2/workspace/${project.id}/identity-memberships/${bot.id}`, {
          token: w.adminToken,
        }),
      );
      expect(m.identityMembership.roles[0]).toMatchObject({ role: "custom", customRoleSlug: "app-dev-only" });
      const roles = await ok(
        call(t.app, "GET", `/api/v1/projects/${project.id}/roles`, { token: w.adminToken }),
      );
      expect(roles.roles.map((r: Json) => r.slug)).toEqual(
        expect.arrayContaining(["admin", "member", "viewer", "no-access", "app-dev-only"]),
      );
    });
  });

  describe("errors", () => {
    it("validates custom role rules", async () => {
      const url = `/api/v1/projects/${project.id}/roles`;
      const bad = [
        { subject: "nope", action: "read" },
        { subject: "secrets", action: "fly" },
        { subject: "secrets", action: "read", conditions: { secretPath: { $regex: "x" } } },
        { subject: "secrets", action: "read", conditions: { secretPath: { $eq: "no-slash" } } },
        { subject: "tags", action: "read", conditions: { environment: "dev" } },
      ];
      for (const rule of bad) {
        const r = await call(t.app, "POST", url, {
          token: w.adminToken,
          body: { slug: "bad-role", permissions: [rule] },
        });
        expect(r.status).toBe(400);
      }
      const unknownRole = await call(
        t.app,
        "POST",
        `/api/v2/workspace/${project.id}/identity-memberships/${viewer.id}`,
        {
          token: w.adminToken,
          body: { role: "does-not-exist" },
        },
      );
      expect([400, 404]).toContain(unknownRole.status);
    });

    it("answers 404 for unknown and non-uuid project ids, and for other organisations' projects", async () => {
      for (const id of ["not-a-uuid", "00000000-0000-0000-0000-000000000000"]) {
        const r = await call(t.app, "GET", `/api/v1/projects/${id}`, { token: w.adminToken });
        expect(r.status).toBe(404);
        expect(r.json.message).toBe(`Project with ${id} not found`);
      }
      const other = await makeOtherOrg(t);
      const theirs = await makeProject(t.app, other.token, "Theirs");
      expect(
        (await call(t.app, "GET", `/api/v1/projects/${theirs.id}`, { token: w.adminToken })).status,
      ).toBe(404);
    });
  });

  describe("permissions: add an identity membership", () => {
    permissionCases(() => ({
      t,
      world: w,
      revokedToken,
      route: async () => {
        const target = await makeIdentity(t.app, w, `target-${Math.random().toString(36).slice(2, 8)}`);
        return {
          method: "POST",
          url: `/api/v2/workspace/${project.id}/identity-memberships/${target.id}`,
          body: { role: "viewer" },
          weakToken: viewer.token,
        };
      },
    }));
  });

  describe("permissions: delete a project", () => {
    permissionCases(() => ({
      t,
      world: w,
      revokedToken,
      route: () => ({ method: "DELETE", url: `/api/v1/projects/${project.id}`, weakToken: viewer.token }),
    }));
  });
});
