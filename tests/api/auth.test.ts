import { createSecretKey, generateKeyPairSync } from "node:crypto";
import { SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, makeIdentity, ok, type World } from "../helpers/fixtures.js";

describe("authentication and universal auth", () => {
  let t: TestApp;
  let w: World;
  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
  });
  afterAll(async () => t.close());

  const me = (token: string) => call(t.app, "GET", "/api/v1/projects", { token });

  describe("happy", () => {
    it("logs in, renews and revokes", async () => {
      const i = await makeIdentity(t.app, w, "renewer");
      expect((await me(i.token)).status).toBe(200);
      const renewed = await ok(
        call(t.app, "POST", "/api/v1/auth/token/renew", { body: { accessToken: i.token } }),
      );
      expect(renewed.tokenType).toBe("Bearer");
      // Capped at what remains of the max TTL, counted from the token's creation.
      expect(renewed.expiresIn).toBeGreaterThan(2592000 - 60);
      expect(renewed.expiresIn).toBeLessThanOrEqual(2592000);
      const revoked = await ok(
        call(t.app, "POST", "/api/v1/auth/token/revoke", { body: { accessToken: renewed.accessToken } }),
      );
      expect(revoked.message).toBe("Successfully revoked access token");
      const after = await me(i.token);
      expect(after.status).toBe(401);
      expect(after.json.message).toBe("No identity access token found");
    });

    it("users log in with email and password", async () => {
      const u = await ok(
        call(t.app, "POST", "/api/v1/auth/email/login", {
          body: { email: w.userEmail, password: w.userPassword },
        }),
      );
      expect((await me(u.accessToken)).status).toBe(200);
      const bad = await call(t.app, "POST", "/api/v1/auth/email/login", {
        body: { email: w.userEmail, password: "nope" },
      });
      expect(bad.status).toBe(401);
    });
  });

  describe("errors", () => {
    it("rejects wrong client secrets and locks out after three failures", async () => {
      const i = await makeIdentity(t.app, w, "locked");
      for (let n = 0; n < 3; n++) {
        const r = await call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
          body: { clientId: i.clientId, clientSecret: "wrong" },
        });
        expect(r.status).toBe(401);
        expect(r.json.message).toBe("Invalid credentials");
      }
      const locked = await call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
        body: { clientId: i.clientId, clientSecret: i.clientSecret },
      });
      expect(locked.status).toBe(401);
      expect(locked.json.message).toBe(
        "This identity auth method is temporarily locked, please try again later",
      );
    });

    it("unknown client ids are invalid credentials, not 500", async () => {
      for (const clientId of ["not-a-uuid", "00000000-0000-0000-0000-000000000000"]) {
        const r = await call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
          body: { clientId, clientSecret: "x" },
        });
        expect(r.status).toBe(401);
      }
    });

    it("enforces the client secret usage limit", async () => {
      const i = await makeIdentity(t.app, w, "limited-secret");
      const cs = await ok(
        call(t.app, "POST", `/api/v1/auth/universal-auth/identities/${i.id}/client-secrets`, {
          token: w.adminToken,
          body: { numUsesLimit: 1 },
        }),
      );
      await ok(
        call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
          body: { clientId: i.clientId, clientSecret: cs.clientSecret },
        }),
      );
      const second = await call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
        body: { clientId: i.clientId, clientSecret: cs.clientSecret },
      });
      expect(second.status).toBe(401);
      expect(second.json.message).toBe("Access denied due to client secret usage limit reached");
    });

    it("enforces the access token usage limit", async () => {
      const i = await makeIdentity(t.app, w, "limited-token");
      await ok(
        call(t.app, "PATCH", `/api/v1/auth/universal-auth/identities/${i.id}`, {
          token: w.adminToken,
          body: { accessTokenNumUsesLimit: 2 },
        }),
      );
      const login = await ok(
        call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
          body: { clientId: i.clientId, clientSecret: i.clientSecret },
        }),
      );
      expect((await me(login.accessToken)).status).toBe(200);
      expect((await me(login.accessToken)).status).toBe(200);
      const third = await me(login.accessToken);
      expect(third.status).toBe(401);
    });

    it("refuses tokens from untrusted IPs with 403", async () => {
      const i = await makeIdentity(t.app, w, "ip-bound");
      await ok(
        call(t.app, "PATCH", `/api/v1/auth/universal-auth/identities/${i.id}`, {
          token: w.adminToken,
          body: { accessTokenTrustedIps: [{ ipAddress: "10.20.30.0/24" }] },
        }),
      );
      const r = await me(i.token);
      expect(r.status).toBe(403);
      expect(r.json.message).toBe("You are not allowed to access this resource from the current IP address");
      const bad = await call(t.app, "PATCH", `/api/v1/auth/universal-auth/identities/${i.id}`, {
        token: w.adminToken,
        body: { accessTokenTrustedIps: [{ ipAddress: "999.1.1.1" }] },
      });
      expect(bad.status).toBe(400);
    });

    it("refuses tokens of a deleted identity", async () => {
      const i = await makeIdentity(t.app, w, "doomed");
      await ok(call(t.app, "DELETE", `/api/v1/identities/${i.id}`, { token: w.adminToken }));
      const r = await me(i.token);
      expect(r.status).toBe(401);
    });

    it("refuses algorithm confusion: none, RS256 and a wrong HMAC key", async () => {
      const claims = { authTokenType: "identityAccessToken", identityId: "x", identityAccessTokenId: "y" };
      const none = new UnsecuredJWT(claims).setIssuedAt().encode();
      const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
      const rs = await new SignJWT(claims).setProtectedHeader({ alg: "RS256" }).sign(privateKey);
      const wrongKey = await new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256" })
        .sign(createSecretKey(Buffer.from("a-completely-different-secret-of-32+chars")));
      for (const token of [none, rs, wrongKey]) {
        const r = await me(token);
        expect(r.status).toBe(403);
        expect(r.json.error).toBe("TokenError");
      }
    });

    it("renewing past the max TTL fails and deletes the token", async () => {
      const i = await makeIdentity(t.app, w, "short-max");
      await ok(
        call(t.app, "PATCH", `/api/v1/auth/universal-auth/identities/${i.id}`, {
          token: w.adminToken,
          body: { accessTokenTTL: 60, accessTokenMaxTTL: 60 },
        }),
      );
      const login = await ok(
        call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
          body: { clientId: i.clientId, clientSecret: i.clientSecret },
        }),
      );
      expect(login).toMatchObject({ expiresIn: 60, accessTokenMaxTTL: 60 });
      // Age the token past its max TTL instead of sleeping.
      await t.services.dbh.query(
        "UPDATE identity_access_tokens SET created_at = now() - interval '2 minutes', last_renewed_at = now() WHERE identity_id = $1",
        [i.id],
      );
      t.services.auth.invalidate({ kind: "all" });
      const r = await call(t.app, "POST", "/api/v1/auth/token/renew", {
        body: { accessToken: login.accessToken },
      });
      expect(r.status).toBe(401);
      expect(r.json.message).toBe("Failed to renew MI access token past its Max TTL expiration");
      expect((await me(login.accessToken)).status).toBe(401);
    });

    it("only org admins manage identities", async () => {
      const i = await makeIdentity(t.app, w, "plain-member", "member");
      const r = await call(t.app, "POST", "/api/v1/identities", {
        token: i.token,
        body: { name: "x", organizationId: w.orgId },
      });
      expect(r.status).toBe(403);
      expect(r.json.error).toBe("PermissionDenied");
    });
  });
});
