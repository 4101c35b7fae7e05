import { createSecretKey } from "node:crypto";
import { SignJWT } from "jose";
import { expect, it } from "vitest";
import type { TestApp } from "./build-test-app.js";
import { call, type World } from "./fixtures.js";
import { makeOtherOrg } from "./other-org.js";

/**
 * The shared permission cases every route's tests run: no token, malformed token, expired token, revoked
 * token, another organisation's identity, and an insufficient role. `ctx()` is called lazily, inside each
 * test, so it can be built in a beforeAll.
 */
export type RouteCase = {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  url: string;
  body?: unknown;
  /** A token whose role is too weak for this route (e.g. a viewer on a write). Omit for public routes. */
  weakToken?: string;
};

export type PermissionCtx = {
  t: TestApp;
  world: World;
  route: () => RouteCase | Promise<RouteCase>;
  revokedToken: string;
};

export async function expiredTokenFor(t: TestApp, identityId: string, tokenId: string) {
  const key = createSecretKey(Buffer.from(t.services.config.AUTH_SECRET, "utf8"));
  return new SignJWT({ authTokenType: "identityAccessToken", identityId, identityAccessTokenId: tokenId })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
    .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
    .sign(key);
}

export function permissionCases(ctx: () => PermissionCtx) {
  const send = async (token: string | undefined, headers?: Record<string, string>) => {
    const c = ctx();
    const r = await c.route();
    return call(c.t.app, r.method, r.url, { token, body: r.body, headers });
  };

  it("no token → 401 Token missing", async () => {
    const res = await send(undefined);
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ statusCode: 401, error: "UnauthorizedError", message: "Token missing" });
  });

  it("malformed token → 403 TokenError", async () => {
    const res = await send("not-a-jwt");
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ error: "TokenError" });
    expect(res.json.message).toMatch(/malformed/);
  });

  it("expired token → 403 TokenError", async () => {
    const c = ctx();
    const token = await expiredTokenFor(
      c.t,
      "00000000-0000-0000-0000-000000000000",
      "00000000-0000-0000-0000-000000000000",
    );
    const res = await send(token);
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({
      error: "TokenError",
      message: "Your token has expired. Please re-authenticate.",
    });
  });

  it("revoked token → 401", async () => {
    const res = await send(ctx().revokedToken);
    expect(res.status).toBe(401);
    expect(res.json.message).toBe("No identity access token found");
  });

  it("another organisation's identity → 404, never 403", async () => {
    const other = await makeOtherOrg(ctx().t);
    const res = await send(other.token);
    expect(res.status).toBe(404);
    expect(res.json.error).toBe("NotFound");
  });

  it("insufficient role → 403", async () => {
    const r = await ctx().route();
    if (!r.weakToken) throw new Error("route case needs a weakToken");
    const res = await send(r.weakToken);
    expect(res.status).toBe(403);
    expect(res.json.error).toMatch(/PermissionDenied|You are not member of this project/);
  });
}
