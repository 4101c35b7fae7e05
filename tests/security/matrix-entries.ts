import { call, makeProject, ok } from "../helpers/fixtures.js";
import { DATA_ENTRIES } from "./matrix-entries-data.js";
import { SYNC_ENTRIES } from "./matrix-entries-syncs.js";
import type { Caller, MatrixWorld } from "./matrix-fixtures.js";

/**
 * One entry per route of the route table ("METHOD /url"): how to build a fresh request, and which
 * access rule it is under. Expected statuses follow from the access rule (see `expected` in
 * matrix.test.ts) unless an entry overrides some callers. A route without an entry fails the suite.
 */
export type Req = { url: string; body?: unknown };
export type Access =
  | { kind: "public" }
  | { kind: "org-admin" } // organisation admins only (identities, universal auth, users)
  | { kind: "org-any" } // any authenticated caller; results are scoped to their organisation
  | { kind: "project"; level: "read" | "write" | "manage"; subject: string; devApp?: boolean };
export type Entry = {
  access: Access;
  build: (mw: MatrixWorld, caller: Caller) => Promise<Req> | Req;
  /** Per-caller overrides of the derived expectation. */
  override?: Partial<Record<Caller, number>>;
  /** The success status (default 200). */
  ok?: number;
};

/** A fresh identity with universal auth and one client secret (no login: keeps the matrix fast). */
const freshIdentity = async (mw: MatrixWorld) => {
  const { app } = mw.t;
  const token = mw.w.adminToken;
  const r = await ok(
    call(app, "POST", "/api/v1/identities", { token, body: { name: "m", organizationId: mw.w.orgId } }),
  );
  const id = r.identity.id as string;
  await ok(call(app, "POST", `/api/v1/auth/universal-auth/identities/${id}`, { token, body: {} }));
  await ok(
    call(app, "POST", `/api/v1/auth/universal-auth/identities/${id}/client-secrets`, { token, body: {} }),
  );
  return id;
};
const freshProject = async (mw: MatrixWorld) => {
  // A project the matrix callers are members of, with their roles (admin creates it, then adds them).
  const p = await makeProject(mw.t.app, mw.w.adminToken, `mp-${Math.random().toString(36).slice(2, 7)}`);
  const roles = { noAccess: "no-access", viewer: "viewer", member: "member", admin: "admin" } as const;
  for (const [k, role] of Object.entries(roles) as [keyof typeof roles, string][]) {
    await ok(
      call(mw.t.app, "POST", `/api/v2/workspace/${p.id}/identity-memberships/${mw.ids[k]}`, {
        token: mw.w.adminToken,
        body: { role },
      }),
    );
  }
  return p.id as string;
};

const proj = (mw: MatrixWorld) => mw.project.id as string;

