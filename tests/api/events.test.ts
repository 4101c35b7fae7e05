import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALL_EVENTS,
  change,
  delivered,
  licenseEnv,
  listen,
  type SseStream,
  subscribe,
  waitFor,
} from "../events/sse-client.js";
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

/** Subscribe checks, framing and matching, over a real socket (undici + eventsource-parser). */
describe("event subscriptions: subscribe, framing, matching", () => {
  let t: TestApp;
  let base: string;
  let w: World;
  let project: Json;
  const open: SseStream[] = [];
  const sub = async (token: string, body: Json) => {
    const s = await subscribe(base, token, body);
    open.push(s);
    return s;
  };
  const publish = (over: Parameters<typeof change>[1]) =>
    t.services.changes.publish(change(project.id, over));

  beforeAll(async () => {
    t = await buildTestApp({ env: { ...(await licenseEnv()), SSE_MAX_CONNECTIONS_PER_PROJECT: "3" } });
    base = await listen(t.app);
    w = await bootstrap(t.app);
    project = await makeProject(t.app, w.adminToken);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t.close();
  });

  it("streams all four event types with upstream's framing, headers first and no initial event", async () => {
    const s = await sub(w.adminToken, {
      projectId: project.id,
      register: ALL_EVENTS.map((event) => ({ event })),
    });
    expect(s.status).toBe(200);
    expect(s.headers).toMatchObject({
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    expect(s.headers["content-encoding"]).toBeUndefined();
    expect(s.raw()).toBe("");

    publish({ kind: "created", keys: ["A", "B"] });
    publish({ kind: "updated", secretPath: "/app", keys: ["A"] });
    publish({ kind: "deleted", environment: "prod", keys: ["B"] });
    publish({ kind: "import-changed", secretPath: "/app", keys: [] });
    await waitFor(() => expect(s.events).toHaveLength(4));

    expect(s.events.map((e) => e.event)).toEqual(ALL_EVENTS);
    for (const e of s.events) expect(e.id).toMatch(/^\d+$/);
    expect(s.events[0]?.data).toEqual({
      projectType: "secret-manager",
      data: {
        eventType: "secret:create",
        payload: [
          { environment: "dev", secretPath: "/", secretKey: "A" },
          { environment: "dev", secretPath: "/", secretKey: "B" },
        ],
      },
    });
    // Import mutations carry one object, not an array (as upstream and the issue specify).
    expect(s.events[3]?.data.data).toEqual({
      eventType: "secret:import-mutation",
      payload: { environment: "dev", secretPath: "/app" },
    });
    // Byte-exact framing: id, event, one data line, blank line; LF only.
    expect(s.raw()).toMatch(
      /^id: \d+\nevent: secret:create\ndata: \{"projectType":"secret-manager","data":\{"eventType":"secret:create","payload":\[.*\]\}\}\n\n/,
    );
    expect(s.raw()).not.toContain("\r");
  });

  it("sends nothing for personal overrides", async () => {
    const s = await sub(w.adminToken, { projectId: project.id, register: [{ event: "secret:create" }] });
    publish({ keys: ["PERSONAL"], personal: true });
    publish({ keys: ["SHARED"] });
    await waitFor(() => expect(delivered(s)).toContain("secret:create dev / SHARED"));
    expect(delivered(s)).toEqual(["secret:create dev / SHARED"]);
    s.close();
  });

  it("matches event type, environment and path globs (/app/** covers /app and below, not /apple)", async () => {
    const s = await sub(w.adminToken, {
      projectId: project.id,
      register: [
        { event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/app/**" } },
        { event: "secret:update", conditions: { environmentSlug: "dev" } }, // secretPath defaults to "/"
      ],
    });
    publish({ secretPath: "/app", keys: ["IN_APP"] });
    publish({ secretPath: "/app/x/y", keys: ["DEEP"] });
    publish({ secretPath: "/apple", keys: ["SIBLING"] });
    publish({ secretPath: "/", keys: ["ROOT_CREATE"] });
    publish({ secretPath: "/app", environment: "staging", keys: ["OTHER_ENV"] });
    publish({ kind: "deleted", secretPath: "/app", keys: ["WRONG_TYPE"] });
    publish({ kind: "updated", secretPath: "/app", keys: ["UPDATE_IN_APP"] });
    publish({ kind: "updated", secretPath: "/", keys: ["ROOT_UPDATE"] });
    await waitFor(() => expect(delivered(s)).toContain("secret:update dev / ROOT_UPDATE"));
    expect(delivered(s)).toEqual([
      "secret:create dev /app IN_APP",
      "secret:create dev /app/x/y DEEP",
      "secret:update dev / ROOT_UPDATE",
    ]);
    s.close();
  });

  it("checks each event against the subscriber's permissions at delivery time", async () => {
    await ok(
      call(t.app, "POST", `/api/v1/projects/${project.id}/roles`, {
        token: w.adminToken,
        body: {
          slug: "events-no-vault",
          permissions: [
            { subject: "secret-events", action: actions() },
            {
              subject: "secret-events",
              action: actions(),
              inverted: true,
              conditions: { secretPath: { $glob: "/vault/**" } },
            },
          ],
        },
      }),
    );
    const limited = await addMember(t.app, w, project.id, "limited-events", "events-no-vault");
    const s = await sub(limited.token, { projectId: project.id, register: [{ event: "secret:create" }] });
    expect(s.status).toBe(200);
    publish({ secretPath: "/vault/keys", keys: ["HIDDEN"] });
    publish({ secretPath: "/public", keys: ["VISIBLE"] });
    await waitFor(() => expect(delivered(s)).toContain("secret:create dev /public VISIBLE"));
    expect(delivered(s)).toEqual(["secret:create dev /public VISIBLE"]);
    s.close();
  });

  it("denies without the secret-events permission (403 PermissionDenied with details)", async () => {
    const none = await addMember(t.app, w, project.id, "no-access", "no-access");
    const r = await sub(none.token, { projectId: project.id, register: [{ event: "secret:delete" }] });
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({
      statusCode: 403,
      error: "PermissionDenied",
      message: "You are not allowed to subscribe-on-deleted on secret-events",
      details: [],
    });

    // A role limited to prod cannot subscribe without naming the environment (checked as "").
    await ok(
      call(t.app, "POST", `/api/v1/projects/${project.id}/roles`, {
        token: w.adminToken,
        body: {
          slug: "prod-events",
          permissions: [{ subject: "secret-events", action: actions(), conditions: { environment: "prod" } }],
        },
      }),
    );
    const prodOnly = await addMember(t.app, w, project.id, "prod-only", "prod-events");
    const denied = await sub(prodOnly.token, {
      projectId: project.id,
      register: [{ event: "secret:create" }],
    });
    expect(denied.status).toBe(403);
    expect(denied.json.details).toEqual([
      { action: actions(), subject: "secret-events", inverted: false, conditions: { environment: "prod" } },
    ]);
    const allowed = await sub(prodOnly.token, {
      projectId: project.id,
      register: [{ event: "secret:create", conditions: { environmentSlug: "prod", secretPath: "/**" } }],
    });
    expect(allowed.status).toBe(200);
    allowed.close();

    const outsider = await makeIdentity(t.app, w, "outsider");
    const notMember = await sub(outsider.token, {
      projectId: project.id,
      register: [{ event: "secret:create" }],
    });
    expect(notMember.status).toBe(403);
    expect(notMember.json.error).toBe("You are not member of this project");

    const unknown = await sub(w.adminToken, {
      projectId: "00000000-0000-4000-8000-000000000000",
      register: [{ event: "secret:create" }],
    });
    expect(unknown.status).toBe(404);
  });

  it("rejects malformed bodies with 422 and missing tokens with 401", async () => {
    const bodies: Json[] = [
      { projectId: project.id, register: [] },
      { projectId: project.id },
      { projectId: project.id, register: Array.from({ length: 11 }, () => ({ event: "secret:create" })) },
      { projectId: project.id, register: [{ event: "secret:rename" }] },
      { projectId: project.id, register: [{ event: "secret:create", conditions: { secretPath: "/" } }] },
      { register: [{ event: "secret:create" }] },
    ];
    for (const body of bodies) {
      const r = await sub(w.adminToken, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.error).toBe("ValidationFailure");
    }
    const anon = await call(t.app, "POST", "/api/v1/events/subscribe/project-events", {
      body: { projectId: project.id, register: [{ event: "secret:create" }] },
    });
    expect(anon.status).toBe(401);
  });

  it("caps concurrent streams per project (429) and frees the slot when a client leaves", async () => {
    for (const s of open) s.close();
    await waitFor(() => expect(t.services.events.hub.stats().connections).toBe(0));
    const body = { projectId: project.id, register: [{ event: "secret:create" }] };
    const streams = [
      await sub(w.adminToken, body),
      await sub(w.adminToken, body),
      await sub(w.adminToken, body),
    ];
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
    const over = await sub(w.adminToken, body);
    expect(over.status).toBe(429);
    expect(over.json).toMatchObject({ statusCode: 429, error: "RateLimitExceeded" });
    expect(over.json.message).toContain("maximum concurrent event subscriptions");

    streams[0]?.close();
    await waitFor(() => expect(t.services.events.hub.stats().connections).toBe(2));
    expect((await sub(w.adminToken, body)).status).toBe(200);
  });

  it("reports the licence in force without the key", async () => {
    const r = await ok(call(t.app, "GET", "/api/v1/license", { token: w.adminToken }));
    expect(r).toMatchObject({ plan: "enterprise", status: "active", features: { eventSubscriptions: true } });
    expect(r.issuedTo).toBe("ferry-tests");
    expect(JSON.stringify(r)).not.toContain(t.services.config.LICENSE_KEY ?? "-");
  });
});

function actions() {
  return [
    "subscribe-on-created",
    "subscribe-on-updated",
    "subscribe-on-deleted",
    "subscribe-on-import-mutations",
  ];
}
