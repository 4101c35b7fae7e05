import { randomBytes, timingSafeEqual } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loggerOptions } from "../../src/lib/logger.js";
import { putSecrets, type SyncTarget, startTargets, targetEnv, waitForSync } from "../e2e/sync-harness.js";
import type { FakeRequest, FakeResponse } from "../fakes/fake-destination.js";
import { FakeVault } from "../fakes/hashicorp-vault.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import {
  bootstrap,
  call,
  type Json,
  makeIdentity,
  makeProject,
  ok,
  type World,
} from "../helpers/fixtures.js";
import { ENTRIES } from "./matrix-entries.js";
import { buildMatrixWorld } from "./matrix-fixtures.js";

// Pass-through spy: proves which code paths really compare in constant time.
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

/**
 * Secrets never leak: not into logs (pino at trace, request logging on), not into error responses, not
 * into a sync's last*Message even when the destination echoes the request (values and token) back in its
 * error body. Also: constant-time comparisons, response schemas that strip every encrypted or hash
 * column across the whole route table, and the SSRF guard end to end.
 */

/** A Vault that answers injected failures by echoing what it was sent: the body and the token. */
class EchoVault extends FakeVault {
  readonly echoed: string[] = [];
  // FakeVault declares failure(status); the base class passes the request too.
  protected override failure(status: number, req?: FakeRequest): FakeResponse {
    const echo = `rejected ${req?.method} ${req?.path} body=${req?.rawBody} token=${String(req?.headers["x-vault-token"])}`;
    this.echoed.push(echo);
    return { status, body: { errors: [echo] } };
  }
}

const secret = (tag: string) => `${tag}-${randomBytes(12).toString("hex")}`;

