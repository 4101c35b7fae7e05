import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loggerOptions } from "../../src/lib/logger.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { call, makeIdentity, ok } from "../helpers/fixtures.js";

/**
 * Captures every log line at trace level (request logging on) while tokens, client secrets and
 * passwords flow through the API, then checks that none of them was written.
 */
describe("log redaction", () => {
  const lines: string[] = [];
  let t: TestApp;
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = pino(loggerOptions("trace"), sink);
    t = await buildTestApp({ logger, env: { LOG_LEVEL: "trace" } });
  });
  afterAll(async () => t.close());

  it("never logs a token, client secret or password", async () => {
    const password = "Sup3r-Secret-Passw0rd!";
    const boot = await ok(
      call(t.app, "POST", "/api/v1/admin/bootstrap", {
        body: { email: "a@b.co", password, organization: "O" },
      }),
    );
    const w = {
      adminToken: boot.identity.credentials.token as string,
      orgId: boot.organization.id as string,
      userEmail: "a@b.co",
      userPassword: password,
    };
    const i = await makeIdentity(t.app, w, "logged");
    await call(t.app, "GET", "/api/v1/projects", { token: i.token });
    // Failing requests log too (and 5xx would log the error): include a bad login and a bad token.
    await call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
      body: { clientId: i.clientId, clientSecret: `${i.clientSecret}x` },
    });
    await call(t.app, "GET", "/api/v1/projects", { token: `${i.token}tampered` });
    const renewed = await ok(
      call(t.app, "POST", "/api/v1/auth/token/renew", { body: { accessToken: i.token } }),
    );
    await t.services.audit.flush();

    const all = lines.join("\n");
    expect(lines.length).toBeGreaterThan(10); // request logging really was on
    // Request lines come from each request's own (lazily made) logger, bound to its id.
    const incoming = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "incoming request");
    expect(incoming.length).toBeGreaterThan(3);
    expect(new Set(incoming.map((l) => l.reqId)).size).toBe(incoming.length);
    for (const secret of [password, w.adminToken, i.token, i.clientSecret, renewed.accessToken]) {
      expect(all).not.toContain(secret);
    }
    // Nor any JWT at all.
    expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./);
  });

  it("redacts secret-looking fields when an object is logged whole", () => {
    lines.length = 0;
    t.services.log.info(
      {
        body: { secretValue: "v1" },
        creds: { clientSecret: "c1", password: "p1", accessToken: "a1" },
        headers: { authorization: "Bearer z1" },
      },
      "object",
    );
    const all = lines.join("\n");
    for (const s of ["v1", "c1", "p1", "a1", "z1"]) expect(all).not.toContain(`"${s}"`);
    expect(all).toContain("[redacted]");
  });
});
