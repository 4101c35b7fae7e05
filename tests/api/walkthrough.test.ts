import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { call, ok } from "../helpers/fixtures.js";

/** The README's curl walk-through, step by step, through the HTTP API. */
describe("walk-through: bootstrap → identities → universal auth → project → viewer denied", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => t.close());

  it("works end to end", async () => {
    const app = t.app;
    const boot = await ok(
      call(app, "POST", "/api/v1/admin/bootstrap", {
        body: { email: "Admin@Example.com", password: "pw-123456", organization: "Acme" },
      }),
    );
    expect(boot.message).toBe("Successfully bootstrapped instance");
    expect(boot.user).toMatchObject({ email: "admin@example.com", superAdmin: true });
    expect(boot.identity.name).toBe("Instance Admin Identity");
    const admin = boot.identity.credentials.token as string;
    const orgId = boot.organization.id as string;

    const again = await call(app, "POST", "/api/v1/admin/bootstrap", {
      body: { email: "b@example.com", password: "x", organization: "B" },
    });
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({
      statusCode: 400,
      error: "BadRequest",
      message: "Instance has already been set up",
    });
    expect(again.json.reqId).toMatch(/^req-[A-Za-z0-9]{14}$/);

    const ci = await ok(
      call(app, "POST", "/api/v1/identities", {
        token: admin,
        body: { name: "ci", organizationId: orgId, role: "member" },
      }),
    );
    const ciId = ci.identity.id as string;
    const ua = await ok(
      call(app, "POST", `/api/v1/auth/universal-auth/identities/${ciId}`, { token: admin, body: {} }),
    );
    expect(ua.identityUniversalAuth).toMatchObject({
      accessTokenTTL: 2592000,
      accessTokenMaxTTL: 2592000,
      accessTokenNumUsesLimit: 0,
      clientSecretTrustedIps: [
        { ipAddress: "0.0.0.0", prefix: 0 },
        { ipAddress: "::", prefix: 0 },
      ],
    });
    const cs = await ok(
      call(app, "POST", `/api/v1/auth/universal-auth/identities/${ciId}/client-secrets`, {
        token: admin,
        body: { description: "ci" },
      }),
    );
    expect(cs.clientSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(cs.clientSecretData).not.toHaveProperty("clientSecretHash");

    // Trailing slash (the Go CLI) and a stale Authorization header (the Node SDK) are both fine.
    const login = await ok(
      call(app, "POST", "/api/v1/auth/universal-auth/login/", {
        token: "stale.garbage.token",
        body: { clientId: ua.identityUniversalAuth.clientId, clientSecret: cs.clientSecret },
      }),
    );
    expect(login).toMatchObject({ expiresIn: 2592000, accessTokenMaxTTL: 2592000, tokenType: "Bearer" });
    const ciToken = login.accessToken as string;

    const project = (
      await ok(call(app, "POST", "/api/v2/workspace", { token: ciToken, body: { projectName: "Demo" } }))
    ).project;
    expect(project.environments.map((e: { slug: string }) => e.slug)).toEqual(["dev", "staging", "prod"]);
    expect(project._id).toBe(project.id);

    const viewer = await ok(
      call(app, "POST", "/api/v1/identities", {
        token: admin,
        body: { name: "viewer", organizationId: orgId, role: "member" },
      }),
    );
    const vId = viewer.identity.id as string;
    const vUa = await ok(
      call(app, "POST", `/api/v1/auth/universal-auth/identities/${vId}`, { token: admin }),
    );
    const vCs = await ok(
      call(app, "POST", `/api/v1/auth/universal-auth/identities/${vId}/client-secrets`, { token: admin }),
    );
    const vLogin = await ok(
      call(app, "POST", "/api/v1/auth/universal-auth/login", {
        body: { clientId: vUa.identityUniversalAuth.clientId, clientSecret: vCs.clientSecret },
      }),
    );
    const added = await ok(
      call(app, "POST", `/api/v2/workspace/${project.id}/identity-memberships/${vId}`, {
        token: ciToken,
        body: { role: "viewer" },
      }),
    );
    expect(added.identityMembership.roles[0].role).toBe("viewer");

    // The viewer can read the project but cannot add members.
    await ok(call(app, "GET", `/api/v1/projects/${project.id}`, { token: vLogin.accessToken }));
    const denied = await call(app, "POST", `/api/v2/workspace/${project.id}/identity-memberships/${ciId}`, {
      token: vLogin.accessToken,
      body: { role: "admin" },
    });
    expect(denied.status).toBe(403);
    expect(denied.json).toMatchObject({
      error: "PermissionDenied",
      message: "You are not allowed to create on identity",
    });
    expect(Array.isArray(denied.json.details)).toBe(true);
  });
});