describe("secrets stay out of logs, errors and sync messages; constant-time checks", () => {
  const lines: string[] = [];
  const errorBodies: string[] = [];
  const sensitive: string[] = [];
  let t: TestApp;
  let w: World;
  let targets: Record<SyncTarget["slug"], SyncTarget>;
  let echo: EchoVault;

  beforeAll(async () => {
    targets = await startTargets();
    echo = await new EchoVault({ token: secret("hvs.echo") }).start();
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logger = pino(loggerOptions("trace"), sink);
    t = await buildTestApp({
      logger,
      env: { ...targetEnv(targets), LOG_LEVEL: "trace", SYNC_TIMEOUT_MS: "2000" },
    });
    w = await bootstrap(t.app);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await echo?.close();
    for (const x of Object.values(targets ?? {})) await x.fake.close();
  });

  /** `call`, remembering every error body. */
  const req = async (...args: Parameters<typeof call>) => {
    const r = await call(...args);
    if (r.status >= 400) errorBodies.push(r.body);
    return r;
  };

  it("never writes a value, token or credential anywhere a client or operator can read it", async () => {
    const token = w.adminToken;
    const ident = await makeIdentity(t.app, w, "leaky");
    sensitive.push(token, ident.token, ident.clientSecret, echo.token);
    for (const x of Object.values(targets))
      for (const v of Object.values(x.connection.credentials))
        if (typeof v === "string" && !v.startsWith("http")) sensitive.push(v);
    const project = await makeProject(t.app, token, "Leaks");
    const v3 = { workspaceId: project.id, environment: "dev", secretPath: "/" };
    const v4 = { projectId: project.id, environment: "dev", secretPath: "/" };
    const q = `workspaceId=${project.id}&environment=dev&secretPath=/`;

    // Secret CRUD on v3 and v4, single and batch, with reads of every kind and some failing requests.
    const [a, a2, b, c, c2, comment] = [
      secret("a"),
      secret("a2"),
      secret("b"),
      secret("c"),
      secret("c2"),
      secret("comment"),
    ];
    sensitive.push(a, a2, b, c, c2, comment);
    await ok(
      req(t.app, "POST", "/api/v3/secrets/raw/LEAK_A", {
        token,
        body: { ...v3, secretValue: a, secretComment: comment },
      }),
    );
    await req(t.app, "POST", "/api/v3/secrets/raw/LEAK_A", { token, body: { ...v3, secretValue: a } }); // exists
    await req(t.app, "POST", "/api/v3/secrets/raw/LEAK_X", {
      token,
      body: { ...v3, secretPath: "/nope", secretValue: a },
    });
    await req(t.app, "POST", "/api/v3/secrets/raw/LEAK_Y", {
      token,
      body: { ...v3, secretValue: { nested: a } },
    });
    await ok(req(t.app, "GET", `/api/v3/secrets/raw/LEAK_A?${q}`, { token }));
    const listed = await ok(req(t.app, "GET", `/api/v3/secrets/raw?${q}`, { token }));
    await ok(req(t.app, "GET", `/api/v3/secrets/raw/id/${listed.secrets[0].id}`, { token }));
    await ok(req(t.app, "PATCH", "/api/v3/secrets/raw/LEAK_A", { token, body: { ...v3, secretValue: a2 } }));
    await req(t.app, "PATCH", "/api/v3/secrets/raw/MISSING", { token, body: { ...v3, secretValue: a2 } });
    await ok(
      req(t.app, "POST", "/api/v4/secrets/batch", {
        token,
        body: {
          ...v4,
          secrets: [
            { secretKey: "LEAK_B", secretValue: b },
            { secretKey: "LEAK_C", secretValue: c },
          ],
        },
      }),
    );
    await req(t.app, "POST", "/api/v4/secrets/batch", {
      token,
      body: { ...v4, secrets: [{ secretKey: "LEAK_B", secretValue: b }] },
    });
    await ok(
      req(t.app, "PATCH", "/api/v4/secrets/batch", {
        token,
        body: { ...v4, secrets: [{ secretKey: "LEAK_C", secretValue: c2 }] },
      }),
    );
    await ok(
      req(t.app, "GET", `/api/v4/secrets?projectId=${project.id}&environment=dev&secretPath=/`, { token }),
    );
    await ok(req(t.app, "DELETE", "/api/v4/secrets/LEAK_B", { token, body: v4 }));
    // Universal auth: a wrong client secret and a tampered token fail without echoing either.
    await req(t.app, "POST", "/api/v1/auth/universal-auth/login", {
      body: { clientId: ident.clientId, clientSecret: `${ident.clientSecret}0` },
    });
    await req(t.app, "GET", "/api/v1/projects", { token: `${ident.token}x` });

    // A connection whose credentials the destination rejects by echoing them.
    const wrongToken = secret("hvs.wrong");
    sensitive.push(wrongToken);
    echo.failNext(403, { times: 1 });
    await req(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
      token,
      body: {
        name: "echo-bad",
        method: "access-token",
        credentials: { instanceUrl: echo.url, accessToken: wrongToken },
      },
    });
    const conn = (
      await ok(
        req(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
          token,
          body: {
            name: "echo",
            method: "access-token",
            credentials: { instanceUrl: echo.url, accessToken: echo.token },
          },
        }),
      )
    ).appConnection;

    // Sync runs: a retryable echoed failure then success, then a final echoed failure on each action.
    const d = secret("d");
    sensitive.push(d);
    await putSecrets(t.app, token, v4, { LEAK_D: d });
    const writes = { match: (r: FakeRequest) => r.method === "POST" || r.method === "PUT" };
    echo.failNext(503, { times: 1, ...writes });
    const sync = (
      await ok(
        req(t.app, "POST", "/api/v1/secret-syncs/hashicorp-vault", {
          token,
          body: {
            name: "echo",
            projectId: project.id,
            connectionId: conn.id,
            environment: "dev",
            secretPath: "/",
            syncOptions: { initialSyncBehavior: "overwrite-destination" },
            destinationConfig: { mount: "secret", path: "ferry/leak" },
          },
        }),
      )
    ).secretSync;
    const base = "/api/v1/secret-syncs/hashicorp-vault";
    const settled = (field: string) => (s: Json) => s[field] === "succeeded" || s[field] === "failed";
    expect(
      (await waitForSync(t.app, token, "hashicorp-vault", sync.id, settled("syncStatus"))).syncStatus,
    ).toBe("succeeded");
    echo.failNext(400, { times: 1000, ...writes });
    // A changed value gives the run something to write (the auto-sync and the manual trigger coalesce).
    const d2 = secret("d2");
    sensitive.push(d2);
    await ok(req(t.app, "PATCH", "/api/v4/secrets/LEAK_D", { token, body: { ...v4, secretValue: d2 } }));
    await ok(req(t.app, "POST", `${base}/${sync.id}/sync-secrets`, { token }));
    await waitForSync(t.app, token, "hashicorp-vault", sync.id, (s) => s.syncStatus === "failed");
    echo.failNext(400, { times: 1000 });
    await ok(
      req(t.app, "POST", `${base}/${sync.id}/import-secrets?importBehavior=prioritize-source`, { token }),
    );
    await waitForSync(t.app, token, "hashicorp-vault", sync.id, settled("importStatus"));
    await ok(req(t.app, "POST", `${base}/${sync.id}/remove-secrets`, { token }));
    const done = await waitForSync(t.app, token, "hashicorp-vault", sync.id, settled("removeStatus"));
    echo.reset();

    // The echo really happened: the destination's error bodies carried the secrets back.
    const echoed = echo.echoed.join("\n");
    for (const s of [d, d2, echo.token, wrongToken]) expect(echoed).toContain(s);
    expect(done).toMatchObject({ syncStatus: "failed", importStatus: "failed", removeStatus: "failed" });
    const messages = [done.lastSyncMessage, done.lastImportMessage, done.lastRemoveMessage] as string[];
    for (const m of messages) expect(m, "a readable failure message").toMatch(/\w{4,}/);
    await t.services.audit.flush();

    const logs = lines.join("\n");
    expect(lines.length).toBeGreaterThan(50); // request logging really was on
    expect(errorBodies.length).toBeGreaterThan(6);
    for (const s of sensitive) {
      expect(logs, "logs").not.toContain(s);
      for (const body of errorBodies) expect(body, "error response").not.toContain(s);
      for (const m of messages) expect(m, "last*Message").not.toContain(s);
    }
  }, 120_000);
  it("verifies client secrets and passwords with timingSafeEqual, also when they are wrong", async () => {
    const i = await makeIdentity(t.app, w, "ct");
    const spy = vi.mocked(timingSafeEqual);
    // Candidates are found by the secret's 4-character prefix (public, as Infisical's
    // clientSecretPrefix), then every candidate is compared in constant time: a wrong secret with the
    // right prefix, differing only in its last character, takes the same path as the right one.
    for (const [clientSecret, status] of [
      [i.clientSecret, 200],
      [`${i.clientSecret.slice(0, -1)}${i.clientSecret.endsWith("0") ? "1" : "0"}`, 401],
    ] as const) {
      spy.mockClear();
      const r = await call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
        body: { clientId: i.clientId, clientSecret },
      });
      expect(r.status).toBe(status);
      expect(spy).toHaveBeenCalled();
    }
    spy.mockClear();
    const bad = await call(t.app, "POST", "/api/v1/auth/email/login", {
      body: { email: w.userEmail, password: `${w.userPassword}!` },
    });
    expect(bad.status).toBe(401);
    expect(spy).toHaveBeenCalled();
  });
});

