import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { PLAN_MESSAGE } from "../../src/features/events/events-service.js";
import { change, delivered, licenseEnv, listen, subscribe, waitFor } from "../events/sse-client.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { addMember, bootstrap, call, makeProject, ok } from "../helpers/fixtures.js";

/** The Enterprise licence gate: subscribe answers 400 without it, and startup says why in one line. */
// Each case boots its own app (PGlite migrations), which is slow on a shared machine.
describe("event subscriptions: licence", { timeout: 90_000 }, () => {
  const apps: TestApp[] = [];
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close();
  });

  async function start(env: Record<string, string>) {
    const lines: string[] = [];
    const logger = pino(
      { level: "info" },
      new Writable({
        write(chunk, _enc, cb) {
          lines.push(String(chunk));
          cb();
        },
      }),
    );
    const t = await buildTestApp({ env, logger });
    apps.push(t);
    const w = await bootstrap(t.app);
    const project = await makeProject(t.app, w.adminToken);
    const licenceLines = lines.filter((l) => /licen[cs]e/i.test(l));
    return { t, w, project, base: await listen(t.app), licenceLines };
  }

  it("without a licence: 400 with the plan phrase, after the permission check, and one startup line", async () => {
    const { t, w, project, base, licenceLines } = await start({});
    expect(licenceLines).toHaveLength(1);
    expect(licenceLines[0]).toContain("No LICENSE_KEY set; enterprise features are off.");

    const r = await subscribe(base, w.adminToken, {
      projectId: project.id,
      register: [{ event: "secret:create" }],
    });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ statusCode: 400, error: "BadRequest", message: PLAN_MESSAGE });
    expect(r.json.message).toContain("not available on your current plan");

    // Upstream's order: a caller without permission gets 403 even when the plan would refuse too.
    const none = await addMember(t.app, w, project.id, "none", "no-access");
    const denied = await subscribe(base, none.token, {
      projectId: project.id,
      register: [{ event: "secret:create" }],
    });
    expect(denied.status).toBe(403);

    const lic = await ok(call(t.app, "GET", "/api/v1/license", { token: w.adminToken }));
    expect(lic).toMatchObject({
      plan: "free",
      status: "unlicensed",
      features: { eventSubscriptions: false },
    });
  });

  it("a licence signed by another key is refused, and the startup line says why", async () => {
    const good = await licenseEnv();
    const other = await licenseEnv();
    const { t, w, project, base, licenceLines } = await start({
      LICENSE_KEY: good.LICENSE_KEY,
      LICENSE_PUBLIC_KEY: other.LICENSE_PUBLIC_KEY,
    });
    expect(licenceLines).toHaveLength(1);
    expect(licenceLines[0]).toContain("signature does not match");
    expect(licenceLines[0]).not.toContain(good.LICENSE_KEY);
    const r = await subscribe(base, w.adminToken, {
      projectId: project.id,
      register: [{ event: "secret:create" }],
    });
    expect(r.status).toBe(400);
    const lic = await ok(call(t.app, "GET", "/api/v1/license", { token: w.adminToken }));
    expect(lic).toMatchObject({ status: "invalid", features: { eventSubscriptions: false } });
  });

  it("a non-enterprise plan with the eventSubscriptions feature flag may subscribe", async () => {
    const { t, w, project, base, licenceLines } = await start(
      await licenseEnv({ plan: "pro", features: { eventSubscriptions: true } }),
    );
    expect(licenceLines[0]).toContain("Licence: plan pro issued to ferry-tests");
    const s = await subscribe(base, w.adminToken, {
      projectId: project.id,
      register: [{ event: "secret:create" }],
    });
    expect(s.status).toBe(200);
    t.services.changes.publish(change(project.id, { keys: ["FLAGGED"] }));
    await waitFor(() => expect(delivered(s)).toEqual(["secret:create dev / FLAGGED"]));
    s.close();
  });
});
