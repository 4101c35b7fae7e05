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

describe("status, docs and audit log", () => {
  let t: TestApp;
  let w: World;
  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
  });
  afterAll(async () => t.close());

  it("GET /api/status answers 200 without a token", async () => {
    const r = await call(t.app, "GET", "/api/status");
    expect(r.status).toBe(200);
    expect(r.json.message).toBe("Ok");
  });

  it("serves an OpenAPI 3 document and a docs page generated from the route schemas", async () => {
    const doc = await call(t.app, "GET", "/api/docs/json");
    expect(doc.status).toBe(200);
    expect(doc.json.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.json.paths)).toEqual(
      expect.arrayContaining([
        "/api/v1/auth/universal-auth/login",
        "/api/v2/workspace",
        "/api/v1/identities",
      ]),
    );
    const body = doc.json.paths["/api/v1/identities"].post.requestBody.content["application/json"].schema;
    expect(body.required).toEqual(expect.arrayContaining(["name", "organizationId"]));
    const page = await t.app.inject({ method: "GET", url: "/api/docs/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
  });

  it("records mutations, logins and filters by project, actor, event type and time", async () => {
    const start = new Date(Date.now() - 1000).toISOString();
    const bot = await makeIdentity(t.app, w, "audited");
    const p = await makeProject(t.app, bot.token, "Audited");
    const all = await ok(
      call(t.app, "GET", "/api/v1/organization/audit-logs?limit=100", { token: w.adminToken }),
    );
    const types = all.auditLogs.map((l: Json) => l.event.type);
    expect(types).toEqual(
      expect.arrayContaining([
        "bootstrap-instance",
        "create-identity",
        "login-identity-universal-auth",
        "create-project",
      ]),
    );
    const byProject = await ok(
      call(t.app, "GET", `/api/v1/organization/audit-logs?projectId=${p.id}`, { token: w.adminToken }),
    );
    expect(byProject.auditLogs.length).toBeGreaterThan(0);
    expect(byProject.auditLogs.every((l: Json) => l.projectId === p.id)).toBe(true);
    const byActor = await ok(
      call(
        t.app,
        "GET",
        `/api/v1/organization/audit-logs?actor=${bot.id}&eventType=create-project&startDate=${start}`,
        { token: w.adminToken },
      ),
    );
    expect(byActor.auditLogs).toHaveLength(1);
    expect(byActor.auditLogs[0]).toMatchObject({
      actor: { type: "identity", metadata: { id: bot.id } },
      outcome: "success",
    });
    const future = await ok(
      call(
        t.app,
        "GET",
        `/api/v1/organization/audit-logs?startDate=${new Date(Date.now() + 3600_000).toISOString()}`,
        { token: w.adminToken },
      ),
    );
    expect(future.auditLogs).toHaveLength(0);
  });

  it("batched read records keep their actor, resource and the time of the read", async () => {
    const bot = await makeIdentity(t.app, w, "reader");
    const p = await makeProject(t.app, bot.token, "Read-audited");
    const body = { workspaceId: p.id, environment: "dev", secretPath: "/", secretValue: "v" };
    await ok(call(t.app, "POST", "/api/v3/secrets/raw/AUDITED_KEY", { token: bot.token, body }));
    const q = `workspaceId=${p.id}&environment=dev&secretPath=%2F`;
    const before = Date.now();
    await ok(call(t.app, "GET", `/api/v3/secrets/raw/AUDITED_KEY?${q}`, { token: bot.token }));
    await ok(call(t.app, "GET", `/api/v3/secrets/raw?${q}`, { token: bot.token }));
    const after = Date.now();
    // The audit-log route flushes the queue before it reads.
    const logs = (
      await ok(
        call(t.app, "GET", `/api/v1/organization/audit-logs?projectId=${p.id}&actor=${bot.id}`, {
          token: w.adminToken,
        }),
      )
    ).auditLogs as Json[];
    const one = logs.find((l) => l.event.type === "get-secret");
    expect(one).toMatchObject({
      projectId: p.id,
      actor: { type: "identity", metadata: { id: bot.id } },
      event: {
        metadata: { environment: "dev", secretPath: "/", secretName: "AUDITED_KEY", secretVersion: 1 },
      },
    });
    const at = Date.parse(one?.createdAt);
    expect(at).toBeGreaterThanOrEqual(before - 5);
    expect(at).toBeLessThanOrEqual(after + 5);
    expect(logs.find((l) => l.event.type === "get-secrets")?.event.metadata).toMatchObject({
      numberOfSecrets: 1,
      recursive: false,
    });
  });

  it("gives audit records time-ordered ids (UUIDv7 layout), so new rows append to the primary key", async () => {
    const bot = await makeIdentity(t.app, w, "ordered");
    const made: string[] = [];
    for (const name of ["Ordered 1", "Ordered 2", "Ordered 3"]) {
      made.push((await makeProject(t.app, bot.token, name)).id as string);
    }
    const after = Date.now();
    const logs = (
      await ok(
        call(t.app, "GET", `/api/v1/organization/audit-logs?actor=${bot.id}&eventType=create-project`, {
          token: w.adminToken,
        }),
      )
    ).auditLogs as Json[];
    const ids = made.map((projectId) => logs.find((l) => l.projectId === projectId)?.id as string);
    let previous = 0;
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      // The first 48 bits are the insert's time in ms: not before the record's own time, not after now.
      const ms = Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
      const createdAt = Date.parse(logs.find((l) => l.id === id)?.createdAt);
      expect(ms).toBeGreaterThanOrEqual(createdAt - 1);
      expect(ms).toBeLessThanOrEqual(after + 5);
      // Made one after the other, so their time prefixes never go backwards.
      expect(ms).toBeGreaterThanOrEqual(previous);
      previous = ms;
    }
  });

  it("project members without audit rights cannot read project logs; non-admins cannot read org logs", async () => {
    const p = await makeProject(t.app, w.adminToken, "Audit perms");
    const v = await addMember(t.app, w, p.id, "audit-viewer", "viewer");
    expect(
      (await call(t.app, "GET", `/api/v1/organization/audit-logs?projectId=${p.id}`, { token: v.token }))
        .status,
    ).toBe(403);
    expect((await call(t.app, "GET", "/api/v1/organization/audit-logs", { token: v.token })).status).toBe(
      403,
    );
  });
});