export const ENTRIES: Record<string, Entry> = {
  // ---- public ----
  "GET /api/status": { access: { kind: "public" }, build: () => ({ url: "/api/status" }) },
  "POST /api/v1/admin/bootstrap": {
    access: { kind: "public" },
    ok: 400, // the instance is already bootstrapped: the same answer for everyone
    build: () => ({
      url: "/api/v1/admin/bootstrap",
      body: { email: "x@example.com", password: "pw", organization: "X" },
    }),
  },
  "POST /api/v1/auth/universal-auth/login": {
    access: { kind: "public" },
    ok: 401,
    build: () => ({
      url: "/api/v1/auth/universal-auth/login",
      body: { clientId: "00000000-0000-0000-0000-000000000000", clientSecret: "x" },
    }),
  },
  "POST /api/v1/auth/token/renew": {
    access: { kind: "public" },
    ok: 403, // the body's token is malformed: TokenError, whoever asks
    build: () => ({ url: "/api/v1/auth/token/renew", body: { accessToken: "nope" } }),
  },
  "POST /api/v1/auth/token/revoke": {
    access: { kind: "public" },
    ok: 403,
    build: () => ({ url: "/api/v1/auth/token/revoke", body: { accessToken: "nope" } }),
  },
  "POST /api/v1/auth/email/login": {
    access: { kind: "public" },
    ok: 401,
    build: () => ({ url: "/api/v1/auth/email/login", body: { email: "nobody@example.com", password: "x" } }),
  },

  // ---- organisation: identities, universal auth, users ----
  "POST /api/v1/identities": {
    access: { kind: "org-admin" },
    build: (mw) => ({ url: "/api/v1/identities", body: { name: "n", organizationId: mw.w.orgId } }),
  },
  "GET /api/v1/identities": {
    access: { kind: "org-any" },
    build: (mw) => ({ url: `/api/v1/identities?orgId=${mw.w.orgId}` }),
    override: { otherOrg: 404 },
  },
  "GET /api/v1/identities/:identityId": {
    access: { kind: "org-any" },
    build: async (mw) => ({ url: `/api/v1/identities/${await freshIdentity(mw)}` }),
    override: { otherOrg: 404 },
  },
  "PATCH /api/v1/identities/:identityId": {
    access: { kind: "org-admin" },
    build: async (mw) => ({
      url: `/api/v1/identities/${await freshIdentity(mw)}`,
      body: { name: "renamed" },
    }),
  },
  "DELETE /api/v1/identities/:identityId": {
    access: { kind: "org-admin" },
    build: async (mw) => ({ url: `/api/v1/identities/${await freshIdentity(mw)}` }),
  },
  "POST /api/v1/auth/universal-auth/identities/:identityId": {
    access: { kind: "org-admin" },
    build: async (mw) => {
      const r = await ok(
        call(mw.t.app, "POST", "/api/v1/identities", {
          token: mw.w.adminToken,
          body: { name: "bare", organizationId: mw.w.orgId },
        }),
      );
      return { url: `/api/v1/auth/universal-auth/identities/${r.identity.id}`, body: {} };
    },
  },
  "GET /api/v1/auth/universal-auth/identities/:identityId": {
    access: { kind: "org-any" },
    build: async (mw) => ({ url: `/api/v1/auth/universal-auth/identities/${await freshIdentity(mw)}` }),
    override: { otherOrg: 404 },
  },
  "PATCH /api/v1/auth/universal-auth/identities/:identityId": {
    access: { kind: "org-admin" },
    build: async (mw) => ({
      url: `/api/v1/auth/universal-auth/identities/${await freshIdentity(mw)}`,
      body: { accessTokenTTL: 100 },
    }),
  },
  "POST /api/v1/auth/universal-auth/identities/:identityId/client-secrets": {
    access: { kind: "org-admin" },
    build: async (mw) => ({
      url: `/api/v1/auth/universal-auth/identities/${await freshIdentity(mw)}/client-secrets`,
      body: {},
    }),
  },
  "GET /api/v1/auth/universal-auth/identities/:identityId/client-secrets": {
    access: { kind: "org-any" },
    build: async (mw) => ({
      url: `/api/v1/auth/universal-auth/identities/${await freshIdentity(mw)}/client-secrets`,
    }),
    override: { otherOrg: 404 },
  },
  "POST /api/v1/auth/universal-auth/identities/:identityId/client-secrets/:clientSecretId/revoke": {
    access: { kind: "org-admin" },
    build: async (mw) => {
      const id = await freshIdentity(mw);
      const list = await ok(
        call(mw.t.app, "GET", `/api/v1/auth/universal-auth/identities/${id}/client-secrets`, {
          token: mw.w.adminToken,
        }),
      );
      return {
        url: `/api/v1/auth/universal-auth/identities/${id}/client-secrets/${list.clientSecretData[0].id}/revoke`,
      };
    },
  },
  "POST /api/v1/organization/users": {
    access: { kind: "org-admin" },
    build: () => ({
      url: "/api/v1/organization/users",
      body: { email: `u${Math.random().toString(36).slice(2, 8)}@example.com`, password: "long-enough-pw" },
    }),
    override: { otherOrg: 200 }, // adds the user to the caller's own organisation
  },
  "GET /api/v1/organization/audit-logs": {
    access: { kind: "org-admin" },
    build: () => ({ url: "/api/v1/organization/audit-logs?limit=1" }),
    override: { otherOrg: 200 },
  },

  // ---- projects ----
  "POST /api/v1/projects": {
    access: { kind: "org-any" },
    build: () => ({ url: "/api/v1/projects", body: { projectName: "m" } }),
  },
  "POST /api/v2/workspace": {
    access: { kind: "org-any" },
    build: () => ({ url: "/api/v2/workspace", body: { projectName: "m" } }),
  },
  "GET /api/v1/projects": { access: { kind: "org-any" }, build: () => ({ url: "/api/v1/projects" }) },
  "GET /api/v1/workspace": { access: { kind: "org-any" }, build: () => ({ url: "/api/v1/workspace" }) },
  "GET /api/v1/projects/:projectId": {
    access: { kind: "project", level: "read", subject: "project" },
    build: (mw) => ({ url: `/api/v1/projects/${proj(mw)}` }),
  },
  "GET /api/v1/workspace/:workspaceId": {
    access: { kind: "project", level: "read", subject: "project" },
    build: (mw) => ({ url: `/api/v1/workspace/${proj(mw)}` }),
  },
  "GET /api/v1/projects/slug/:slug": {
    access: { kind: "project", level: "read", subject: "project" },
    build: (mw) => ({ url: `/api/v1/projects/slug/${mw.project.slug}` }),
  },
  "GET /api/v2/workspace/:slug": {
    access: { kind: "project", level: "read", subject: "project" },
    build: (mw) => ({ url: `/api/v2/workspace/${mw.project.slug}` }),
  },
  "PATCH /api/v1/projects/:projectId": {
    access: { kind: "project", level: "manage", subject: "settings" },
    build: (mw) => ({ url: `/api/v1/projects/${proj(mw)}`, body: { description: "d" } }),
  },
  "PATCH /api/v1/workspace/:workspaceId": {
    access: { kind: "project", level: "manage", subject: "settings" },
    build: (mw) => ({ url: `/api/v1/workspace/${proj(mw)}`, body: { description: "d" } }),
  },
  "DELETE /api/v1/projects/:projectId": {
    access: { kind: "project", level: "manage", subject: "settings" },
    build: async (mw) => ({ url: `/api/v1/projects/${await freshProject(mw)}` }),
  },
  "DELETE /api/v1/workspace/:workspaceId": {
    access: { kind: "project", level: "manage", subject: "settings" },
    build: async (mw) => ({ url: `/api/v1/workspace/${await freshProject(mw)}` }),
  },
};

