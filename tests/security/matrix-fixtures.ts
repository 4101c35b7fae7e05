import type { SyncTarget } from "../e2e/sync-harness.js";
import type { TestApp } from "../helpers/build-test-app.js";
import { call, type Json, makeIdentity, makeProject, ok, type World } from "../helpers/fixtures.js";
import { makeOtherOrg } from "../helpers/other-org.js";
import { expiredTokenFor } from "../helpers/permission-cases.js";

/**
 * The callers of the authorization matrix. Every identity below is an organisation *member*; project
 * access comes only from its project role. `orgAdmin` is the bootstrap identity (organisation admin).
 */
export const CALLERS = [
  "none",
  "malformed",
  "expired",
  "revoked",
  "deletedIdentity",
  "otherOrg",
  "noAccess",
  "viewer",
  "member",
  "customApp",
  "admin",
  "orgAdmin",
] as const;
export type Caller = (typeof CALLERS)[number];

/** The custom role: full secret access, but only in `dev` under `/app/**`. */
export const CUSTOM_APP_RULES = [
  {
    subject: "secrets",
    action: ["read", "describeSecret", "readValue", "create", "edit", "delete"],
    conditions: { environment: { $eq: "dev" }, secretPath: { $glob: "/app/**" } },
  },
  {
    subject: "secret-folders",
    action: ["read", "create", "edit", "delete"],
    conditions: { environment: { $eq: "dev" }, secretPath: { $glob: "/app/**" } },
  },
  {
    subject: "secret-events",
    action: [
      "subscribe-on-created",
      "subscribe-on-updated",
      "subscribe-on-deleted",
      "subscribe-on-import-mutations",
    ],
    conditions: { environment: { $eq: "dev" }, secretPath: { $glob: "/app/**" } },
  },
];

export type MatrixWorld = {
  t: TestApp;
  w: World;
  project: Json;
  tokens: Record<Caller, string | undefined>;
  ids: Record<"viewer" | "member" | "admin" | "customApp" | "noAccess", string>;
  /** The destination fakes that connections and syncs point at. */
  targets?: Record<string, SyncTarget>;
};

export async function buildMatrixWorld(
  t: TestApp,
  w: World,
  targets?: Record<string, SyncTarget>,
): Promise<MatrixWorld> {
  const project = await makeProject(t.app, w.adminToken, "Matrix");
  await ok(
    call(t.app, "POST", `/api/v1/projects/${project.id}/roles`, {
      token: w.adminToken,
      body: { slug: "app-dev", name: "App dev", permissions: CUSTOM_APP_RULES },
    }),
  );
  const roleOf = {
    noAccess: "no-access",
    viewer: "viewer",
    member: "member",
    customApp: "app-dev",
    admin: "admin",
  } as const;
  const tokens = {} as Record<Caller, string | undefined>;
  const ids = {} as MatrixWorld["ids"];
  for (const [caller, role] of Object.entries(roleOf) as [keyof typeof roleOf, string][]) {
    const i = await makeIdentity(t.app, w, `matrix-${caller}`, "member");
    await ok(
      call(t.app, "POST", `/api/v2/workspace/${project.id}/identity-memberships/${i.id}`, {
        token: w.adminToken,
        body: { role },
      }),
    );
    tokens[caller] = i.token;
    ids[caller] = i.id;
  }
  const revoked = await makeIdentity(t.app, w, "matrix-revoked");
  await ok(call(t.app, "POST", "/api/v1/auth/token/revoke", { body: { accessToken: revoked.token } }));
  const deleted = await makeIdentity(t.app, w, "matrix-deleted");
  await ok(call(t.app, "DELETE", `/api/v1/identities/${deleted.id}`, { token: w.adminToken }));
  tokens.none = undefined;
  tokens.malformed = "definitely.not.ajwt";
  tokens.expired = await expiredTokenFor(t, revoked.id, "00000000-0000-0000-0000-000000000000");
  tokens.revoked = revoked.token;
  tokens.deletedIdentity = deleted.token;
  tokens.otherOrg = (await makeOtherOrg(t)).token;
  tokens.orgAdmin = w.adminToken;
  return { t, w, project, tokens, ids, targets };
}
