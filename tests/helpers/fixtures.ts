import type { FastifyInstance } from "fastify";

/**
 * Builders over the public HTTP API (no shortcuts into the database), so fixtures exercise the same
 * paths as real clients.
 */
// biome-ignore lint/suspicious/noExplicitAny: response JSON is read loosely in tests and asserted on.
export type Json = { [k: string]: any };

export async function call(
  app: FastifyInstance,
  method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT",
  url: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const res = await app.inject({
    method,
    url,
    headers: { ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...opts.headers },
    ...(opts.body !== undefined ? { payload: opts.body as object } : {}),
  });
  let json: Json = {};
  try {
    json = res.body ? (JSON.parse(res.body) as Json) : {};
  } catch {
    json = {};
  }
  return { status: res.statusCode, json, headers: res.headers, body: res.body };
}

export async function ok(p: ReturnType<typeof call>, status = 200): Promise<Json> {
  const r = await p;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.body}`);
  return r.json;
}

export type World = {
  adminToken: string;
  orgId: string;
  userEmail: string;
  userPassword: string;
};

export async function bootstrap(app: FastifyInstance): Promise<World> {
  const userEmail = "admin@example.com";
  const userPassword = "correct horse battery staple";
  const j = await ok(
    call(app, "POST", "/api/v1/admin/bootstrap", {
      body: { email: userEmail, password: userPassword, organization: "Acme" },
    }),
  );
  return { adminToken: j.identity.credentials.token, orgId: j.organization.id, userEmail, userPassword };
}

/** Creates an identity with universal auth and a client secret, logs it in, returns its token. */
export async function makeIdentity(app: FastifyInstance, w: World, name: string, orgRole = "member") {
  const id = (
    await ok(
      call(app, "POST", "/api/v1/identities", {
        token: w.adminToken,
        body: { name, organizationId: w.orgId, role: orgRole },
      }),
    )
  ).identity.id as string;
  const ua = (
    await ok(
      call(app, "POST", `/api/v1/auth/universal-auth/identities/${id}`, { token: w.adminToken, body: {} }),
    )
  ).identityUniversalAuth;
  const cs = await ok(
    call(app, "POST", `/api/v1/auth/universal-auth/identities/${id}/client-secrets`, {
      token: w.adminToken,
      body: {},
    }),
  );
  const login = await ok(
    call(app, "POST", "/api/v1/auth/universal-auth/login", {
      body: { clientId: ua.clientId, clientSecret: cs.clientSecret },
    }),
  );
  return {
    id,
    clientId: ua.clientId as string,
    clientSecret: cs.clientSecret as string,
    token: login.accessToken as string,
  };
}

export async function makeProject(app: FastifyInstance, token: string, name = "Demo") {
  return (await ok(call(app, "POST", "/api/v2/workspace", { token, body: { projectName: name } })))
    .project as Json;
}

/** Adds an identity to a project with the given role slug(s); returns the identity. */
export async function addMember(
  app: FastifyInstance,
  w: World,
  projectId: string,
  name: string,
  roles: string | string[],
) {
  const ident = await makeIdentity(app, w, name);
  const body = Array.isArray(roles) ? { roles: roles.map((role) => ({ role })) } : { role: roles };
  await ok(
    call(app, "POST", `/api/v2/workspace/${projectId}/identity-memberships/${ident.id}`, {
      token: w.adminToken,
      body,
    }),
  );
  return ident;
}