// Identity memberships and roles exist under both prefixes.
for (const base of ["/api/v2/workspace/:projectId", "/api/v1/projects/:projectId"]) {
  const b = (mw: MatrixWorld) => base.replace(":projectId", proj(mw));
  Object.assign(ENTRIES, {
    [`POST ${base}/identity-memberships/:identityId`]: {
      access: { kind: "project", level: "manage", subject: "identity" },
      build: async (mw: MatrixWorld) => ({
        url: `${b(mw)}/identity-memberships/${await freshIdentity(mw)}`,
        body: { role: "viewer" },
      }),
    },
    [`GET ${base}/identity-memberships`]: {
      access: { kind: "project", level: "read", subject: "identity" },
      build: (mw: MatrixWorld) => ({ url: `${b(mw)}/identity-memberships` }),
    },
    [`GET ${base}/identity-memberships/:identityId`]: {
      access: { kind: "project", level: "read", subject: "identity" },
      build: (mw: MatrixWorld) => ({ url: `${b(mw)}/identity-memberships/${mw.ids.viewer}` }),
    },
    [`PATCH ${base}/identity-memberships/:identityId`]: {
      access: { kind: "project", level: "manage", subject: "identity" },
      build: (mw: MatrixWorld) => ({
        url: `${b(mw)}/identity-memberships/${mw.ids.noAccess}`,
        body: { role: "no-access" },
      }),
    },
    [`DELETE ${base}/identity-memberships/:identityId`]: {
      access: { kind: "project", level: "manage", subject: "identity" },
      build: async (mw: MatrixWorld) => {
        const id = await freshIdentity(mw);
        await ok(
          call(mw.t.app, "POST", `${b(mw)}/identity-memberships/${id}`, {
            token: mw.w.adminToken,
            body: { role: "viewer" },
          }),
        );
        return { url: `${b(mw)}/identity-memberships/${id}` };
      },
    },
    [`POST ${base}/memberships`]: {
      access: { kind: "project", level: "manage", subject: "member" },
      build: (mw: MatrixWorld) => ({
        url: `${b(mw)}/memberships`,
        body: { usernames: [mw.w.userEmail], roleSlugs: ["viewer"] },
      }),
    },
  } satisfies Record<string, Entry>);
}

const roleBody = () => ({
  slug: `r-${Math.random().toString(36).slice(2, 9)}`,
  permissions: [{ subject: "secrets", action: "read" }],
});
Object.assign(ENTRIES, {
  "POST /api/v1/projects/:projectId/roles": {
    access: { kind: "project", level: "manage", subject: "role" },
    build: (mw: MatrixWorld) => ({ url: `/api/v1/projects/${proj(mw)}/roles`, body: roleBody() }),
  },
  "GET /api/v1/projects/:projectId/roles": {
    access: { kind: "project", level: "read", subject: "role" },
    build: (mw: MatrixWorld) => ({ url: `/api/v1/projects/${proj(mw)}/roles` }),
  },
  "GET /api/v1/projects/:projectId/roles/slug/:roleSlug": {
    access: { kind: "project", level: "read", subject: "role" },
    build: (mw: MatrixWorld) => ({ url: `/api/v1/projects/${proj(mw)}/roles/slug/app-dev` }),
  },
  "PATCH /api/v1/projects/:projectId/roles/:roleId": {
    access: { kind: "project", level: "manage", subject: "role" },
    build: async (mw: MatrixWorld) => {
      const r = await ok(
        call(mw.t.app, "POST", `/api/v1/projects/${proj(mw)}/roles`, {
          token: mw.w.adminToken,
          body: roleBody(),
        }),
      );
      return { url: `/api/v1/projects/${proj(mw)}/roles/${r.role.id}`, body: { name: "renamed" } };
    },
  },
  "DELETE /api/v1/projects/:projectId/roles/:roleId": {
    access: { kind: "project", level: "manage", subject: "role" },
    build: async (mw: MatrixWorld) => {
      const r = await ok(
        call(mw.t.app, "POST", `/api/v1/projects/${proj(mw)}/roles`, {
          token: mw.w.adminToken,
          body: roleBody(),
        }),
      );
      return { url: `/api/v1/projects/${proj(mw)}/roles/${r.role.id}` };
    },
  },
} satisfies Record<string, Entry>);

// The data plane, syncs, events and licence live in their own files.
Object.assign(ENTRIES, DATA_ENTRIES, SYNC_ENTRIES);

export { freshProject };