describe("constant-time comparison in the source", () => {
  it("has no ===/!== on hashes, digests, signatures or plaintext secrets anywhere in src/", () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const f of readdirSync(dir)) {
        const p = join(dir, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith(".ts") && !p.endsWith(".test.ts")) files.push(p);
      }
    };
    walk("src");
    const name = String.raw`\w*(?:[hH]ash|[dD]igest|[sS]ignature|[hH]mac|clientSecret|[pP]assword|[aA]ccessToken)(?:\.\w+|\[\w+\])*`;
    const compared = new RegExp(
      String.raw`\b${name}\s*[!=]==?\s*(?!undefined|null)[\w"'\x60]|[!=]==?\s*${name}\b`,
    );
    const hits = files.flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .map((line, n) => ({ at: `${f}:${n + 1}`, line: line.trim() }))
        .filter(({ line }) => !line.startsWith("//") && !line.startsWith("*") && compared.test(line)),
    );
    expect(hits).toEqual([]);
    expect(files.length).toBeGreaterThan(50);
    // The one comparison helper really is constant time.
    expect(readFileSync("src/lib/crypto/hash.ts", "utf8")).toMatch(/timingSafeEqual\(actual, expected\)/);
  });
});

describe("response schemas strip encrypted and hash columns on every route", () => {
  it("walks every JSON response of a tour of the whole route table", async () => {
    const targets = await startTargets();
    const t = await buildTestApp({ env: targetEnv(targets) });
    try {
      const w = await bootstrap(t.app);
      const mw = await buildMatrixWorld(t, w, targets);
      const routes = t.routes
        .filter((r) => !r.url.startsWith("/api/docs"))
        .map((r) => `${r.method} ${r.url}`);
      const leaks: string[] = [];
      let succeeded = 0;
      const walk = (v: unknown, where: string) => {
        if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${where}[${i}]`);
        else if (v && typeof v === "object")
          for (const [k, x] of Object.entries(v)) {
            if (/encrypted|hash/i.test(k)) leaks.push(`${where}.${k}`);
            if (x && typeof x === "object" && (x as Json).type === "Buffer")
              leaks.push(`${where}.${k} (Buffer)`);
            walk(x, `${where}.${k}`);
          }
      };
      for (const route of routes) {
        const entry = ENTRIES[route];
        if (!entry) continue; // the matrix suite fails on routes without an entry
        const method = route.split(" ")[0] as "GET" | "POST" | "PATCH" | "DELETE";
        // As the organisation admin: the fullest view of every object.
        for (const caller of ["orgAdmin"] as const) {
          const r = await entry.build(mw, caller);
          const res = await call(t.app, method, r.url, { token: mw.tokens[caller], body: r.body });
          if (caller === "orgAdmin" && res.status < 300) succeeded++;
          if (String(res.headers["content-type"] ?? "").includes("json"))
            walk(res.json, `${route} (${caller})`);
        }
      }
      expect(leaks).toEqual([]);
      // The tour really exercised the API: most routes answered the admin with data.
      expect(succeeded).toBeGreaterThan(routes.length * 0.8);
    } finally {
      await t.close();
      await Promise.all(Object.values(targets).map((x) => x.fake.close()));
    }
  }, 120_000);
});

describe("SSRF guard end to end", () => {
  it("refuses connections to loopback, link-local and private addresses without ALLOW_INTERNAL_DESTINATIONS", async () => {
    const vault = await new FakeVault().start();
    const t = await buildTestApp({ env: { ALLOW_INTERNAL_DESTINATIONS: "false" } });
    try {
      const w = await bootstrap(t.app);
      const port = new URL(vault.url).port;
      const urls = [
        vault.url,
        `http://localhost:${port}`,
        "http://169.254.169.254",
        "http://[::1]:8200",
        "http://10.0.0.7:8200",
        "http://192.168.1.10",
      ];
      for (const [i, instanceUrl] of urls.entries()) {
        for (const [app, credentials] of [
          ["hashicorp-vault", { instanceUrl, accessToken: vault.token }],
          ["trigger-dev", { instanceUrl, apiKey: "tr_dev_ssrfcheck1" }],
        ] as const) {
          const r = await call(t.app, "POST", `/api/v1/app-connections/${app}`, {
            token: w.adminToken,
            body: {
              name: `ssrf-${app}-${i}`,
              method: app === "trigger-dev" ? "api-key" : "access-token",
              credentials,
            },
          });
          expect(r.status, `${app} ${instanceUrl}: ${r.body}`).toBeGreaterThanOrEqual(400);
          expect(r.status, `${app} ${instanceUrl}: ${r.body}`).toBeLessThan(500);
          expect(r.json).toMatchObject({ statusCode: r.status, error: expect.any(String) });
        }
      }
      // Refused before connecting: the fake on 127.0.0.1 never saw a request.
      expect(vault.calls).toEqual([]);
    } finally {
      await t.close();
      await vault.close();
    }
  });
});
