import type { FastifyInstance } from "fastify";
import { call, type Json, ok, type World } from "../helpers/fixtures.js";

/** Builders for the secret tests, all over the public HTTP API. */

/** A user (email + password) in the org, logged in, added to the project with the given role slugs. */
export async function makeUser(
  app: FastifyInstance,
  w: World,
  email: string,
  projectId: string,
  roles = ["member"],
) {
  const password = "user-password-123";
  const user = (
    await ok(
      call(app, "POST", "/api/v1/organization/users", { token: w.adminToken, body: { email, password } }),
    )
  ).user as Json;
  await ok(
    call(app, "POST", `/api/v2/workspace/${projectId}/memberships`, {
      token: w.adminToken,
      body: { usernames: [email], roleSlugs: roles },
    }),
  );
  const login = await ok(call(app, "POST", "/api/v1/auth/email/login", { body: { email, password } }));
  return { id: user.id as string, token: login.accessToken as string };
}

export async function makeFolder(
  app: FastifyInstance,
  token: string,
  projectId: string,
  environment: string,
  path: string,
  name: string,
) {
  return (
    await ok(
      call(app, "POST", "/api/v1/folders", {
        token,
        body: { workspaceId: projectId, environment, path, name },
      }),
    )
  ).folder as Json;
}

export async function makeRole(
  app: FastifyInstance,
  token: string,
  projectId: string,
  slug: string,
  permissions: Json[],
) {
  await ok(call(app, "POST", `/api/v1/projects/${projectId}/roles`, { token, body: { slug, permissions } }));
}

/** POST /api/v3/secrets/raw/{key} with sensible defaults. */
export async function createV3(
  app: FastifyInstance,
  token: string,
  projectId: string,
  key: string,
  value: string,
  extra: Json = {},
) {
  return (
    await ok(
      call(app, "POST", `/api/v3/secrets/raw/${encodeURIComponent(key)}`, {
        token,
        body: { workspaceId: projectId, environment: "dev", secretValue: value, ...extra },
      }),
    )
  ).secret as Json;
}

export async function getV3(app: FastifyInstance, token: string, projectId: string, key: string, query = "") {
  return call(
    app,
    "GET",
    `/api/v3/secrets/raw/${encodeURIComponent(key)}?workspaceId=${projectId}&environment=dev&secretName=${key}${query}`,
    { token },
  );
}

/** The seed's secret table (seed-api.md, "Secret"): every field a delete response must carry. */
export const SEED_SECRET_FIELDS = [
  "id",
  "_id",
  "workspace",
  "environment",
  "version",
  "type",
  "secretKey",
  "secretValue",
  "secretComment",
  "createdAt",
  "updatedAt",
  "secretValueHidden",
  "secretReminderNote",
  "secretReminderRepeatDays",
  "skipMultilineEncoding",
  "actor",
  "isRotatedSecret",
  "rotationId",
];
