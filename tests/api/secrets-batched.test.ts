import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rowsOf } from "../../src/db/client.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, type Json, makeProject, ok, type World } from "../helpers/fixtures.js";
import { createV3, getV3, makeFolder, makeUser } from "./secrets-helpers.js";

/**
 * Concurrent gets by name and v4 deletes that reach the database in the same event-loop turn share one
 * statement (src/db/batched.ts). Each request must still get exactly the answer it gets alone: its own
 * secret, its own 404, its own audit record, and a shared delete still takes the users' overrides.
 */
describe("batched get-by-name and delete", () => {
  let t: TestApp;
  let w: World;
  let p: Json;
  let tag: Json;
  const del = (name: string, body: Json) =>
    call(t.app, "DELETE", `/api/v4/secrets/${encodeURIComponent(name)}`, { token: w.adminToken, body });
  /** The response minus what differs between any two requests (the error envelope's request id). */
  const comparable = (r: { status: number; json: Json }) => {
    const { reqId: _, ...json } = r.json;
    return { status: r.status, json };
  };

  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
    p = await makeProject(t.app, w.adminToken, "Batched");
    await makeFolder(t.app, w.adminToken, p.id, "dev", "/", "app");
    tag = (
      await ok(
        call(t.app, "POST", `/api/v1/projects/${p.id}/tags`, {
          token: w.adminToken,
          body: { slug: "batched", color: "#00f" },
        }),
      )
    ).tag as Json;
  });
  afterAll(async () => t.close());

  it("concurrent gets answer each request as it is answered alone", async () => {
    for (let i = 0; i < 6; i++) await createV3(t.app, w.adminToken, p.id, `G_${i}`, `root-${i}`);
    await createV3(t.app, w.adminToken, p.id, "G_0", "in-app", { secretPath: "/app", tagIds: [tag.id] });
    await createV3(t.app, w.adminToken, p.id, "G_0", "in-staging", { environment: "staging" });
    await createV3(t.app, w.adminToken, p.id, "G_QUOTE'S", "quoted", { secretComment: "it's" });
    const get = (key: string, query: string) =>
      call(t.app, "GET", `/api/v3/secrets/raw/${encodeURIComponent(key)}?workspaceId=${p.id}&${query}`, {
        token: w.adminToken,
      });
    const asks: [string, string][] = [
      ["G_0", "environment=dev"],
      ["G_1", "environment=dev"],
      ["G_0", "environment=dev&secretPath=/app"],
      ["G_0", "environment=staging"],
      ["G_5", "environment=dev"],
      ["G_QUOTE'S", "environment=dev"],
      ["MISSING", "environment=dev"],
      ["G_1", "environment=dev&secretPath=/nowhere"],
      ["G_1", "environment=dev&secretPath=/app"],
      ["G_0", "environment=dev"],
    ];
    const alone = [];
    for (const [k, q] of asks) alone.push(comparable(await get(k, q)));
    const together = (await Promise.all(asks.map(([k, q]) => get(k, q)))).map(comparable);
    expect(together).toEqual(alone);
    // The answers themselves, so the comparison is not between two equally wrong runs.
    expect(together.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 404, 404, 404, 200]);
    expect(together.slice(0, 6).map((r) => r.json.secret.secretValue)).toEqual([
      "root-0",
      "root-1",
      "in-app",
      "in-staging",
      "root-5",
      "quoted",
    ]);
    expect(together[2]?.json.secret.tags).toEqual([expect.objectContaining({ id: tag.id, slug: "batched" })]);
    expect(together[6]?.json.message).toBe("Secret with name 'MISSING' not found");
    expect(together[7]?.json.message).toBe(
      "Folder with path '/nowhere' in environment with slug 'dev' not found",
    );
  });

  it("concurrent deletes commit together, each with its own answer and audit record", async () => {
    const names = Array.from({ length: 8 }, (_, i) => `D_${i}`);
    const made = new Map<string, string>();
    for (const n of names)
      made.set(n, (await createV3(t.app, w.adminToken, p.id, n, `value-${n}`)).id as string);
    const inApp = (await createV3(t.app, w.adminToken, p.id, "D_0", "app-value", { secretPath: "/app" })).id;
    const alice = await makeUser(t.app, w, "alice@example.com", p.id);
    await createV3(t.app, alice.token, p.id, "D_1", "alice-override", { type: "personal" });

    const body = (extra: Json = {}) => ({ projectId: p.id, environment: "dev", ...extra });
    const rs = await Promise.all([
      ...names.map((n) => del(n, body())),
      del("D_0", body({ secretPath: "/app" })),
      del("D_2", body()), // the same secret twice: one request deletes it, the other finds nothing
      del("NEVER_MADE", body()),
      del("D_3", body({ secretPath: "/nowhere" })),
    ]);
    expect(rs.map((r) => r.status).slice(0, 8)).toEqual(
      [200, 200, 200, 200, 200, 200, 200, 200].map((s, i) =>
        // D_2 was asked for twice in the same turn: whichever of the two ran first got the 200.
        i === 2 ? rs[2]?.status : s,
      ),
    );
    const d2 = [rs[2]?.status, rs[9]?.status].sort();
    expect(d2).toEqual([200, 404]);
    for (const [i, n] of names.entries()) {
      if (n === "D_2") continue;
      expect(rs[i]?.json.secret).toMatchObject({ id: made.get(n), secretKey: n, secretValue: `value-${n}` });
    }
    const d2Ok = rs[2]?.status === 200 ? rs[2] : rs[9];
    expect(d2Ok?.json.secret).toMatchObject({ id: made.get("D_2"), secretValue: "value-D_2" });
    expect(rs[8]?.json.secret).toMatchObject({ id: inApp, secretValue: "app-value" });
    expect(rs[10]).toMatchObject({ status: 404, json: { message: "Secret not found" } });
    expect(rs[11]?.status).toBe(404);
    expect(rs[11]?.json.message).toBe("Folder with path '/nowhere' in environment with slug 'dev' not found");

    // Everything asked for is gone, Alice's override of D_1 with its shared secret.
    for (const n of names) expect((await getV3(t.app, w.adminToken, p.id, n)).status).toBe(404);
    const aliceList = await ok(
      call(t.app, "GET", `/api/v4/secrets?projectId=${p.id}&environment=dev`, { token: alice.token }),
    );
    expect((aliceList.secrets as Json[]).filter((s) => s.secretKey === "D_1")).toEqual([]);

    // One audit record per deleted secret, naming it; none for the misses.
    const records = await rowsOf<{ resource: Json; at: string }>(
      sql`SELECT resource, created_at::text AS at FROM audit_logs WHERE event_type = 'delete-secret' AND project_id = ${p.id}`,
      t.services.db,
    );
    const named = records.map(
      (r) => `${r.resource.secretPath}:${r.resource.secretName}=${r.resource.secretId}`,
    );
    expect(named.sort()).toEqual([...names.map((n) => `/:${n}=${made.get(n)}`), `/app:D_0=${inApp}`].sort());
    // They were one statement: one transaction, one commit timestamp, not nine.
    expect(new Set(records.map((r) => r.at)).size).toBeLessThan(records.length);
  });
});
