import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  change,
  delivered,
  licenseEnv,
  listen,
  type SseStream,
  subscribe,
  waitFor,
} from "../events/sse-client.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { addMember, bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";

const PERMISSION_MESSAGE = 'event: error\ndata: {"message":"Permission denied or refresh failed"}\n\n';
const BUFFER_BOUND = 64 * 1024;

/** Keep-alive, token and permission lifetime, disconnects, slow clients, shutdown. */
describe("event subscriptions: stream lifecycle", () => {
  let t: TestApp;
  let base: string;
  let w: World;
  let project: Json;
  const open: SseStream[] = [];
  const sub = async (token: string, register: Json[] = [{ event: "secret:create" }]) => {
    const s = await subscribe(base, token, { projectId: project.id, register });
    open.push(s);
    return s;
  };
  const stats = () => t.services.events.hub.stats();

  beforeAll(async () => {
    t = await buildTestApp({
      env: {
        ...(await licenseEnv()),
        SSE_PING_INTERVAL_MS: "100",
        SSE_PERMISSION_REFRESH_MS: "200",
        SSE_MAX_BUFFER_BYTES: String(BUFFER_BOUND),
      },
    });
    base = await listen(t.app);
    w = await bootstrap(t.app);
    project = await makeProject(t.app, w.adminToken);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t.close();
  });

  it("pings within the configured interval", async () => {
    const s = await sub(w.adminToken);
    await waitFor(() => expect(s.raw()).toContain("event: ping\n\n"), 2_000);
    expect(s.raw().startsWith("event: ping\n\n")).toBe(true);
    expect(s.events).toEqual([]); // pings have no data line
    s.close();
  });

  it("closes the stream with an error frame when its token is revoked", async () => {
    const member = await addMember(t.app, w, project.id, "revoked", "member");
    const s = await sub(member.token);
    const other = await sub(w.adminToken);
    await ok(call(t.app, "POST", "/api/v1/auth/token/revoke", { body: { accessToken: member.token } }));
    await s.done;
    expect(s.raw()).toContain(PERMISSION_MESSAGE);
    expect(other.ended()).toBe(false);
    other.close();
  });

  it("closes the stream when the token's exp passes", async () => {
    const id = (
      await ok(
        call(t.app, "POST", "/api/v1/identities", {
          token: w.adminToken,
          body: { name: "short-lived", organizationId: w.orgId, role: "member" },
        }),
      )
    ).identity.id as string;
    await ok(
      call(t.app, "POST", `/api/v1/projects/${project.id}/identity-memberships/${id}`, {
        token: w.adminToken,
        body: { role: "viewer" },
      }),
    );
    const ua = (
      await ok(
        call(t.app, "POST", `/api/v1/auth/universal-auth/identities/${id}`, {
          token: w.adminToken,
          body: { accessTokenTTL: 4, accessTokenMaxTTL: 4 }, // long enough to subscribe on a busy machine
        }),
      )
    ).identityUniversalAuth;
    const cs = await ok(
      call(t.app, "POST", `/api/v1/auth/universal-auth/identities/${id}/client-secrets`, {
        token: w.adminToken,
        body: {},
      }),
    );
    const login = await ok(
      call(t.app, "POST", "/api/v1/auth/universal-auth/login", {
        body: { clientId: ua.clientId, clientSecret: cs.clientSecret },
      }),
    );
    const s = await sub(login.accessToken);
    expect(s.status).toBe(200);
    await s.done;
    expect(s.raw()).toMatch(/event: error\ndata: \{"message":"[^"]+"\}\n\n$/);
  });

  it("closes the stream at the next refresh once the subscriber loses access", async () => {
    const member = await addMember(t.app, w, project.id, "demoted", "member");
    const s = await sub(member.token);
    await waitFor(() => expect(s.raw()).toContain("event: ping"));
    await ok(
      call(t.app, "PATCH", `/api/v1/projects/${project.id}/identity-memberships/${member.id}`, {
        token: w.adminToken,
        body: { role: "no-access" },
      }),
    );
    await s.done;
    expect(s.raw().endsWith(PERMISSION_MESSAGE)).toBe(true);
  });

  it("frees everything the stream held when the client disconnects", async () => {
    for (const s of open) s.close();
    await waitFor(() => expect(stats().connections).toBe(0));
    const streams = [await sub(w.adminToken), await sub(w.adminToken)];
    expect(stats()).toMatchObject({ connections: 2, projects: 1 });
    for (const s of streams) s.close();
    await waitFor(() => expect(stats()).toMatchObject({ connections: 0, projects: 0 }));
    // Nothing is written to (or kept for) departed clients.
    t.services.changes.publish(change(project.id, { keys: ["AFTER"] }));
    expect(streams.flatMap(delivered)).toEqual([]);
  });

  it("drops a client that stops reading and keeps its buffer bounded", async () => {
    const body = JSON.stringify({ projectId: project.id, register: [{ event: "secret:update" }] });
    const sock = connect(Number(new URL(base).port), "127.0.0.1");
    await new Promise<void>((resolve) => sock.once("connect", () => resolve()));
    sock.write(
      "POST /api/v1/events/subscribe/project-events HTTP/1.1\r\nHost: localhost\r\n" +
        `Authorization: Bearer ${w.adminToken}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    // The socket is never read from (no 'data' listener), so the server's writes back up.
    await waitFor(() => expect(stats().connections).toBe(1));
    const before = stats().droppedSlow;
    const keys = Array.from({ length: 400 }, (_, i) => `KEY_${i}_${"x".repeat(100)}`); // ~50 KB per event
    for (let i = 0; i < 2_000 && stats().droppedSlow === before; i++) {
      t.services.changes.publish(change(project.id, { kind: "updated", keys }));
      await new Promise((r) => setImmediate(r)); // let the socket flush what the kernel accepts
    }
    expect(stats().droppedSlow).toBe(before + 1);
    expect(stats().connections).toBe(0);
    expect(stats().peakBufferedBytes).toBeLessThanOrEqual(BUFFER_BOUND);

    // The server ended the connection: once the client finally reads, it reaches end of stream.
    const closed = new Promise<void>((resolve) => sock.once("close", () => resolve()));
    sock.on("error", () => {});
    sock.resume();
    await closed;
  });

  it("ends open streams on shutdown without hanging close()", async () => {
    const s = await sub(w.adminToken);
    const s2 = await sub(w.adminToken, [{ event: "secret:delete" }]);
    await t.close();
    await Promise.all([s.done, s2.done]);
    expect(s.raw()).toContain('event: error\ndata: {"message":"Server is shutting down"}\n\n');
    expect(stats().connections).toBe(0);
  });
});