describe("rate limiting", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_AUTH_PER_MINUTE: "3" } });
  });
  afterAll(async () => t.close());

  it("limits login attempts per IP and answers 429 with Retry-After in the envelope", async () => {
    const attempt = () =>
      call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
        body: { clientId: "00000000-0000-0000-0000-000000000000", clientSecret: "x" },
      });
    for (let i = 0; i < 3; i++) expect((await attempt()).status).toBe(401);
    const limited = await attempt();
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ statusCode: 429, error: "RateLimitExceeded" });
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    // Read routes are not limited by default.
    for (let i = 0; i < 5; i++) expect((await call(t.app, "GET", "/api/status")).status).toBe(200);
  });

  it("limits the read and write classes separately once they are configured", async () => {
    const limited = await buildTestApp({
      env: { RATE_LIMIT_READ_PER_MINUTE: "2", RATE_LIMIT_WRITE_PER_MINUTE: "1" },
    });
    try {
      const lw = await bootstrap(limited.app);
      const read = () => call(limited.app, "GET", "/api/v1/workspace", { token: lw.adminToken });
      const write = () =>
        call(limited.app, "POST", "/api/v2/workspace", { token: lw.adminToken, body: { projectName: "RL" } });
      expect((await read()).status).toBe(200);
      expect((await read()).status).toBe(200);
      expect((await read()).status).toBe(429);
      expect((await write()).status).toBe(200);
      const w2 = await write();
      expect(w2.status).toBe(429);
      expect(w2.json).toMatchObject({ statusCode: 429, error: "RateLimitExceeded" });
      // The status route is never limited.
      expect((await call(limited.app, "GET", "/api/status")).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
