import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Statement } from "../../src/features/secrets/prepared.js";
import {
  DELETE_PERSONAL,
  DELETE_SHARED,
  DELETE_SHARED_MANY,
} from "../../src/features/secrets/secrets-delete.js";
import { GET_PERSONAL, GET_SHARED, GET_SHARED_MANY } from "../../src/features/secrets/secrets-repo.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, makeProject, ok, type World } from "../helpers/fixtures.js";

/**
 * The prepared hot-path statements run with PostgreSQL's generic plan once cached (parameters unknown
 * at plan time). Such a plan once probed the (folder_id, key) index on `key` alone, reading every
 * folder's row of that name: correct, but its cost grew with the whole table. Each statement's generic
 * plan must reach `secrets` only through an index condition that binds the folder.
 */
const USER = "00000000-0000-4000-8000-000000000001";

describe("generic plans of the prepared secret statements", () => {
  let t: TestApp;
  let w: World;
  let projectId: string;
  let client: pg.Client | undefined;
  /** Runs statements one by one in ONE session (plan_cache_mode and PREPARE are per session). */
  let session: (text: string) => Promise<Record<string, unknown>[]>;

  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
    projectId = (await makeProject(t.app, w.adminToken, "Plans")).id as string;
    // The same 1,000 names in two environments: a key-only probe would meet both folders' rows.
    const secrets = Array.from({ length: 1000 }, (_, i) => ({ secretKey: `K_${i}`, secretValue: `v${i}` }));
    for (const environment of ["dev", "staging"]) {
      await ok(
        call(t.app, "POST", "/api/v4/secrets/batch", {
          token: w.adminToken,
          body: { projectId, environment, secretPath: "/", secrets },
        }),
      );
    }
    if (t.dbUrl) {
      const c = new pg.Client({ connectionString: t.dbUrl });
      await c.connect();
      client = c;
      session = async (text) => (await c.query(text)).rows;
    } else {
      session = (text) => t.services.dbh.simple(text);
    }
    await session("SET plan_cache_mode = force_generic_plan");
  });
  afterAll(async () => {
    await session("RESET plan_cache_mode");
    await client?.end();
    await t.close();
  });

  const quote = (v: string) => `'${v.replaceAll("'", "''")}'`;
  /** $5..$11 of the delete statements: the audit row (org, actor type, id, name, resource, ip, agent). */
  const audit = [USER, "identity", USER, "x", "{}", "127.0.0.1", "agent"];

  async function genericPlan(st: Statement, params: string[]): Promise<string[]> {
    const name = `plan_check_${st.name}`;
    await session(`PREPARE ${name}(${st.types.join(", ")}) AS ${st.text}`);
    try {
      // EXPLAIN without ANALYZE: the DELETE statements are planned, never run.
      const rows = await session(`EXPLAIN (COSTS OFF) EXECUTE ${name}(${params.map(quote).join(", ")})`);
      return rows.map((r) => String(r["QUERY PLAN"]));
    } finally {
      await session(`DEALLOCATE ${name}`);
    }
  }

  /** Each scan of `secrets` names its index, and the condition that follows it binds folder_id. */
  function expectFolderBoundScans(plan: string[]) {
    const scans = plan
      .map((line, i) => ({ line, i }))
      .filter(({ line }) => /Scan\b.* on secrets s\b/.test(line));
    expect(scans.length).toBeGreaterThan(0);
    expect(plan.join("\n")).not.toMatch(/Seq Scan on (secrets|folders)\b/);
    for (const { line, i } of scans) {
      expect(line, plan.join("\n")).toMatch(/Index (Only )?Scan using \w+ on secrets s/);
      expect(plan[i + 1] ?? "", plan.join("\n")).toMatch(
        /Index Cond: \(\(folder_id = .+\) AND \(key = (\$4|\w+\.k)\)/,
      );
    }
  }

  async function expectAllFolderBound() {
    const get = [projectId, "dev", "/", "K_7"];
    expectFolderBoundScans(await genericPlan(GET_SHARED, get));
    expectFolderBoundScans(await genericPlan(GET_PERSONAL, [...get, USER]));
    const del = [projectId, "dev", "/", "K_8", ...audit];
    expectFolderBoundScans(await genericPlan(DELETE_SHARED, del));
    expectFolderBoundScans(await genericPlan(DELETE_PERSONAL, [...del, USER]));
    // The batched statements: several requests' lookups as one JSON parameter.
    const lookups = ["K_7", "K_9"].map((k, i) => ({ i, p: projectId, e: "dev", f: "/", k }));
    expectFolderBoundScans(await genericPlan(GET_SHARED_MANY, [JSON.stringify(lookups)]));
    const deletes = lookups.map((l) => ({
      ...l,
      o: USER,
      at: "identity",
      ai: USER,
      an: "x",
      r: {},
      ip: "",
      ua: "",
    }));
    expectFolderBoundScans(await genericPlan(DELETE_SHARED_MANY, [JSON.stringify(deletes)]));
  }

  // The planner's choice depends on the statistics: each variant picked the key-only probe under one
  // of these two states in the benchmark's database.
  it("bind the folder with the statistics as loaded", async () => {
    await expectAllFolderBound();
  });

  it("bind the folder after ANALYZE", async () => {
    await session("ANALYZE secrets");
    await expectAllFolderBound();
    // Planned only: both environments still hold the deleted statements' name.
    const rows = await session(`SELECT count(*)::int AS n FROM secrets WHERE key = 'K_8'`);
    expect(rows[0]?.n).toBe(2);
  });
});
