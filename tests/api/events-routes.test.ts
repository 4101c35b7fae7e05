import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALL_EVENTS,
  delivered,
  licenseEnv,
  listen,
  type SseStream,
  subscribe,
  waitFor,
} from "../events/sse-client.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import { makeFolder, makeUser } from "./secrets-helpers.js";

/** Events produced by the real write routes (v3, v4, batch, secret imports), seen over a real socket. */
describe("event subscriptions: events from the secrets and import routes", () => {
  let t: TestApp;
  let base: string;
  let w: World;
  let project: Json;
  let s: SseStream;
  const all = ALL_EVENTS.map((event) => ({ event }));
  const write = async (method: "POST" | "PATCH" | "DELETE", url: string, body: Json, token = w.adminToken) =>
    ok(call(t.app, method, url, { token, body }));
  /** Everything delivered since the previous call. */
  let seen = 0;
  const fresh = () => {
    const d = delivered(s);
    const out = d.slice(seen);
    seen = d.length;
    return out;
  };
  const nextMarker = async () => {
    const key = `MARKER_${seen}`;
    await write("POST", `/api/v4/secrets/${key}`, {
      projectId: project.id,
      environment: "staging",
      secretValue: "m",
    });
    await waitFor(() => expect(delivered(s)).toContain(`secret:create staging / ${key}`));
    return `secret:create staging / ${key}`;
  };

  beforeAll(async () => {
    t = await buildTestApp({ env: await licenseEnv() });
    base = await listen(t.app);
    w = await bootstrap(t.app);
    project = await makeProject(t.app, w.adminToken);
    await makeFolder(t.app, w.adminToken, project.id, "dev", "/", "app");
    s = await subscribe(base, w.adminToken, { projectId: project.id, register: all });
    expect(s.status).toBe(200);
  });
  afterAll(async () => {
    s?.close();
    await t?.close();
  });

  it("v3 raw routes emit create, update and delete", async () => {
    const scope = { workspaceId: project.id, environment: "dev", secretPath: "/app" };
    await write("POST", "/api/v3/secrets/raw/V3_KEY", { ...scope, secretValue: "a" });
    await write("PATCH", "/api/v3/secrets/raw/V3_KEY", { ...scope, secretValue: "b" });
    await write("DELETE", "/api/v3/secrets/raw/V3_KEY", scope);
    await waitFor(() => expect(delivered(s).length).toBeGreaterThanOrEqual(seen + 3));
    expect(fresh()).toEqual([
      "secret:create dev /app V3_KEY",
      "secret:update dev /app V3_KEY",
      "secret:delete dev /app V3_KEY",
    ]);
  });

  it("v4 routes emit create, update (key after rename) and delete", async () => {
    const scope = { projectId: project.id, environment: "dev" };
    await write("POST", "/api/v4/secrets/V4_KEY", { ...scope, secretValue: "a" });
    await write("PATCH", "/api/v4/secrets/V4_KEY", { ...scope, newSecretName: "V4_RENAMED" });
    await write("DELETE", "/api/v4/secrets/V4_RENAMED", scope);
    await waitFor(() => expect(delivered(s)).toContain("secret:delete dev / V4_RENAMED"));
    const got = fresh();
    expect(got[0]).toBe("secret:create dev / V4_KEY");
    // Upstream reports the key after the rename; the data plane may also name the old key.
    expect(got.filter((x) => x.startsWith("secret:update"))).toContain("secret:update dev / V4_RENAMED");
    expect(got.at(-1)).toBe("secret:delete dev / V4_RENAMED");
    expect(got.filter((x) => x.startsWith("secret:delete"))).toHaveLength(1);
  });

  it("batch routes emit one message per folder carrying every key", async () => {
    const v3 = { workspaceId: project.id, environment: "dev", secretPath: "/" };
    await write("POST", "/api/v3/secrets/batch/raw", {
      ...v3,
      secrets: [
        { secretKey: "B1", secretValue: "1" },
        { secretKey: "B2", secretValue: "2" },
      ],
    });
    const v4 = { projectId: project.id, environment: "dev", secretPath: "/" };
    await write("PATCH", "/api/v4/secrets/batch", {
      ...v4,
      secrets: [{ secretKey: "B1", secretValue: "x" }],
    });
    await write("DELETE", "/api/v4/secrets/batch", {
      ...v4,
      secrets: [{ secretKey: "B1" }, { secretKey: "B2" }],
    });
    await waitFor(() =>
      expect(s.events.filter((e) => e.event === "secret:delete").length).toBeGreaterThan(2),
    );
    const batchCreate = s.events.find((e) => e.data.data.payload.some?.((p: Json) => p.secretKey === "B1"));
    expect(batchCreate?.data.data.payload).toHaveLength(2);
    expect(fresh()).toEqual([
      "secret:create dev / B1",
      "secret:create dev / B2",
      "secret:update dev / B1",
      "secret:delete dev / B1",
      "secret:delete dev / B2",
    ]);
  });

  it("secret imports, and writes to an imported folder, emit import mutations", async () => {
    const imp = await write("POST", "/api/v1/secret-imports", {
      workspaceId: project.id,
      environment: "prod",
      path: "/",
      import: { environment: "dev", path: "/app" },
    });
    expect(imp.secretImport.id).toBeTruthy();
    await waitFor(() => expect(delivered(s)).toContain("secret:import-mutation prod /"));
    expect(fresh()).toEqual(["secret:import-mutation prod /"]);

    await write("POST", "/api/v4/secrets/IMPORTED", {
      projectId: project.id,
      environment: "dev",
      secretPath: "/app",
      secretValue: "v",
    });
    await waitFor(() => expect(delivered(s).length).toBeGreaterThanOrEqual(seen + 2));
    expect(fresh()).toEqual(["secret:create dev /app IMPORTED", "secret:import-mutation prod /"]);
    expect(s.events.at(-1)?.data.data.payload).toEqual({ environment: "prod", secretPath: "/" });
  });

  it("user tokens may subscribe, and personal overrides emit nothing", async () => {
    const user = await makeUser(t.app, w, "dev@example.com", project.id, ["member"]);
    const mine = await subscribe(base, user.token, { projectId: project.id, register: all });
    expect(mine.status).toBe(200);
    const scope = { projectId: project.id, environment: "dev" };
    await write("POST", "/api/v4/secrets/SHARED_ONE", { ...scope, secretValue: "s" }, user.token);
    await write(
      "POST",
      "/api/v4/secrets/SHARED_ONE",
      { ...scope, secretValue: "p", type: "personal" },
      user.token,
    );
    const marker = await nextMarker();
    await waitFor(() => expect(delivered(mine)).toContain(marker));
    expect(fresh()).toEqual(["secret:create dev / SHARED_ONE", marker]);
    expect(delivered(mine)).toEqual(["secret:create dev / SHARED_ONE", marker]);
    mine.close();
  });

  it("a rolled-back write emits nothing", async () => {
    // A trigger that aborts the transaction after the row is written: the write really happens, then rolls back.
    await t.services.db.execute(
      sql.raw(`CREATE FUNCTION ferry_test_abort() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.key LIKE 'ROLLBACK%' THEN RAISE EXCEPTION 'test abort'; END IF; RETURN NEW; END $$`),
    );
    await t.services.db.execute(
      sql.raw(`CREATE TRIGGER ferry_test_abort AFTER INSERT OR UPDATE ON secrets
      FOR EACH ROW EXECUTE FUNCTION ferry_test_abort()`),
    );
    const scope = { projectId: project.id, environment: "dev" };
    const single = await call(t.app, "POST", "/api/v4/secrets/ROLLBACK_ONE", {
      token: w.adminToken,
      body: { ...scope, secretValue: "x" },
    });
    expect(single.status).toBeGreaterThanOrEqual(400);
    const batch = await call(t.app, "POST", "/api/v4/secrets/batch", {
      token: w.adminToken,
      body: {
        ...scope,
        secrets: [
          { secretKey: "FINE_BEFORE", secretValue: "1" },
          { secretKey: "ROLLBACK_TWO", secretValue: "2" },
        ],
      },
    });
    expect(batch.status).toBeGreaterThanOrEqual(400);
    const marker = await nextMarker();
    expect(fresh()).toEqual([marker]);
    const listed = await ok(
      call(t.app, "GET", `/api/v4/secrets?projectId=${project.id}&environment=dev`, { token: w.adminToken }),
    );
    expect(listed.secrets.map((x: Json) => x.secretKey)).not.toContain("FINE_BEFORE");
  });
});
