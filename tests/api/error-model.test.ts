import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, makeProject, type World } from "../helpers/fixtures.js";

const ENVELOPE_KEYS = ["reqId", "statusCode", "message", "error"];

describe("error model", () => {
  let t: TestApp;
  let w: World;
  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
  });
  afterAll(async () => t.close());

  const raw = (
    method: "POST" | "DELETE" | "GET",
    url: string,
    payload?: string,
    headers: Record<string, string> = {},
  ) =>
    t.app.inject({ method, url, payload, headers: { authorization: `Bearer ${w.adminToken}`, ...headers } });

  it("422 ValidationFailure carries the zod issues array", async () => {
    const r = await call(t.app, "POST", "/api/v2/workspace", {
      token: w.adminToken,
      body: { projectName: 42 },
    });
    expect(r.status).toBe(422);
    expect(r.json.error).toBe("ValidationFailure");
    expect(Array.isArray(r.json.message)).toBe(true);
    expect(r.json.message[0]).toMatchObject({ code: "invalid_type", path: ["projectName"] });
  });

  it("a missing required body is 422, not 500", async () => {
    const r = await raw("POST", "/api/v2/workspace");
    expect(r.statusCode).toBe(422);
  });

  it("malformed JSON is 400 with the envelope", async () => {
    const r = await raw("POST", "/api/v2/workspace", '{"projectName": ', {
      "content-type": "application/json",
    });
    expect(r.statusCode).toBe(400);
    const j = r.json();
    expect(Object.keys(j)).toEqual(expect.arrayContaining(ENVELOPE_KEYS));
    expect(j.message).toBe("Malformed JSON body");
  });

  it("an empty JSON body with a JSON content type is 400", async () => {
    const r = await raw("POST", "/api/v2/workspace", "", { "content-type": "application/json" });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toBe("BadRequest");
  });

  it("an unsupported content type is 415", async () => {
    const r = await raw("POST", "/api/v2/workspace", "projectName=x", {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(r.statusCode).toBe(415);
    expect(r.json()).toMatchObject({ statusCode: 415, error: "UnsupportedMediaType" });
  });

  it("an unknown route is a 404 envelope", async () => {
    const r = await raw("GET", "/api/v9/nothing-here");
    expect(r.statusCode).toBe(404);
    expect(r.json()).toMatchObject({ statusCode: 404, error: "NotFound" });
    expect(r.json().reqId).toMatch(/^req-[A-Za-z0-9]{14}$/);
  });

  it("a DELETE with no body and no content type is accepted", async () => {
    const p = await makeProject(t.app, w.adminToken, "Bodiless");
    const r = await t.app.inject({
      method: "DELETE",
      url: `/api/v1/projects/${p.id}`,
      headers: { authorization: `Bearer ${w.adminToken}` },
    });
    expect(r.statusCode).toBe(200);
  });

  it("an oversized body is 413, not 500", async () => {
    const r = await raw(
      "POST",
      "/api/v2/workspace",
      JSON.stringify({ projectName: "x".repeat(2 * 1024 * 1024) }),
      {
        "content-type": "application/json",
      },
    );
    expect(r.statusCode).toBe(413);
    expect(r.json().error).toBe("PayloadTooLarge");
  });

  it("unknown body and query fields are ignored; empty query values count as absent", async () => {
    const r = await call(t.app, "POST", "/api/v2/workspace", {
      token: w.adminToken,
      body: { projectName: "Extra", whatever: true },
    });
    expect(r.status).toBe(200);
    const q = await call(t.app, "GET", "/api/v1/organization/audit-logs?projectId=&eventType=&limit=5", {
      token: w.adminToken,
    });
    expect(q.status).toBe(200);
  });

  it("request ids look like req-…", async () => {
    const r = await call(t.app, "GET", "/api/v1/projects/not-a-uuid", { token: w.adminToken });
    expect(r.json.reqId).toMatch(/^req-[A-Za-z0-9]{14}$/);
  });
});
